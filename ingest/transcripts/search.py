"""Search over the transcripts of every loaded run (docs/search.md).

API (stable; `agenthop-report search` and the pattern scanners build on it)::

    q = TranscriptQuery(text="timeout", role="assistant", model="m1", limit=20)
    result = find_matches(con, q)            # SearchResult: matches, summary, n_matches, truncated
    hits = matching_attempts(con, q)         # every (run_id, sample_id, attempt) the query finds

What matches (criteria; an attempt must satisfy every criterion given, and the matches listed are
those of every criterion in the attempts that do):

- ``text``: a unit (units.py: a message, a call's arguments, a tool's output) whose text contains it
  (``regex``: the RE2 pattern matches somewhere), case-insensitively unless ``case_sensitive``;
  ``role``, ``tool``, ``tool_args`` and ``status`` narrow the units searched (``status`` and
  ``tool_args`` leave only calls' arguments). One match per unit: its first occurrence.
- no ``text``: ``tool``, ``tool_args`` (a regex over the arguments' JSON) and ``status`` find calls.
- ``sequence`` (``A>B>C``): calls of those tools in that order, consecutive in the attempt (by
  ``seq``); one match per place the sequence starts.
- ``repeat`` N: an identical call (same tool, same arguments' JSON text) made N or more times in one
  attempt, whatever each call's status (with ``tool``: of that tool only); one match per distinct call.

Filters (``benchmark``, ``model``, ``run``, ``epoch``, ``terminated_by`` of the attempt, ``metric``
with ``value`` or ``min``/``max`` and ``item_group`` of the item) choose the attempts searched; the
metric and item group filters read the dbt marts. The summary has a row per run in scope: its items
(those with an attempt in scope), the items matched and their share, over every match, whatever
``limit`` cuts from the list.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import duckdb

from agenthop.harness.errors import AgentHopError

from . import index
from .units import SOURCE_RANK_SQL

ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool", "any")
#: Characters of context on each side of a match in its snippet.
CONTEXT_CHARS = 60
DEFAULT_LIMIT = 100

#: Keys of one match and one summary row in the JSON form (the contract of `search --format json`).
MATCH_KEYS: tuple[str, ...] = ("run_id", "model", "benchmark", "sample_id", "attempt", "turn", "source", "role",
                               "tool", "snippet", "start", "end")
SUMMARY_KEYS: tuple[str, ...] = ("run_id", "model", "n_items", "n_items_matched", "share")

#: Marts the item filters read: schema-qualified relation and what builds it.
METRIC_VALUES = "main.item_metric_values"
ITEM_GROUPS = "intermediate.int_core_item_groups"


class SearchError(AgentHopError):
    """A query that cannot run (a regex that does not compile, a bad option, a missing mart)."""


@dataclass(frozen=True)
class TranscriptQuery:
    """One search: what to find and in which attempts (module docstring). Field names are the
    `search` options without their dashes (``tool_args`` is ``--tool-args``) and a pattern
    scanner's keys."""

    text: str | None = None
    regex: bool = False
    case_sensitive: bool = False
    role: str = "any"
    tool: str | None = None
    tool_args: str | None = None
    status: str | None = None
    sequence: tuple[str, ...] = ()
    repeat: int | None = None
    benchmark: str | None = None
    model: str | None = None
    run: str | None = None
    epoch: int | None = None
    metric: str | None = None
    value: float | None = None
    min: float | None = None
    max: float | None = None
    terminated_by: str | None = None
    item_group: str | None = None
    limit: int | None = DEFAULT_LIMIT

    def __post_init__(self) -> None:
        if isinstance(self.sequence, str):  # "A>B>C"
            object.__setattr__(self, "sequence", parse_sequence(self.sequence))
        else:
            object.__setattr__(self, "sequence", tuple(self.sequence))
        if self.text == "":
            object.__setattr__(self, "text", None)

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> TranscriptQuery:
        """A query from a mapping of field names (a pattern scanner's entry); unknown keys are an error."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(k for k in data if k not in names)
        if unknown:
            raise SearchError(f"{unknown[0]}: not a search option (options: {', '.join(sorted(names))})")
        return cls(**data)

    def criteria(self) -> list[str]:
        """The criteria given: text, calls, sequence, repeat."""
        out = []
        if self.text is not None:
            out.append("text")
        elif self.tool is not None or self.tool_args is not None or self.status is not None:
            out.append("calls")
        if self.sequence:
            out.append("sequence")
        if self.repeat is not None:
            out.append("repeat")
        return out

    def validate(self) -> None:
        """Raise SearchError (one line naming the option) for a query that cannot run."""
        if not self.criteria():
            raise SearchError("nothing to search for: give a text, or tool, tool_args, status, sequence or repeat")
        if self.role not in ROLES:
            raise SearchError(f"role: {self.role!r} is not one of {', '.join(ROLES)}")
        if self.repeat is not None and self.repeat < 2:
            raise SearchError(f"repeat: {self.repeat} is not 2 or more (the times an identical call is made)")
        if self.limit is not None and self.limit < 0:
            raise SearchError(f"limit: {self.limit} is negative")
        if self.sequence and any(not s for s in self.sequence):
            raise SearchError(f"sequence: {'>'.join(self.sequence)!r} has an empty tool name (write A>B>C)")
        if self.value is not None and (self.min is not None or self.max is not None):
            raise SearchError("metric: give value, or min and/or max, not both")
        if self.metric is None and (self.value is not None or self.min is not None or self.max is not None):
            raise SearchError("value/min/max: give the metric they apply to")
        if self.metric is not None and self.value is None and self.min is None and self.max is None:
            raise SearchError(f"metric: {self.metric!r} needs value, or min and/or max")
        for name in ("value", "min", "max"):
            v = getattr(self, name)
            if v is not None and not math.isfinite(float(v)):
                raise SearchError(f"{name}: {v} is not a finite number")
        if self.regex and self.text is not None:
            check_regex(self.text, "text")
        if self.tool_args is not None:
            check_regex(self.tool_args, "tool_args")


def parse_sequence(spec: str) -> tuple[str, ...]:
    """``"A>B>C"`` -> ("A", "B", "C"); names are stripped of spaces."""
    return tuple(part.strip() for part in spec.split(">"))


def check_regex(pattern: str, name: str) -> None:
    """SearchError unless RE2 (DuckDB's regex engine, which search uses) compiles ``pattern``."""
    try:
        duckdb.execute("SELECT regexp_matches('', ?)", [pattern]).fetchall()
    except duckdb.Error as exc:
        reason = str(exc).splitlines()[0].split(":", 1)[-1].strip()
        raise SearchError(f"{name}: the regex {pattern!r} does not compile ({reason})") from None


@dataclass(frozen=True)
class Match:
    run_id: str
    model: str | None
    benchmark: str | None
    sample_id: str
    attempt: int
    turn: int
    source: str  # message | tool_args | tool_output
    role: str
    tool: str | None
    snippet: str
    start: int  # the match is snippet[start:end]
    end: int
    #: not in the JSON form: the message's idx or the call's seq, and the criterion that found it
    pos: int = field(default=0, compare=False)
    kind: str = field(default="text", compare=False)

    def as_json(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: d[k] for k in MATCH_KEYS}


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    model: str | None
    n_items: int
    n_items_matched: int
    share: float

    def as_json(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: d[k] for k in SUMMARY_KEYS}


@dataclass(frozen=True)
class SearchResult:
    matches: list[Match]
    summary: list[RunSummary]
    n_matches: int
    truncated: bool

    def as_json(self) -> dict[str, Any]:
        return {"matches": [m.as_json() for m in self.matches], "summary": [s.as_json() for s in self.summary],
                "n_matches": self.n_matches, "truncated": self.truncated}


@dataclass(frozen=True)
class AttemptHit:
    """An attempt the query finds, with its evidence: the turns and the calls (``seq``) of its matches."""

    run_id: str
    sample_id: str
    attempt: int
    n_matches: int
    turns: tuple[int, ...]
    calls: tuple[int, ...]


# -- SQL ----------------------------------------------------------------------------------------------


def _text_condition(q: TranscriptQuery) -> tuple[str, Any]:
    """The text criterion as SQL with ``{text}`` where a unit's text goes, and its one parameter."""
    assert q.text is not None
    if q.regex:
        return "regexp_matches({text}, ?)", q.text if q.case_sensitive else "(?i)" + q.text
    if q.case_sensitive:
        return "contains({text}, ?)", q.text
    return "contains(lower({text}), lower(?))", q.text


def _args_regex(q: TranscriptQuery) -> str:
    assert q.tool_args is not None
    return q.tool_args if q.case_sensitive else "(?i)" + q.tool_args


def _scope_sql(con: duckdb.DuckDBPyConnection, q: TranscriptQuery, params: list[Any]) -> str:
    """SELECT of the attempts in scope (run_id, sample_id, attempt, model, benchmark)."""
    where = []
    for col, value in (("r.benchmark", q.benchmark), ("r.model", q.model), ("t.run_id", q.run),
                       ("t.terminated_by", q.terminated_by)):
        if value is not None:
            where.append(f"{col} = ?")
            params.append(value)
    if q.epoch is not None:
        where.append("r.replicate + 1 = ?")
        params.append(int(q.epoch))
    if q.metric is not None:
        _require(con, METRIC_VALUES, "--metric")
        cond = ["metric = ?"]
        params.append(q.metric)
        if q.value is not None:
            cond.append("value = ?")
            params.append(float(q.value))
        if q.min is not None:
            cond.append("value >= ?")
            params.append(float(q.min))
        if q.max is not None:
            cond.append("value <= ?")
            params.append(float(q.max))
        where.append(f"(t.run_id, t.sample_id) IN (SELECT run_id, sample_id FROM {METRIC_VALUES} "
                     f"WHERE {' AND '.join(cond)})")
    if q.item_group is not None:
        _require(con, ITEM_GROUPS, "--item-group")
        where.append(f"(r.benchmark, t.sample_id) IN (SELECT benchmark, sample_id FROM {ITEM_GROUPS} "
                     f"WHERE item_group = ?)")
        params.append(q.item_group)
    return (
        "SELECT t.run_id, t.sample_id, t.attempt, r.model, r.benchmark FROM raw.trajectories t "
        "LEFT JOIN raw.runs r USING (run_id)" + (" WHERE " + " AND ".join(where) if where else "")
    )


def _require(con: duckdb.DuckDBPyConnection, relation: str, option: str) -> None:
    schema, name = relation.split(".")
    rows = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
                       [schema, name]).fetchall()
    if not rows[0][0]:
        raise SearchError(f"{option} reads {relation}, which this warehouse does not have yet: "
                          "run agenthop-dbt build first")


