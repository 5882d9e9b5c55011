"""``pattern`` scanners: the transcript search (ingest/transcripts/search.py) as a classifier.

A pattern scanner's keys are the search options (text, regex, case_sensitive, role, tool, tool_args,
status, sequence, repeat); an attempt matches when the search finds it, and its value is the number of
matches the search lists in it (0 for an attempt it does not find). The evidence is the matches' turns,
and for matches in tool calls the calls' ``seq``. The attempts searched are the scan's (scan.py), so the
search's own filters (model, run, ...) are not scanner keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from agenthop.ingest.transcripts.search import SearchError, TranscriptQuery, matching_attempts

from .units import Unit, units_table

KEYS: tuple[str, ...] = ("text", "regex", "case_sensitive", "role", "tool", "tool_args", "status", "sequence",
                         "repeat")
_TYPES: dict[str, tuple[type, ...]] = {
    "text": (str,), "regex": (bool,), "case_sensitive": (bool,), "role": (str,), "tool": (str,),
    "tool_args": (str,), "status": (str,), "sequence": (str, list), "repeat": (int,),
}


def query_of(options: dict[str, Any]) -> TranscriptQuery:
    opts = dict(options)
    if isinstance(opts.get("sequence"), list):
        opts["sequence"] = tuple(str(s) for s in opts["sequence"])
    return TranscriptQuery.from_mapping({**opts, "limit": None})


def option_problem(options: dict[str, Any]) -> tuple[str, str] | None:
    """(field, problem) of search options that cannot make a scanner, or None."""
    for key, value in options.items():
        kinds = _TYPES[key]
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            return key, f"expected {' or '.join(t.__name__ for t in kinds)}, got {type(value).__name__} {value!r}"[:200]
    try:
        query_of(options).validate()
    except SearchError as exc:
        text = str(exc)
        head, sep, rest = text.partition(": ")
        if sep and head in KEYS:
            return head, rest
        return "kind", f"pattern scanner: {text}"
    return None


def run_pattern(con: duckdb.DuckDBPyConnection, options: dict[str, Any], units: Sequence[Unit]) -> list[tuple]:
    """(run_id, sample_id, attempt, value, label, explanation, evidence) for every unit of ``units``."""
    wanted = set(units)
    hits = [h for h in matching_attempts(con, query_of(options)) if (h.run_id, h.sample_id, h.attempt) in wanted]
    turn_of: dict[tuple[str, str, int, int], int] = {}
    with_calls = [(h.run_id, h.sample_id, h.attempt) for h in hits if h.calls]
    if with_calls:
        con.register("scan_hit_units", units_table(with_calls))
        try:
            for r, s, a, seq, turn in con.execute(
                    "SELECT c.run_id, c.sample_id, c.attempt, c.seq, c.turn FROM raw.tool_calls AS c "
                    "SEMI JOIN scan_hit_units AS u USING (run_id, sample_id, attempt)").fetchall():
                turn_of[(r, s, int(a), int(seq))] = int(turn)
        finally:
            con.unregister("scan_hit_units")
    found: dict[Unit, tuple] = {}
    for h in hits:
        unit = (h.run_id, h.sample_id, h.attempt)
        call_turns = {turn_of.get((*unit, seq)) for seq in h.calls}
        evidence = [{"turn": turn_of.get((*unit, seq)), "seq": seq} for seq in h.calls]
        evidence += [{"turn": t, "seq": None} for t in h.turns if t not in call_turns]
        evidence.sort(key=lambda e: (e["turn"] if e["turn"] is not None else -1, e["seq"] if e["seq"] is not None else -1))
        found[unit] = (*unit, float(h.n_matches), None, None, evidence)
    return [found.get(u, (*u, 0.0, None, None, None)) for u in units]
