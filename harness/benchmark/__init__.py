"""Moved to agenthop.harness.benchmarks.agenthop (AgentHop's own folder); the modules here are aliases."""