_HIT_COLS = "run_id, sample_id, attempt, turn, source, role, tool, pos, kind, label"


def _call_filters(q: TranscriptQuery, params: list[Any]) -> list[str]:
    """Conditions of ``tool``, ``status`` and ``tool_args`` on units (the last two keep calls' arguments only)."""
    where = []
    if q.tool is not None:
        where.append("u.tool = ?")
        params.append(q.tool)
    if q.status is not None:
        where.append("u.source = 'tool_args' AND u.status = ?")
        params.append(q.status)
    if q.tool_args is not None:
        where.append("u.source = 'tool_args' AND regexp_matches(u.text, ?)")
        params.append(_args_regex(q))
    return where


def _unit_hits(kind: str, where: list[str], relation: str = "units") -> str:
    return (f"SELECT run_id, sample_id, attempt, turn, source, role, tool, pos, '{kind}' AS kind, "
            f"NULL::VARCHAR AS label FROM {relation} u WHERE {' AND '.join(where) or 'true'}")


def _criteria_sql(q: TranscriptQuery, params: list[Any]) -> dict[str, str]:
    """criterion -> SELECT of its hits over ``units`` (columns _HIT_COLS); the text criterion's over
    ``text_units``, the units of its text (_Search)."""
    out: dict[str, str] = {}
    crit = q.criteria()
    if "text" in crit:
        where = []
        if q.role != "any":
            where.append("u.role = ?")
            params.append(q.role)
        out["text"] = _unit_hits("text", where + _call_filters(q, params), "text_units")
    if "calls" in crit:
        out["calls"] = _unit_hits("calls", ["u.source = 'tool_args'"] + _call_filters(q, params))
    if "sequence" in crit:
        n = len(q.sequence)
        leads = ", ".join(f"lead(tool, {k}) OVER w AS t{k}" for k in range(1, n))
        conds = ["tool = ?"] + [f"t{k} = ?" for k in range(1, n)]
        params.append(" > ".join(q.sequence))  # the label's placeholder comes first in the text
        params.extend(q.sequence)
        out["sequence"] = (
            f"SELECT run_id, sample_id, attempt, turn, source, role, tool, pos, 'sequence' AS kind, ?::VARCHAR AS label "
            f"FROM (SELECT *{', ' + leads if leads else ''} FROM units WHERE source = 'tool_args' "
            f"WINDOW w AS (PARTITION BY run_id, sample_id, attempt ORDER BY pos)) WHERE {' AND '.join(conds)}")
    if "repeat" in crit:
        where = "source = 'tool_args'"
        if q.tool is not None:
            where += " AND tool = ?"
            params.append(q.tool)
        params.append(int(q.repeat or 0))
        out["repeat"] = (
            "SELECT run_id, sample_id, attempt, min(turn) AS turn, 'tool_args' AS source, 'assistant' AS role, tool, "
            "min(pos) AS pos, 'repeat' AS kind, tool || ' ' || text || ' (' || count(*) || ' calls)' AS label "
            f"FROM units WHERE {where} GROUP BY run_id, sample_id, attempt, tool, text HAVING count(*) >= ?")
    return out


