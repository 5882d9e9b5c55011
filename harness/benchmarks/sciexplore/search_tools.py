"""Offline search tools over a release's corpus (docs/sciexplore.md#search-tools).

Four tools over ``corpus/documents.jsonl``, each searching its own kinds of document:

==================  =====================================================================
``web_search``      every document: web pages, papers and database records
``scholar_search``  papers only
``db_search``       database records only; an optional ``database`` argument keeps one database
``open_page``       one document by id (or URL): its text, cut to ``OPEN_PAGE_CHARS`` characters
==================  =====================================================================

Ranking is BM25 (Okapi, the ``bm25s`` library) over ``title + text``, lower-cased ``\\w+`` tokens
without English stop words; documents that share no query term are left out; ties keep corpus
order. A search returns at most ``max_results`` hits (the paradigm's cap), each with its id,
title, a snippet and its URL.
A query is searched and shown on its first ``QUERY_CHARS`` characters (ids and tool names are
shown back as cut too).

``CorpusTools.call(name, args)`` returns a :class:`ToolResult`: the text the agent sees and a
:class:`CallRecord` with what a trajectory's tool-call row stores (tool, query or target,
status, result size, error type) and what a responses file's trace line holds. Pure and
deterministic: the same corpus, call and cap give the same text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from .release import Document, Release

SEARCH_TOOL_KINDS: dict[str, tuple[str, ...]] = {
    "web_search": ("page", "paper", "record"),
    "scholar_search": ("paper",),
    "db_search": ("record",),
}
OPEN_PAGE = "open_page"
TOOL_NAMES: tuple[str, ...] = (*SEARCH_TOOL_KINDS, OPEN_PAGE)
#: characters of a document's text that ``open_page`` returns; longer texts end with a note
OPEN_PAGE_CHARS = 6000
#: characters of a document's text shown as a search hit's snippet
SNIPPET_CHARS = 240
DEFAULT_MAX_RESULTS = 5
#: characters of a query that are searched and shown in the result (and of an id or tool name shown
#: back); a longer one is cut with a note, the call's row keeps it whole
QUERY_CHARS = 1000

# statuses (the trajectory store's vocabulary)
OK = "ok"
INVALID_ARGS = "invalid_args"
UNKNOWN_TOOL = "unknown_tool"
TOOL_ERROR = "tool_error"

_TOKEN_RE = re.compile(r"\w+")
_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the their this to was were which with"
    " what who whom how".split()
)


def tokenize(text: str) -> list[str]:
    return [t for t in _TOKEN_RE.findall(text.lower()) if t not in _STOPWORDS]


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    title: str
    snippet: str
    url: str
    kind: str
    database: str | None
    year: int | None
    score: float


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One tool call as the run records it."""

    tool: str
    args: dict[str, Any]
    status: str
    result_chars: int
    query: str | None = None
    target: str | None = None
    error_type: str | None = None

    @property
    def is_search(self) -> bool:
        return self.tool in SEARCH_TOOL_KINDS

    def trace_entry(self) -> dict[str, Any]:
        """The call as a line of a responses file's ``trace``."""
        out: dict[str, Any] = {"tool": self.tool}
        if self.query is not None:
            out["query"] = self.query
        if self.target is not None:
            out["target"] = self.target
        out["result_chars"] = self.result_chars
        return out

    def row_fields(self) -> dict[str, Any]:
        """The call's columns of a trajectory's ``tool_calls`` row (the ids, turn and seq are the loop's)."""
        return {"tool": self.tool, "args_json": json.dumps(self.args, ensure_ascii=False, sort_keys=True),
                "paper_id": self.target, "search_query": self.query, "cost": 0, "status": self.status,
                "output_chars": self.result_chars, "error_type": self.error_type}


@dataclass(frozen=True, slots=True)
class ToolResult:
    text: str
    record: CallRecord
    hits: tuple[Hit, ...] = ()


class _Index:
    """BM25 over the documents of some kinds."""

    def __init__(self, docs: list[Document]) -> None:
        self.docs = docs
        self.bm25: Any = None
        if docs:
            import bm25s  # imported by the first index (about 2 s): commands that do not search never pay it

            self.bm25 = bm25s.BM25()
            self.bm25.index([tokenize(f"{d.title} {d.text}") or [""] for d in docs], show_progress=False)

    def search(self, query: str, k: int, database: str | None = None) -> list[tuple[Document, float]]:
        terms = tokenize(query)
        if self.bm25 is None or not terms:
            return []
        scores = np.asarray(self.bm25.get_scores(terms), dtype=float)
        order = np.argsort(-scores, kind="stable")
        out: list[tuple[Document, float]] = []
        for i in order:
            if scores[i] <= 0 or len(out) >= k:
                break
            d = self.docs[int(i)]
            if database is None or (d.database or "").lower() == database.lower():
                out.append((d, float(scores[i])))
        return out


def shown(text: str, limit: int = QUERY_CHARS) -> str:
    """A query, id or name as a result shows it: cut to ``limit`` characters with a note."""
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit:,} characters more)"


def snippet(text: str, n: int = SNIPPET_CHARS) -> str:
    return text if len(text) <= n else text[: n - 3].rstrip() + "..."


