"""Reference-compatible sandbox: the seven tools, section resolution and agent-visible texts."""

from .sections import alias, alias_to_index, normalize_header, resolve_section
from .tools import TOOL_COSTS, TOOL_NAMES, Sandbox, ToolOutcome, parse_answer_letter

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