class _Search:
    """One query's hits, kept in a temporary table of the connection while the result is read."""

    def __init__(self, con: duckdb.DuckDBPyConnection, q: TranscriptQuery, use_word_index: bool = True) -> None:
        q.validate()
        self.con, self.q = con, q
        if not index.has_raw_tables(con):
            raise SearchError("the warehouse has no transcripts loaded (no raw tables): run agenthop-ingest first")
        params: list[Any] = []
        self.units = units = index.relation(con)[0]
        filtered = (q.benchmark, q.model, q.run, q.epoch, q.metric, q.terminated_by, q.item_group) != (None,) * 7
        scope = _scope_sql(con, q, params)

        def in_scope(name: str, relation: str) -> str:
            return (f"{name} AS (SELECT u.* FROM {relation} u SEMI JOIN scope s ON u.run_id = s.run_id "
                    f"AND u.sample_id = s.sample_id AND u.attempt = s.attempt)" if filtered
                    else f"{name} AS (SELECT * FROM {relation})")

        ctes = [f"scope AS ({scope})", in_scope("units", units)]
        if q.text is not None:  # the text is tested in the scans of the tables that hold it, before any join
            condition, value = _text_condition(q)
            # the word index narrows the units to test to those holding the literal's words, when it can
            narrowed = use_word_index and index.text_candidates(con, q.text, q.regex, "__search_candidates", q.role)
            text_units, n = index.relation(con, condition, "__search_candidates" if narrowed else "")
            ctes.append(in_scope("text_units", text_units))
            params += [value] * n
        crit = _criteria_sql(q, params)
        ctes += [f"c_{name} AS ({sql})" for name, sql in crit.items()]
        names = list(crit)
        union = " UNION ALL ".join(f"SELECT {_HIT_COLS} FROM c_{n}" for n in names)
        if len(names) > 1:  # an attempt must satisfy every criterion
            keys = " INTERSECT ".join(f"SELECT run_id, sample_id, attempt FROM c_{n}" for n in names)
            body = (f"SELECT * FROM ({union}) h WHERE (h.run_id, h.sample_id, h.attempt) IN ({keys})")
        else:
            body = union
        sql = "WITH " + ", ".join(ctes) + " " + body
        self.scope_sql, self.scope_params = scope, _scope_params(con, q)
        con.execute("CREATE OR REPLACE TEMP TABLE __search_hits AS " + sql, params)

    def close(self) -> None:
        self.con.execute("DROP TABLE IF EXISTS __search_hits")
        self.con.execute("DROP TABLE IF EXISTS __search_candidates")
        self.con.execute("DROP TABLE IF EXISTS __search_candidates_units")
        self.con.execute("DROP TABLE IF EXISTS __search_page")

    def n_matches(self) -> int:
        return int(self.con.execute("SELECT count(*) FROM __search_hits").fetchall()[0][0])

    def attempts(self) -> list[AttemptHit]:
        rows = self.con.execute(
            "SELECT run_id, sample_id, attempt, count(*), list(DISTINCT turn ORDER BY turn), "
            "list(DISTINCT pos ORDER BY pos) FILTER (WHERE source = 'tool_args') "
            "FROM __search_hits GROUP BY ALL ORDER BY run_id, sample_id, attempt").fetchall()
        return [AttemptHit(r[0], r[1], int(r[2]), int(r[3]), tuple(r[4] or ()), tuple(r[5] or ())) for r in rows]

    def summary(self) -> list[RunSummary]:
        rows = self.con.execute(
            f"WITH scope AS ({self.scope_sql}), "
            "items AS (SELECT run_id, any_value(model) AS model, count(DISTINCT sample_id) AS n FROM scope GROUP BY run_id), "
            "matched AS (SELECT run_id, count(DISTINCT sample_id) AS n FROM __search_hits GROUP BY run_id) "
            "SELECT items.run_id, items.model, items.n, coalesce(matched.n, 0) FROM items "
            "LEFT JOIN matched USING (run_id) ORDER BY items.model NULLS LAST, items.run_id",
            self.scope_params).fetchall()
        return [RunSummary(r[0], r[1], int(r[2]), int(r[3]), (int(r[3]) / int(r[2])) if r[2] else 0.0)
                for r in rows]

    def listed(self, limit: int | None) -> list[Match]:
        q = self.q
        lim = "" if limit is None else f"LIMIT {int(limit)}"
        units = self.units
        params: list[Any] = []
        if q.text is not None:
            if q.regex:
                pattern = q.text if q.case_sensitive else "(?i)" + q.text
                params += ["^((?s:.*?))((?:" + pattern + "))"] * 2
                locate = ("length(regexp_extract(u.text, ?, 1)) AS at, "
                          "length(regexp_extract(u.text, ?, 2)) AS n")
            elif q.case_sensitive:
                params += [q.text, q.text]
                locate = "strpos(u.text, ?) - 1 AS at, length(?) AS n"
            else:
                params += [q.text, q.text]
                locate = "strpos(lower(u.text), lower(?)) - 1 AS at, length(lower(?)) AS n"
        else:
            locate = "0 AS at, 0 AS n"
        args_locate = "0 AS a_at, length(u.text) AS a_n"
        if q.tool_args is not None:
            params += ["^((?s:.*?))((?:" + _args_regex(q) + "))"] * 2
            args_locate = ("length(regexp_extract(u.text, ?, 1)) AS a_at, "
                           "length(regexp_extract(u.text, ?, 2)) AS a_n")
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE __search_page AS SELECT * FROM __search_hits "
                         f"ORDER BY run_id, sample_id, attempt, turn, {SOURCE_RANK_SQL}, pos, kind {lim}")
        # the units of the listed matches, named by value (one parameter each: constant filters of the table
        # scans) so that the scans skip the row groups without them and read the text of the rows kept only
        keys = self.con.execute("SELECT list(DISTINCT run_id), list(DISTINCT sample_id), list(DISTINCT source) "
                                "FROM __search_page WHERE kind IN ('text', 'calls')").fetchall()[0]
        runs, samples, sources = (list(k or []) or [None] for k in keys)  # IN (NULL): no unit
        params = [*runs, *samples, *sources] + params
        rows = self.con.execute(f"""
            WITH texts AS (
                SELECT * FROM {units} u
                WHERE u.run_id IN ({", ".join("?" * len(runs))}) AND u.sample_id IN ({", ".join("?" * len(samples))})
                  AND u.source IN ({", ".join("?" * len(sources))})
            ),
            located AS (
                SELECT page.*, u.text, {locate}, {args_locate}
                FROM __search_page page LEFT JOIN texts u
                  ON u.run_id = page.run_id AND u.sample_id = page.sample_id AND u.attempt = page.attempt
                 AND u.source = page.source AND u.pos = page.pos AND page.kind IN ('text', 'calls')
            )
            SELECT l.run_id, r.model, r.benchmark, l.sample_id, l.attempt, l.turn, l.source, l.role, l.tool,
                   l.pos, l.kind, l.label,
                   CASE l.kind WHEN 'text' THEN l.at WHEN 'calls' THEN l.a_at ELSE 0 END AS at,
                   CASE l.kind WHEN 'text' THEN l.n WHEN 'calls' THEN l.a_n ELSE length(l.label) END AS n,
                   l.text
            FROM located l LEFT JOIN raw.runs r USING (run_id)
            ORDER BY l.run_id, l.sample_id, l.attempt, l.turn,
                     CASE l.source WHEN 'message' THEN 0 WHEN 'tool_args' THEN 1 ELSE 2 END, l.pos, l.kind
        """, params).fetchall()
        out = []
        for (run_id, model, bench, sid, attempt, turn, source, role, tool, pos, kind, label, at, n, text) in rows:
            whole = label if kind in ("sequence", "repeat") else (text or "")
            snippet, start, end = snippet_of(whole, int(at or 0), int(n or 0))
            out.append(Match(run_id, model, bench, sid, int(attempt), int(turn), source, role, tool, snippet, start, end,
                             pos=int(pos), kind=kind))
        return out


