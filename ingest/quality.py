"""Run the data-quality rules of schemas/quality.py over every row about to be loaded.

All rules run as DuckDB queries over the combined run tables at once (no per-row Python); only the
violating rows are mapped back to the file and row they came from, through :class:`Segments` (the
tables are concatenations of whole files, so each file is one contiguous range of rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from agenthop.harness import benchmarks
from agenthop.schemas import quality as qschema

#: Severity of every rule ingest checks: refused unless --accept-dq.
SEVERITY = "error"

#: Columns of a found violation (``raw.dq_issues`` without ``load_id``).
ISSUE_FIELDS = [f for f in qschema.DQ_ISSUES if f.name != "load_id"]
ISSUE_SCHEMA = pa.schema(ISSUE_FIELDS)


@dataclass(slots=True)
class Segments:
    """Where the rows of one combined table came from: consecutive (file, rows, kind) ranges.

    ``kind`` is ``parquet`` (rows are numbered within the file) or ``json`` (a reference-harness
    file: the place is a path into the record such as ``turns[2].tool_calls[0]``).
    """

    files: list[str] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)

    def add(self, file: str, n_rows: int, kind: str) -> None:
        if n_rows:
            self.files.append(file)
            self.counts.append(n_rows)
            self.kinds.append(kind)

    def extend(self, other: Segments) -> None:
        self.files += other.files
        self.counts += other.counts
        self.kinds += other.kinds

    def locate(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Segment index and row within the segment of each global row number."""
        ends = np.cumsum(np.asarray(self.counts, dtype=np.int64))
        seg = np.searchsorted(ends, rows, side="right")
        starts = ends - np.asarray(self.counts, dtype=np.int64)
        return seg, rows - starts[seg]


def _json_place(table: str, row: dict[str, object]) -> str:
    if table == "turns":
        return f"turns[{row['turn']}]"
    if table == "tool_calls":
        return f"turns[{row['turn']}].tool_calls[{row['call_index']}]"
    if table == "messages":
        return f"messages[{row['idx']}]"
    return "record" if table == "trajectories" else "run"


_PLACE_COLUMNS = {"turns": ["turn"], "tool_calls": ["turn", "call_index"], "messages": ["idx"]}


def find_issues(tables: dict[str, pa.Table], segments: dict[str, Segments]) -> pa.Table:
    """Every violation of every rule in ``tables`` (rows in rule order, then row order)."""
    return merge_issues([issues_by_rule(tables, segments)])


def issues_by_rule(tables: dict[str, pa.Table], segments: dict[str, Segments]) -> list[pa.Table | None]:
    """``find_issues``'s rows, one table per rule in rule order (None: no violation). Every rule
    looks at one run at a time (its joins and groups all hold the run id), so runs may be checked
    in groups and the groups' results merged (``merge_issues``)."""
    con = duckdb.connect()
    found_by_rule: list[pa.Table | None] = []
    try:
        for name, table in tables.items():
            con.register(name, table.append_column("_g", pa.array(np.arange(table.num_rows, dtype=np.int64))))
        rules = qschema.rules({b.name: b.tool_names for b in benchmarks.available() if b.tool_names})
        failing = _failing_row_rules(con, rules)
        for rule in rules:
            found_by_rule.append(None)
            if rule.where and rule not in failing:
                continue
            found = con.sql(f"SELECT _g, value FROM ({rule.sql}) ORDER BY _g").fetchnumpy()
            if not len(found["_g"]):
                continue
            g = np.asarray(found["_g"], dtype=np.int64)
            values = [None if v is None else str(v) for v in found["value"].tolist()]
            out: dict[str, list] = {f.name: [] for f in ISSUE_FIELDS}
            _append(out, rule, tables[rule.table], segments[rule.table], g, values)
            found_by_rule[-1] = pa.table(out, schema=ISSUE_SCHEMA)
    finally:
        con.close()
    return found_by_rule


def merge_issues(groups: Sequence[list[pa.Table | None]]) -> pa.Table:
    """The violations of groups of runs checked apart (``issues_by_rule`` of each group, the groups
    in run order) as ``find_issues`` of all of them finds them: rule order, then row order."""
    parts = [t for per_rule in zip(*groups) for t in per_rule if t is not None]
    return pa.concat_tables(parts) if parts else ISSUE_SCHEMA.empty_table()


def _failing_row_rules(con: duckdb.DuckDBPyConnection, rules: Sequence[qschema.Rule]) -> set[qschema.Rule]:
    """The single-row rules with at least one violation: one scan per table tests all of them."""
    by_table: dict[str, list[qschema.Rule]] = {}
    for rule in rules:
        if rule.where:
            by_table.setdefault(rule.table, []).append(rule)
    failing: set[qschema.Rule] = set()
    for table, rules in by_table.items():
        probes = ", ".join(f"coalesce(bool_or({r.where}), false)" for r in rules)
        hits = con.execute(f"SELECT {probes} FROM {table}").fetchall()[0]
        failing.update(r for r, hit in zip(rules, hits or ()) if hit)
    return failing


def _append(
    out: dict[str, list],
    rule: qschema.Rule,
    table: pa.Table,
    segs: Segments,
    g: np.ndarray,
    values: Sequence[str | None],
) -> None:
    take = pa.array(g)
    run_ids = pc.take(table.column("run_id"), take).to_pylist()
    place_cols = _PLACE_COLUMNS.get(rule.table, [])
    places = pc.take(table.select(place_cols), take).to_pylist() if place_cols else [{}] * len(g)
    seg, local = segs.locate(g)
    for k in range(len(g)):
        s = int(seg[k])
        row = str(int(local[k])) if segs.kinds[s] == "parquet" else _json_place(rule.table, places[k])
        value = values[k]
        out["run_id"].append(run_ids[k])
        out["table_name"].append(rule.table)
        out["file"].append(segs.files[s])
        out["row"].append(row)
        out["column_name"].append(rule.column)
        out["rule"].append(rule.name)
        out["severity"].append(SEVERITY)
        out["value"].append(value)
        out["message"].append(rule.message.replace("{value}", value if value is not None else "NULL"))


def describe(issue: dict[str, object]) -> str:
    """One violation as ``file: row R, column 'c' (table): message``."""
    return (
        f"{issue['file']}: row {issue['row']}, column '{issue['column_name']}' ({issue['table_name']}): "
        f"{issue['message']}"
    )


def refusal(issues: pa.Table) -> str:
    """The one-line error for a refused ingest: the first violation and a count per rule."""
    first = issues.slice(0, 1).to_pylist()[0]
    counts = issues.group_by("rule").aggregate([("rule", "count")]).to_pylist()
    per_rule = ", ".join(f"{c['rule']} {c['rule_count']}" for c in sorted(counts, key=lambda c: c["rule"]))
    n = issues.num_rows
    return (
        f"{describe(first)} [{n} data-quality violation{'s' if n != 1 else ''}: {per_rule}]; nothing was "
        f"loaded (--accept-dq loads them anyway and records each in raw.dq_issues)"
    )
