"""`agenthop-report search`: a search's result as a table, CSV, JSON or an HTML page (docs/search.md).

The search itself is ingest/transcripts/search.py; this module only presents its result. The HTML
page lists the summary per run and every match with its snippet (the match marked), each linking to
its item's page (the shared item pages: the runs that matched the item, up to six, with their
transcripts) in the page's folder.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from markupsafe import Markup, escape

from agenthop.ingest.transcripts.search import MATCH_KEYS, SUMMARY_KEYS, Match, SearchResult, TranscriptQuery

from .values import csv_document, spreadsheet_safe
from .warehouse import Warehouse

FORMATS: tuple[str, ...] = ("table", "json", "csv", "html")


def as_json(result: SearchResult) -> str:
    return json.dumps(result.as_json(), ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def as_csv(result: SearchResult) -> str:
    """One row per listed match (the contract's match keys); the summary is in the other formats."""
    rows: list[list[Any]] = [list(MATCH_KEYS)]
    for m in result.matches:
        d = m.as_json()
        rows.append([_csv_cell(d[k]) for k in MATCH_KEYS])
    return csv_document(rows)


def _csv_cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, (int, float)):
        return v
    return spreadsheet_safe(str(v))


def _one_line(text: str) -> str:
    return text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", " ")


def as_table(result: SearchResult) -> str:
    """Aligned text: the summary per run, then the matches (the match in [brackets])."""
    lines = [f"{result.n_matches} match{'es' if result.n_matches != 1 else ''}"
             + (f", first {len(result.matches)} listed" if result.truncated else "")]
    heads = list(SUMMARY_KEYS)
    body = [[s.run_id, s.model or "", str(s.n_items), str(s.n_items_matched), f"{s.share:.3f}"] for s in result.summary]
    lines += _aligned(heads, body)
    heads = ["run_id", "sample_id", "attempt", "turn", "source", "role", "tool", "snippet"]
    body = []
    for m in result.matches:
        marked = m.snippet[:m.start] + "[" + m.snippet[m.start:m.end] + "]" + m.snippet[m.end:]
        body.append([m.run_id, m.sample_id, str(m.attempt), str(m.turn + 1), m.source, m.role, m.tool or "",
                     _one_line(marked)])
    lines.append("")
    lines += _aligned(heads, body)
    lines.append("(turns counted from 1)")
    return "\n".join(lines) + "\n"


def _aligned(heads: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(heads)]
    out = [" | ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip(), "-+-".join("-" * w for w in widths)]
    out += [" | ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in body]
    return out


def marked_snippet(m: Match) -> Markup:
    """The snippet, escaped, with the match in ``<mark>``."""
    s = m.snippet
    return escape(s[:m.start]) + Markup("<mark>") + escape(s[m.start:m.end]) + Markup("</mark>") + escape(s[m.end:])


def describe(q: TranscriptQuery) -> str:
    """The query in words, as its options spell it."""
    parts = []
    if q.text is not None:
        parts.append(f"{'regex' if q.regex else 'text'} {q.text!r}" + (" (case-sensitive)" if q.case_sensitive else ""))
    for name in ("role", "tool", "tool_args", "status", "repeat", "benchmark", "model", "run", "epoch", "metric",
                 "value", "min", "max", "terminated_by", "item_group"):
        v = getattr(q, name)
        if v is not None and not (name == "role" and v == "any"):
            parts.append(f"--{name.replace('_', '-')} {v}")
    if q.sequence:
        parts.append("--sequence " + ">".join(q.sequence))
    return " ".join(parts)


def html_page(wh: Warehouse, site: Any, result: SearchResult, query: TranscriptQuery) -> str:
    """The page's HTML; the item pages of every listed match are written into ``site``'s folder."""
    from .core import item as shared_item
    from .render import Charts, Provenance  # the page only: the text forms start without the renderer
    from .core.runs import label_runs, shared_runs
    from .site import MAX_ITEM_RUNS

    runs = {r.run_id: r for r in shared_runs(wh)}
    label_runs(list(runs.values()))
    by_sample: dict[str, list[str]] = {}
    for m in result.matches:
        ids = by_sample.setdefault(m.sample_id, [])
        if m.run_id not in ids and m.run_id in runs and len(ids) < MAX_ITEM_RUNS:
            ids.append(m.run_id)
    shown = [runs[r] for r in dict.fromkeys(r for ids in by_sample.values() for r in ids)]
    prov = Provenance.build(wh.path, shown)
    groups: dict[tuple[str, ...], list[str]] = {}
    for sid, ids in by_sample.items():
        if ids:
            groups.setdefault(tuple(ids), []).append(sid)
    for ids, sids in groups.items():
        site.write_item_pages(wh, sids, [runs[r] for r in ids], prov, pages=shared_item.PAGES)
    rows = []
    for m in result.matches:
        href = site.item_href(m.sample_id) if site.has_item(m.sample_id) else None
        if href is not None and m.kind in ("text", "calls") and m.end > m.start:
            href += ("" if "#" in href else "#") + ":~:text=" + quote(m.snippet[m.start:m.end], safe="").replace("-", "%2D")
        rows.append({"m": m, "href": href, "snippet": marked_snippet(m),
                     "label": runs[m.run_id].label if m.run_id in runs else m.run_id})
    context = {"title": "Search: " + describe(query), "query": describe(query), "result": result, "rows": rows}
    return site.render_page("search.html.j2", context, Charts(), prov)
