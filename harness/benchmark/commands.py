"""Moved to agenthop.harness.benchmarks.agenthop.commands (AgentHop's own folder); this name keeps older imports working."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("agenthop.harness.benchmarks.agenthop.commands")
