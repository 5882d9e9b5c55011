"""Moved to agenthop.harness.benchmarks.agenthop (tools, sections, prompts); the modules here are aliases."""

from agenthop.harness.benchmarks.agenthop.sections import alias, alias_to_index, normalize_header, resolve_section
from agenthop.harness.benchmarks.agenthop.tools import TOOL_COSTS, TOOL_NAMES, Sandbox, ToolOutcome, parse_answer_letter

__all__ = [
    "TOOL_COSTS",
    "TOOL_NAMES",
    "Sandbox",
    "ToolOutcome",
    "alias",
    "alias_to_index",
    "normalize_header",
    "parse_answer_letter",
    "resolve_section",
]
