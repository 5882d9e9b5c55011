"""The three SciExplore paradigms: the tools each declares and its caps (docs/sciexplore.md#paradigms).

=================  ======  =====  ==========  =======  ===========  ============
paradigm           tools   turns  tool calls  results  tokens/task  wall s/task
=================  ======  =====  ==========  =======  ===========  ============
``foundation``     none    1      0           -        32,000       300
``search``         four    20     30          5        400,000      900
``deep_research``  four    80     150         10       2,000,000    3,600
=================  ======  =====  ==========  =======  ===========  ============

``turns`` counts model responses; ``tool calls`` every call, searches and ``open_page`` alike;
``results`` is the most hits one search returns; ``tokens/task`` prompt plus completion tokens
over the task's turns. A task that reaches a cap ends and its last text, if any, is its answer.
``deep_research`` is ``search`` with larger caps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import PARADIGMS
from .search_tools import OPEN_PAGE, TOOL_NAMES


@dataclass(frozen=True, slots=True)
class Caps:
    max_turns: int
    max_tool_calls: int
    max_results: int
    max_tokens: int
    time_limit_s: float


CAPS: dict[str, Caps] = {
    "foundation": Caps(max_turns=1, max_tool_calls=0, max_results=0, max_tokens=32_000, time_limit_s=300),
    "search": Caps(max_turns=20, max_tool_calls=30, max_results=5, max_tokens=400_000, time_limit_s=900),
    "deep_research": Caps(max_turns=80, max_tool_calls=150, max_results=10, max_tokens=2_000_000,
                          time_limit_s=3600),
}

_QUERY = {"type": "string", "description": "keywords to search for"}
TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    "web_search": {
        "name": "web_search",
        "description": "Search the web (pages, papers and database records). Returns ranked hits with id, "
                       "title, URL and a snippet.",
        "parameters": {"type": "object", "properties": {"query": _QUERY}, "required": ["query"],
                       "additionalProperties": False},
    },
    "scholar_search": {
        "name": "scholar_search",
        "description": "Search scholarly papers. Returns ranked hits with id, title, year, URL and a snippet.",
        "parameters": {"type": "object", "properties": {"query": _QUERY}, "required": ["query"],
                       "additionalProperties": False},
    },
    "db_search": {
        "name": "db_search",
        "description": "Search records of scientific databases (e.g. UniProt, PubChem). Optionally restrict "
                       "to one database by name.",
        "parameters": {"type": "object",
                       "properties": {"query": _QUERY,
                                      "database": {"type": "string", "description": "database name, optional"}},
                       "required": ["query"], "additionalProperties": False},
    },
    OPEN_PAGE: {
        "name": OPEN_PAGE,
        "description": "Open a document by the id (or URL) a search returned and read its text "
                       "(long texts are truncated).",
        "parameters": {"type": "object",
                       "properties": {"id": {"type": "string", "description": "document id, e.g. doc_00042"}},
                       "required": ["id"], "additionalProperties": False},
    },
}


def check_paradigm(paradigm: str) -> str:
    if paradigm not in PARADIGMS:
        raise ValueError(f"unknown paradigm {paradigm!r}; choose one of {', '.join(PARADIGMS)}")
    return paradigm


def tool_schemas(paradigm: str) -> list[dict[str, Any]]:
    """The function-calling declarations (name, description, JSON-schema parameters) of a paradigm."""
    check_paradigm(paradigm)
    return [] if CAPS[paradigm].max_tool_calls == 0 else [dict(TOOL_SCHEMAS[n]) for n in TOOL_NAMES]


def caps(paradigm: str) -> Caps:
    return CAPS[check_paradigm(paradigm)]