def format_hits(tool: str, query: str, hits: list[Hit]) -> str:
    if not hits:
        return f"{tool}: no results for '{query}'."
    lines = [f"{tool}: {len(hits)} result(s) for '{query}':", ""]
    for i, h in enumerate(hits, 1):
        meta = ", ".join(x for x in (h.kind, h.database, str(h.year) if h.year else None) if x)
        lines += [f"[{i}] {h.id} ({meta})", f"    Title: {h.title}", f"    URL: {h.url}",
                  f"    Snippet: {h.snippet}", ""]
    lines.append("Use open_page with an id to read a document.")
    return "\n".join(lines)


_HIT_RE = re.compile(r"^\[\d+\] (\S+) \(([^)\n]*)\)\n    Title: ([^\n]*)\n    URL: ([^\n]*)\n    Snippet: (.*?)"
                     r"(?=\n\n\[\d+\] |\n\nUse open_page|\Z)", re.MULTILINE | re.DOTALL)


def parse_hits(text: str) -> tuple[Hit, ...]:
    """The hits of a search result text (:func:`format_hits`), read back; scores are not shown (0)."""
    out = []
    for m in _HIT_RE.finditer(text):
        meta = [x.strip() for x in m.group(2).split(",") if x.strip()]
        kind = meta[0] if meta else ""
        year = int(meta[-1]) if len(meta) > 1 and meta[-1].isdigit() else None
        database = meta[1] if len(meta) > 2 or (len(meta) == 2 and year is None) else None
        out.append(Hit(m.group(1), m.group(3), m.group(5), m.group(4), kind, database, year, 0.0))
    return tuple(out)


def page_text(doc: Document, limit: int = OPEN_PAGE_CHARS) -> str:
    head = f"{doc.id}: {doc.title}\nURL: {doc.url}\n"
    if doc.database:
        head += f"Database: {doc.database}\n"
    if doc.year:
        head += f"Year: {doc.year}\n"
    body = doc.text
    if len(body) > limit:
        body = body[:limit] + f"\n[truncated: {limit} of {len(doc.text)} characters shown]"
    return head + "\n" + body


class CorpusTools:
    """The four offline tools over one release's corpus; indexes are built once per instance."""

    def __init__(self, documents: list[Document], max_results: int = DEFAULT_MAX_RESULTS,
                 open_page_chars: int = OPEN_PAGE_CHARS) -> None:
        if max_results < 1:
            raise ValueError("max_results must be at least 1")
        self.max_results = max_results
        self.open_page_chars = open_page_chars
        self._by_id = {d.id: d for d in documents}
        self._by_url = {d.url: d for d in documents}
        self._indexes = {tool: _Index([d for d in documents if d.kind in kinds])
                         for tool, kinds in SEARCH_TOOL_KINDS.items()}

    @classmethod
    def for_release(cls, release: Release, **kw: Any) -> CorpusTools:
        return cls(release.documents, **kw)

    def document(self, ref: str) -> Document | None:
        return self._by_id.get(ref) or self._by_url.get(ref)

    def call(self, name: str, args: Any) -> ToolResult:
        if name not in TOOL_NAMES:
            return _fail(name, args, UNKNOWN_TOOL, f"Unknown tool: {shown(name)}. Tools: {', '.join(TOOL_NAMES)}.")
        if not isinstance(args, dict):
            return _fail(name, args, INVALID_ARGS, f"Error calling {name}: arguments must be a JSON object.")
        if name == OPEN_PAGE:
            return self.open_page(args)
        return self.search(name, args)

    def search(self, tool: str, args: dict[str, Any]) -> ToolResult:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return _fail(tool, args, INVALID_ARGS, f"Error calling {tool}: 'query' must be a non-empty string.")
        database = args.get("database") if tool == "db_search" else None
        if database is not None and not isinstance(database, str):
            return _fail(tool, args, INVALID_ARGS, f"Error calling {tool}: 'database' must be a string.",
                         query=query)
        hits = [Hit(d.id, d.title, snippet(d.text), d.url, d.kind, d.database, d.year, s)
                for d, s in self._indexes[tool].search(query[:QUERY_CHARS], self.max_results, database)]
        text = format_hits(tool, shown(query), hits)
        return ToolResult(text, CallRecord(tool, args, OK, len(text), query=query), tuple(hits))

    def open_page(self, args: dict[str, Any]) -> ToolResult:
        target = args.get("id")
        if not isinstance(target, str) or not target.strip():
            return _fail(OPEN_PAGE, args, INVALID_ARGS, "Error calling open_page: 'id' must be a document id or URL.")
        doc = self.document(target.strip())
        if doc is None:
            text = f"open_page: no document '{shown(target)}' in the corpus."
            return ToolResult(text, CallRecord(OPEN_PAGE, args, TOOL_ERROR, len(text), target=target,
                                               error_type="not_found"))
        text = page_text(doc, self.open_page_chars)
        return ToolResult(text, CallRecord(OPEN_PAGE, args, OK, len(text), target=doc.id))


def _fail(tool: str, args: Any, status: str, text: str, query: str | None = None) -> ToolResult:
    recorded = args if isinstance(args, dict) else {"_raw": args}
    return ToolResult(text, CallRecord(tool, recorded, status, len(text), query=query))
