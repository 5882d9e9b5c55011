"""Moved to schemas/agenthop.py (AgentHop's own tables); this name keeps older imports working."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("agenthop.schemas.agenthop")