def _scope_params(con: duckdb.DuckDBPyConnection, q: TranscriptQuery) -> list[Any]:
    params: list[Any] = []
    _scope_sql(con, q, params)
    return params


def snippet_of(text: str, at: int, n: int, context: int = CONTEXT_CHARS) -> tuple[str, int, int]:
    """The part of ``text`` around ``text[at:at + n]`` (``context`` characters each side, whole text when
    short) and the match's place in it."""
    lo = max(0, at - context)
    hi = min(len(text), at + n + context)
    return text[lo:hi], at - lo, at - lo + n


@contextmanager
def _searched(con: duckdb.DuckDBPyConnection, query: TranscriptQuery, use_word_index: bool = True) -> Iterator[_Search]:
    """A query's hits while the block runs; a warehouse error is a SearchError of one line."""
    try:
        s = _Search(con, query, use_word_index)
    except duckdb.Error as exc:
        raise SearchError(_failed(exc)) from None
    try:
        yield s
    except duckdb.Error as exc:
        raise SearchError(_failed(exc)) from None
    finally:
        try:
            s.close()
        except duckdb.Error:
            pass


def _failed(exc: duckdb.Error) -> str:
    return ("the search could not run on this warehouse (made by another version? load it again with "
            f"agenthop-ingest): {str(exc).splitlines()[0]}")


def find_matches(con: duckdb.DuckDBPyConnection, query: TranscriptQuery, use_word_index: bool = True) -> SearchResult:
    """Every match of ``query`` across the loaded runs: the first ``query.limit`` listed, all counted
    (``use_word_index=False``: every unit's text is tested, as a check of the word index)."""
    with _searched(con, query, use_word_index) as s:
        n = s.n_matches()
        matches = s.listed(query.limit)
        return SearchResult(matches=matches, summary=s.summary(), n_matches=n,
                            truncated=query.limit is not None and n > query.limit)


def matching_attempts(con: duckdb.DuckDBPyConnection, query: TranscriptQuery) -> list[AttemptHit]:
    """Every attempt ``query`` finds (``limit`` ignored), with the turns and calls of its matches."""
    with _searched(con, query) as s:
        return s.attempts()
