"""Moved to agenthop.harness.benchmarks.agenthop.policies; the modules here are aliases."""
