"""The seven AgentHop tools over one item's neighbourhood (the reference harness).

``Sandbox.execute(name, args)`` returns a :class:`ToolOutcome`: the agent-visible text (WITHOUT the
status footer, which the loop appends), the points charged, a ``status`` (docs/formats.md#trajectory-store) and the fields the
trajectory store records per call. Texts, costs and failure charging follow the reference exactly:

* unknown tool name → ``Unknown tool: {name}``, cost 0, status ``unknown_tool``;
* a missing/invalid argument → ``Error calling {tool}: Missing or invalid parameter — {exc}``, the tool's
  normal cost, status ``invalid_args`` (malformed JSON arrives as ``{"_raw": ...}`` and ends here;
  valid JSON that is not an object arrives as is and fails with Python's subscript error text);
* failed look-ups (unknown paper, no full text, unresolved section) still cost the normal amount,
  so a failed ``read_section`` costs 5.

Budget checks, disabled tools and ``not_executed`` are the loop's business (``harness/loop.py``).

Speed: a sandbox is built per attempt and costs nothing to construct; the per-item search index
(token sets of every node's "title abstract") and per-paper header forms are computed on first use and
cached module-wide (keyed by object identity, with the object kept alive in the cache), so a panel
that revisits the same item under many models tokenises it once.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from typing import Any

from .model import Graph, Item, Node, Paper
from .sections import alias, available_sections, display_header, resolve_section

#: Budget points per tool (the reference harness). Charged whenever the tool runs, failures included.
TOOL_COSTS: dict[str, int] = {
    "get_paper_info": 1,
    "get_references": 1,
    "search_papers": 1,
    "list_sections": 1,
    "read_section": 5,
    "think": 0,
    "submit_answer": 0,
}
TOOL_NAMES: tuple[str, ...] = tuple(TOOL_COSTS)
NAVIGATION_TOOLS: frozenset[str] = frozenset(
    {"get_paper_info", "get_references", "search_papers", "list_sections"}
)

# Statuses (docs/formats.md#trajectory-store; schemas/trajectory.py TOOL_CALL_STATUSES).
OK = "ok"
REJECTED_BUDGET = "rejected_budget"
REJECTED_DISABLED = "rejected_disabled"
UNKNOWN_PAPER = "unknown_paper"
NO_FULL_TEXT = "no_full_text"
SECTION_NOT_FOUND = "section_not_found"
INVALID_ARGS = "invalid_args"
UNKNOWN_TOOL = "unknown_tool"
NOT_EXECUTED = "not_executed"
#: statuses counted in ``trajectories.tool_errors``
ERROR_STATUSES: frozenset[str] = frozenset({INVALID_ARGS, UNKNOWN_TOOL})

_WORD_RE = re.compile(r"\w+")
_LETTER_RE = re.compile(r"\s*\(?([ABCD])\)?\s*[.:)]?\s*", re.IGNORECASE)
_PAPER_TOOLS = frozenset({"get_paper_info", "get_references", "list_sections", "read_section"})


@dataclass(slots=True)
class ToolOutcome:
    text: str  # agent-visible result, without the status footer
    cost: int  # points charged
    status: str
    paper_id: str | None = None
    section_query: str | None = None
    resolved_header: str | None = None
    resolved_section_index: int | None = None
    search_query: str | None = None
    answer: str | None = None  # submit_answer: the raw answer argument
    predicted_index: int | None = None  # submit_answer: 0-3, or -1 when unparseable/missing
    reasoning: str | None = None  # submit_answer: the reasoning argument


def parse_answer_letter(answer: Any) -> int:
    """Lenient letter parser (the reference harness): optional white space, optional parentheses around one
    letter A-D (any case), optionally one trailing ``.``, ``:`` or ``)``. Anything else gives -1."""
    if not isinstance(answer, str):
        return -1
    m = _LETTER_RE.fullmatch(answer)
    if m is None:
        return -1
    return ord(m.group(1).upper()) - 65


def _as_text(value: Any) -> str | None:
    """A raw argument as a string column value: strings as-is, other JSON values serialised."""
    if value is None or isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def call_fields(name: str, args: dict[str, Any]) -> tuple[str | None, str | None, str | None, str | None]:
    """(paper_id, section_query, search_query, answer) as emitted, for any call of ``name``.

    Used for calls that did not run (rejected, not_executed) and for invalid-argument calls, so the
    store still shows what the agent asked for. Non-string values are recorded as None, except the
    answer, which is recorded raw (JSON-serialised when not a string).
    """
    if not isinstance(args, dict):
        return None, None, None, None
    if name in _PAPER_TOOLS:
        return (
            _str_or_none(args.get("paper_id")),
            _str_or_none(args.get("section")) if name == "read_section" else None,
            None,
            None,
        )
    if name == "search_papers":
        return None, None, _str_or_none(args.get("query")), None
    if name == "submit_answer":
        return None, None, None, _as_text(args.get("answer"))
    return None, None, None, None


def short_authors(authors: tuple[str, ...]) -> str:
    """One name; "A and B"; "A et al." for three or more; "Unknown" when there are none."""
    names = [a for a in authors if a]
    if not names:
        return "Unknown"
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


def _full_authors(authors: tuple[str, ...]) -> str:
    names = [a for a in authors if a]
    return ", ".join(names) if names else "Unknown"


# ---------------------------------------------------------------------------------------------
# Per-item caches, module-wide: the search index (distinct lower-case \w+ tokens of "title abstract"
# per node, in graph order) and rendered get_references texts. Keyed by the identity of the graph and
# of the paper pool (full-text flags depend on it); entries hold both objects, so ids stay valid.
# Token sets are shared across graphs by paper id (texts compared), so a paper that appears in many
# neighbourhoods is tokenised once.

_TOKENS: dict[str, tuple[str, str, frozenset[str]]] = {}
_TOKENS_MAX = 500_000


def _node_tokens(node: Node) -> frozenset[str]:
    # Keyed by paper id (short, cheap to hash); the texts are compared, so a paper whose metadata
    # differs between neighbourhoods is still tokenised from its own text.
    entry = _TOKENS.get(node.paper_id)
    if entry is not None and entry[1] == node.abstract and entry[0] == node.title:
        return entry[2]
    if len(_TOKENS) >= _TOKENS_MAX:
        _TOKENS.clear()
    text = f"{node.title} {node.abstract}".lower()
    toks = frozenset(map(sys.intern, _WORD_RE.findall(text)))
    _TOKENS[node.paper_id] = (node.title, node.abstract, toks)
    return toks


class _ItemCache:
    __slots__ = ("graph", "papers", "nodes", "token_sets", "references")

    def __init__(self, graph: Graph, papers: dict[str, Paper]) -> None:
        self.graph = graph
        self.papers = papers
        self.nodes: list[Node] | None = None
        self.token_sets: list[frozenset[str]] | None = None
        self.references: dict[str, str] = {}

    def search_index(self) -> tuple[list[Node], list[frozenset[str]]]:
        if self.token_sets is None:
            self.nodes = list(self.graph.nodes.values())
            self.token_sets = [_node_tokens(n) for n in self.nodes]
        return self.nodes, self.token_sets  # type: ignore[return-value]


_ITEMS: dict[tuple[int, int], _ItemCache] = {}
_ITEMS_MAX = 4096


def _item_cache(graph: Graph, papers: dict[str, Paper]) -> _ItemCache:
    key = (id(graph), id(papers))
    entry = _ITEMS.get(key)
    if entry is None or entry.graph is not graph or entry.papers is not papers:
        if len(_ITEMS) >= _ITEMS_MAX:
            del _ITEMS[next(iter(_ITEMS))]
        entry = _ITEMS[key] = _ItemCache(graph, papers)
    return entry


def clear_caches() -> None:
    """Forget the search and header caches (tests; long-lived processes switching releases)."""
    from .sections import clear_cache

    _TOKENS.clear()
    _ITEMS.clear()
    clear_cache()


# ---------------------------------------------------------------------------------------------


def _not_found(paper_id: Any) -> str:
    return f"Paper '{paper_id}' not found in the available paper pool."


class Sandbox:
    """The tools of one attempt on one item. ``papers`` is the paper pool keyed by arXiv id; a node
    has full text iff its ``arxiv_id`` is non-empty and in the pool (the reference harness)."""

    __slots__ = ("item", "graph", "nodes", "edges", "papers", "disabled_tools", "_cache")

    def __init__(
        self,
        item: Item,
        graph: Graph,
        papers: dict[str, Paper],
        disabled_tools: frozenset[str] | set[str] | tuple[str, ...] = frozenset(),
    ) -> None:
        self.item = item
        self.graph = graph
        self.nodes = graph.nodes
        self.edges = graph.edges
        self.papers = papers
        self.disabled_tools = frozenset(disabled_tools)
        self._cache: _ItemCache | None = None

    def _item_cache(self) -> _ItemCache:
        if self._cache is None:
            self._cache = _item_cache(self.graph, self.papers)
        return self._cache

    # -- helpers -----------------------------------------------------------------------------

    def content(self, paper_id: Any) -> Paper | None:
        """The full text of a node, or None (unknown node, no arXiv id, or not in the pool)."""
        node = self.nodes.get(paper_id)
        if node is None or not node.arxiv_id:
            return None
        return self.papers.get(node.arxiv_id)

    def has_full_text(self, paper_id: str) -> bool:
        return self.content(paper_id) is not None

    def _node_has_text(self, node: Node | None) -> bool:
        return node is not None and bool(node.arxiv_id) and node.arxiv_id in self.papers

    # -- dispatcher --------------------------------------------------------------------------

    def execute(self, name: str, args: Any) -> ToolOutcome:
        """Run one tool call. Never raises for bad input; see the module docstring."""
        cost = TOOL_COSTS.get(name)
        if cost is None:
            return ToolOutcome(f"Unknown tool: {name}", 0, UNKNOWN_TOOL)
        # Arguments that are valid JSON but not an object (``["id"]``, ``"id"``, ``3``) reach the
        # handler as they are, so the error text is Python's own for subscripting them, as in the
        # reference (``list indices must be integers or slices, not str``).
        try:
            return _HANDLERS[name](self, args)
        except (KeyError, TypeError, AttributeError) as exc:
            paper_id, section_query, search_query, answer = call_fields(name, args)
            out = ToolOutcome(
                f"Error calling {name}: Missing or invalid parameter \u2014 {exc}",
                cost,
                INVALID_ARGS,
                paper_id=paper_id,
                section_query=section_query,
                search_query=search_query,
                answer=answer,
            )
            if name == "submit_answer":
                out.predicted_index = -1
                out.reasoning = _as_text(args.get("reasoning")) if isinstance(args, dict) else None
            return out

    # -- tools -------------------------------------------------------------------------------

    def get_paper_info(self, args: dict[str, Any]) -> ToolOutcome:
        pid = args["paper_id"]
        node = self.nodes.get(pid)
        if node is None:
            return ToolOutcome(_not_found(pid), 1, UNKNOWN_PAPER, paper_id=_str_or_none(pid))
        text = (
            f"Title: {node.title or 'Unknown'}\n"
            f"Authors: {_full_authors(node.authors)}\n"
            f"Year: {node.year}\n"  # a null year prints "None", as the reference's code does
            f"Abstract: {node.abstract or '(not available)'}\n"
            f"Full text available: {'Yes' if self._node_has_text(node) else 'No'}"
        )
        return ToolOutcome(text, 1, OK, paper_id=pid)

    def get_references(self, args: dict[str, Any]) -> ToolOutcome:
        pid = args["paper_id"]
        if pid not in self.nodes:
            return ToolOutcome(_not_found(pid), 1, UNKNOWN_PAPER, paper_id=_str_or_none(pid))
        cache = self._item_cache()
        cached = cache.references.get(pid)
        if cached is not None:
            return ToolOutcome(cached, 1, OK, paper_id=pid)
        refs = self.edges.get(pid)
        if not refs:
            return ToolOutcome(
                "No references found for this paper (or references not available in pool).",
                1,
                OK,
                paper_id=pid,
            )
        nodes = self.nodes
        lines = [f"References for paper '{pid}' ({len(refs)} papers):\n"]
        append = lines.append
        for i, ref in enumerate(refs, 1):
            node = nodes.get(ref)
            if node is None:
                title, authors, year = "Unknown", "Unknown", "?"
            else:
                title = node.title or "Unknown"
                authors = short_authors(node.authors)
                year = node.year  # a null year prints "None"; "?" only for a node missing from the graph
            append(
                f"  [{i}] {ref}\n"
                f"      Title: {title}\n"
                f"      Authors: {authors} ({year})\n"
                f"      Full text: {'Available' if self._node_has_text(node) else 'Not available'}"
            )
        text = cache.references[pid] = "\n".join(lines)
        return ToolOutcome(text, 1, OK, paper_id=pid)

    def search_papers(self, args: dict[str, Any]) -> ToolOutcome:
        query = args["query"]
        top_k = args.get("top_k", 5)
        top_k = min(max(1, top_k), 10)  # TypeError for non-numbers, as in the reference
        tokens = set(_WORD_RE.findall(query.lower()))
        if not tokens:
            return ToolOutcome(
                "Empty query. Please provide search keywords.", 1, INVALID_ARGS, search_query=query
            )
        nodes, token_sets = self._item_cache().search_index()
        disjoint = tokens.isdisjoint
        hits = [i for i, s in enumerate(token_sets) if not disjoint(s)]  # score 0 is excluded
        scores = {i: len(tokens & token_sets[i]) for i in hits}
        # sorted() is stable also with reverse=True: ties keep graph-node insertion order.
        ranked = sorted(hits, key=scores.__getitem__, reverse=True)
        top = ranked[:top_k]  # a float top_k raises TypeError here, as in the reference
        if not top:
            return ToolOutcome(f"No papers found matching '{query}'.", 1, OK, search_query=query)
        lines = [f"Search results for '{query}' ({len(top)} matches):\n"]
        append = lines.append
        for n, i in enumerate(top, 1):
            node = nodes[i]
            abstract = node.abstract or "(no abstract)"
            if len(abstract) > 300:
                abstract = abstract[:300] + "..."
            append(
                f"  [{n}] {node.paper_id}\n"
                f"      Title: {node.title}\n"
                f"      Authors: {short_authors(node.authors)} ({node.year})\n"
                f"      Abstract: {abstract}\n"
                f"      Full text: {'Available' if self._node_has_text(node) else 'Not available'}"
            )
        return ToolOutcome("\n".join(lines), 1, OK, search_query=query)

    def list_sections(self, args: dict[str, Any]) -> ToolOutcome:
        pid = args["paper_id"]
        paper = self.content(pid)
        if paper is None:
            if pid not in self.nodes:
                return ToolOutcome(_not_found(pid), 1, UNKNOWN_PAPER, paper_id=_str_or_none(pid))
            return ToolOutcome(
                f"Full text not available for paper '{pid}'. "
                "Only abstract is available via get_paper_info.",
                1,
                NO_FULL_TEXT,
                paper_id=pid,
            )
        sections = paper.sections
        if not sections:
            return ToolOutcome(f"No sections found for paper '{pid}'.", 1, NO_FULL_TEXT, paper_id=pid)
        lines = [f"Sections for paper '{pid}' ({len(sections)} sections):\n"]
        lines.extend(
            f"  ({alias(i)}) {display_header(i, s.header)} ({len(s.text)} chars)" for i, s in enumerate(sections)
        )
        return ToolOutcome("\n".join(lines), 1, OK, paper_id=pid)

    def read_section(self, args: dict[str, Any]) -> ToolOutcome:
        pid = args["paper_id"]
        section = args["section"]
        paper = self.content(pid)
        sq = _str_or_none(section)
        if paper is None:
            if pid not in self.nodes:
                return ToolOutcome(
                    _not_found(pid), 5, UNKNOWN_PAPER, paper_id=_str_or_none(pid), section_query=sq
                )
            return ToolOutcome(
                f"Full text not available for paper '{pid}'.",
                5,
                NO_FULL_TEXT,
                paper_id=pid,
                section_query=sq,
            )
        sections = paper.sections
        if not sections:
            return ToolOutcome(
                f"No sections found for paper '{pid}'.", 5, NO_FULL_TEXT, paper_id=pid, section_query=sq
            )
        # The reference strips ``section or ""``: None/"" resolve to nothing, a non-string raises
        # AttributeError (reported as invalid_args here; the reference crashed).
        idx = resolve_section(section or "", paper)
        if idx is None:
            return ToolOutcome(
                f"Section '{section}' not found in paper '{pid}'.\n"
                f"Available sections: {available_sections(paper)}",
                5,
                SECTION_NOT_FOUND,
                paper_id=pid,
                section_query=sq,
            )
        sec = sections[idx]
        header = display_header(idx, sec.header)
        return ToolOutcome(
            f"=== {header} ===\n\n{sec.text}",
            5,
            OK,
            paper_id=pid,
            section_query=sq,
            resolved_header=header,
            resolved_section_index=idx,
        )

    def think(self, args: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome("Noted.", 0, OK)

    def submit_answer(self, args: dict[str, Any]) -> ToolOutcome:
        answer = args["answer"]
        return ToolOutcome(
            f"Answer submitted: {answer}",
            0,
            OK,
            answer=_as_text(answer),
            predicted_index=parse_answer_letter(answer),
            reasoning=_as_text(args.get("reasoning")),
        )


_HANDLERS = {
    "get_paper_info": Sandbox.get_paper_info,
    "get_references": Sandbox.get_references,
    "search_papers": Sandbox.search_papers,
    "list_sections": Sandbox.list_sections,
    "read_section": Sandbox.read_section,
    "think": Sandbox.think,
    "submit_answer": Sandbox.submit_answer,
}
