"""Writing the metric catalogue (``raw.metric_defs``, docs/metrics.md#metric-catalogue) inside ingest's
transaction: the sources' rows, then the user's settings.

Sources' rows (``upsert_source_rows``) replace earlier source rows of the same metric; a metric seen
binary in one log and continuous in another is continuous. A row the user set (``source`` =
``user``) keeps its direction and primary flag through every later import (the rest of it follows the
source), and a benchmark whose primary metric the user chose keeps it.

The user's settings (``apply_settings``): ``--metric-direction NAME=lower|higher|none`` and
``--primary-metric NAME``. A name resolves among each benchmark's metrics (ingest/metric_names.py);
it applies to every benchmark where it resolves, and is an error when it is ambiguous in one or
known in none.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from agenthop.harness import benchmarks
from agenthop.schemas import metrics as m

from . import ddl
from .conform import IngestError
from .metric_names import MetricNameError, metric_name, resolve_metric
from .warehouse import insert_arrow

#: what ``--metric-direction NAME=WORD`` accepts -> the direction
DIRECTION_WORDS: dict[str, str] = {
    "higher": m.HIGHER, "lower": m.LOWER, "none": m.NO_DIRECTION,
    m.HIGHER: m.HIGHER, m.LOWER: m.LOWER,
}

_COLS = [f.name for f in m.METRIC_DEFS]


def parse_direction(text: str) -> tuple[str, str]:
    """``NAME=lower|higher|none`` -> (name, direction); an IngestError names the problem."""
    name, sep, word = text.rpartition("=")
    if not sep or not name:
        raise IngestError(f"--metric-direction {text}: expected NAME=lower|higher|none")
    direction = DIRECTION_WORDS.get(word.strip().lower())
    if direction is None:
        raise IngestError(f"--metric-direction {text}: the direction must be lower, higher or none, not {word!r}")
    return name.strip(), direction


def merge_kind(old: str, new: str) -> str:
    """The kind of a metric seen as ``old`` and as ``new`` (binary and continuous: continuous)."""
    if old == new:
        return old
    if {old, new} <= {"binary", "continuous"}:
        return "continuous"
    return new


def _with_kind(row: dict[str, Any], other: str) -> dict[str, Any]:
    """``row`` seen also as ``other``: the merged kind, without bounds that held for its own kind only."""
    kind = merge_kind(other, row["kind"])
    if kind == row["kind"]:
        return row
    return {**row, "kind": kind, "min_value": None, "max_value": None}


def _existing(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], dict[str, Any]]:
    cur = con.execute(f"SELECT {', '.join(_COLS)} FROM {ddl.RAW}.metric_defs")
    return {(r[0], r[1]): dict(zip(_COLS, r)) for r in cur.fetchall()}


def _replace(con: duckdb.DuckDBPyConnection, rows: Sequence[dict[str, Any]]) -> None:
    """Write ``rows`` over the rows of the same (benchmark, metric)."""
    if not rows:
        return
    keys = pa.table({"benchmark": [r["benchmark"] for r in rows], "metric": [r["metric"] for r in rows]})
    con.register("__metric_keys", keys)
    try:
        con.execute(f"DELETE FROM {ddl.RAW}.metric_defs d WHERE EXISTS (SELECT 1 FROM __metric_keys k "
                    "WHERE k.benchmark = d.benchmark AND k.metric = d.metric)").fetchall()
    finally:
        con.unregister("__metric_keys")
    insert_arrow(con, "metric_defs", pa.Table.from_pylist([{c: r[c] for c in _COLS} for r in rows],
                                                          schema=m.METRIC_DEFS))


def _clear_primary(con: duckdb.DuckDBPyConnection, benchmark: str, keep: str, only_sources: bool) -> None:
    """No other metric of ``benchmark`` than ``keep`` is primary (only the sources' rows when ``only_sources``)."""
    extra = f" AND source <> '{m.USER_SOURCE}'" if only_sources else ""
    con.execute(f"UPDATE {ddl.RAW}.metric_defs SET is_primary = false "
                f"WHERE benchmark = ? AND metric <> ? AND is_primary{extra}", [benchmark, keep]).fetchall()


def upsert_source_rows(con: duckdb.DuckDBPyConnection, rows: Iterable[dict[str, Any]]) -> int:
    """Write the sources' rows (module docstring); the number of rows written."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["benchmark"], row["metric"])
        prev = merged.get(key)
        merged[key] = row if prev is None else {**_with_kind(row, prev["kind"]),
                                                 "is_primary": prev["is_primary"] or row["is_primary"]}
    if not merged:
        return 0
    existing = _existing(con)
    user_primary = {b for (b, _), r in existing.items() if r["source"] == m.USER_SOURCE and r["is_primary"]}
    out = []
    for key, row in merged.items():
        old = existing.get(key)
        row = dict(row) if old is None else _with_kind(dict(row), old["kind"])
        if old is not None and old["source"] == m.USER_SOURCE:
            row.update(direction=old["direction"], is_primary=old["is_primary"], source=m.USER_SOURCE)
        elif row["benchmark"] in user_primary:
            row["is_primary"] = False
        out.append(row)
    _replace(con, out)
    for row in out:
        if row["is_primary"] and row["source"] != m.USER_SOURCE:
            _clear_primary(con, row["benchmark"], row["metric"], only_sources=True)
    return len(out)


def registry_rows(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every registered benchmark's rows for the runs the warehouse holds (``Benchmark.metric_defs``)."""
    return [row for bench in benchmarks.available() if bench.metric_defs is not None for row in bench.metric_defs(con)]


def known_metrics(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """benchmark -> its metric names: the catalogue's and every score name of its runs."""
    out: dict[str, set[str]] = {}
    for b, metric in con.execute(f"SELECT benchmark, metric FROM {ddl.RAW}.metric_defs").fetchall():
        out.setdefault(b, set()).add(metric)
    for b, scorer, key in con.execute(
            f"SELECT DISTINCT r.benchmark, s.scorer, s.\"key\" FROM {ddl.RAW}.scores s "
            f"JOIN {ddl.RAW}.runs r USING (run_id)").fetchall():
        out.setdefault(b, set()).add(metric_name(scorer, key))
    return {b: sorted(ms) for b, ms in sorted(out.items())}


def resolve_everywhere(known: dict[str, list[str]], name: str, flag: str) -> list[tuple[str, str]]:
    """(benchmark, metric) for every benchmark where ``name`` resolves; an IngestError when it is
    ambiguous in one of them or known in none (listing the candidates)."""
    found: list[tuple[str, str]] = []
    unknown: list[str] = []
    for benchmark, metrics in known.items():
        try:
            found.append((benchmark, resolve_metric(metrics, name)))
        except MetricNameError as exc:
            if "ambiguous" in str(exc):
                raise IngestError(f"{flag} {name}: in {benchmark}, {exc}") from None
            unknown += [f"{benchmark}: {x}" for x in metrics]
    if not found:
        listed = "; ".join(unknown) if unknown else "the warehouse has no metrics"
        raise IngestError(f"{flag} {name}: no benchmark has this metric ({listed})")
    return found


def _inferred_row(con: duckdb.DuckDBPyConnection, benchmark: str, metric: str) -> dict[str, Any]:
    """A catalogue row for a score with no row yet (runs loaded before the catalogue existed), by the
    rule of an imported log's rows (ingest/sources/inspect_metrics.py)."""
    from .sources.inspect_metrics import score_metric_row

    scorer, key = con.execute(
        f"SELECT DISTINCT s.scorer, s.\"key\" FROM {ddl.RAW}.scores s JOIN {ddl.RAW}.runs r USING (run_id) "
        "WHERE r.benchmark = ? AND s.scorer || '.' || s.\"key\" = ?", [benchmark, metric]).fetchall()[0]
    values = [v for (v,) in con.execute(
        f"SELECT s.value_num FROM {ddl.RAW}.scores s JOIN {ddl.RAW}.runs r USING (run_id) "
        "WHERE r.benchmark = ? AND s.scorer = ? AND s.\"key\" = ?", [benchmark, scorer, key]).fetchall()]
    return score_metric_row(benchmark, scorer, key, values, False, m.USER_SOURCE)


def apply_settings(con: duckdb.DuckDBPyConnection, directions: Sequence[tuple[str, str]],
                   primaries: Sequence[str]) -> list[str]:
    """The user's settings (module docstring); one line per metric changed, for the summary."""
    if not directions and not primaries:
        return []
    known = known_metrics(con)
    done: list[str] = []

    def row_of(benchmark: str, metric: str) -> dict[str, Any]:
        existing = _existing(con).get((benchmark, metric))
        return dict(existing) if existing is not None else _inferred_row(con, benchmark, metric)

    for name, direction in directions:
        for benchmark, metric in resolve_everywhere(known, name, "--metric-direction"):
            row = row_of(benchmark, metric)
            row.update(direction=direction, source=m.USER_SOURCE)
            _replace(con, [row])
            done.append(f"{benchmark} {metric}: {direction}")
    for name in primaries:
        for benchmark, metric in resolve_everywhere(known, name, "--primary-metric"):
            row = row_of(benchmark, metric)
            row.update(is_primary=True, source=m.USER_SOURCE)
            _replace(con, [row])
            _clear_primary(con, benchmark, metric, only_sources=False)
            done.append(f"{benchmark} {metric}: primary")
    return done


def write_catalogue(con: duckdb.DuckDBPyConnection, source_rows: Iterable[dict[str, Any]],
                    directions: Sequence[tuple[str, str]] = (), primaries: Sequence[str] = ()) -> list[str]:
    """Inside ingest's transaction: the imported logs' rows, every benchmark's own rows, then the
    user's settings (their summary lines)."""
    upsert_source_rows(con, [*source_rows, *registry_rows(con)])
    return apply_settings(con, directions, primaries)
