"""Before any report renders: are the marts current, and do the data-quality marts list anything?

`check_fresh` refuses marts that predate the last ingest: the `build_info` mart records the highest
`raw.ingest_log.load_id` at build time, and dbt builds it after every mart the reports read. The marts
are stale when an ingest that changed data (action inserted or replaced) came later, when
model_summary disagrees with the run count build_info recorded (a half-finished rebuild), or when a
run loaded in `raw` with final trajectories is missing from run_summary (the shared mart of every
benchmark's runs; model_summary in a warehouse built before run_summary existed).

`dq_issues` reads every relation of schema main whose name starts with ``dq_`` generically: its row
count and, when it has an ``issue`` / ``check_name`` column, the count per value. Marts about the
benchmark release itself (:data:`BENCHMARK_DQ_MARTS`: labels that resolve to no section, which the
released data has and the metrics handle as docs/metrics.md#label-resolution says) are notes on the
benchmark, not warnings about the loaded runs: the page shows them apart, without the alarm.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agenthop.harness.errors import AgentHopError

from .warehouse import Warehouse

STALE = "marts are stale: run dbt build"
#: The shared mart listing every benchmark's runs.
RUNS_MART = "run_summary"
IMPORTED_MART = "imported_run_summary"  # runs imported without trajectories (responses files)
#: Columns that name the kind of a data-quality row, in order of preference.
DQ_KIND_COLUMNS = ("issue", "check_name", "problem", "kind", "rule")
#: Data-quality marts that describe the benchmark release rather than the loaded runs.
BENCHMARK_DQ_MARTS = frozenset({"dq_label_resolution"})


@dataclass
class DqIssue:
    mart: str
    n_rows: int
    kinds: list[tuple[str, int]] = field(default_factory=list)  # (issue value, rows), largest first

    @property
    def about_benchmark(self) -> bool:
        return self.mart in BENCHMARK_DQ_MARTS


def _raw_has(wh: Warehouse, table: str) -> bool:
    (n,) = wh.con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'raw' AND table_name = ? "
        "AND table_catalog = current_database()", [table]).fetchone()  # type: ignore[misc]
    return bool(n)


def staleness(wh: Warehouse) -> str | None:
    """Why the marts are stale (None when they are current). Needs model_summary and build_info."""
    info = wh.rows("SELECT built_at, last_load_id, n_runs FROM build_info ORDER BY built_at DESC LIMIT 1")
    if not info:
        return "build_info is empty"
    built = info[0]
    if _raw_has(wh, "ingest_log"):
        later = wh.rows(
            "SELECT load_id, loaded_at FROM raw.ingest_log WHERE load_id > ? AND action <> 'unchanged' "
            "ORDER BY load_id DESC LIMIT 1", [built["last_load_id"]])
        if later:
            return (f"ingest load {later[0]['load_id']} at {later[0]['loaded_at']:%Y-%m-%d %H:%M:%S} came after "
                    f"the dbt build at {built['built_at']:%Y-%m-%d %H:%M:%S}")
    (n_summary,) = wh.con.execute("SELECT count(*) FROM model_summary").fetchone()  # type: ignore[misc]
    if n_summary != built["n_runs"]:
        return f"model_summary has {n_summary} runs, the last complete build had {built['n_runs']}"
    if _raw_has(wh, "runs") and _raw_has(wh, "trajectories"):
        listing = RUNS_MART if wh.has(RUNS_MART) else "model_summary"  # every benchmark's runs, where built
        missing = [r[0] for r in wh.con.execute(
            "SELECT DISTINCT t.run_id FROM raw.trajectories t WHERE t.is_final "
            "AND t.run_id IN (SELECT run_id FROM raw.runs) "
            f"AND t.run_id NOT IN (SELECT run_id FROM {listing}) ORDER BY 1 LIMIT 4").fetchall()]
        if missing:
            return f"run(s) {', '.join(missing)} are loaded but not in {listing}"
    return None


def require_runs(wh: Warehouse) -> None:
    """A user error when no run of any benchmark is in the marts (run_summary, and imported_run_summary's
    runs imported without trajectories; model_summary in a warehouse built before run_summary existed)."""
    if not wh.has(RUNS_MART):
        wh.require_runs()
        return
    (n,) = wh.con.execute(f"SELECT count(*) FROM {RUNS_MART}").fetchone()  # type: ignore[misc]
    if n == 0 and wh.has(IMPORTED_MART):
        (n,) = wh.con.execute(f"SELECT count(*) FROM {IMPORTED_MART}").fetchone()  # type: ignore[misc]
    if n == 0:
        raise AgentHopError(
            f"warehouse {wh.path} is empty (run_summary has no runs): load runs with agenthop-ingest "
            "(--runs DIR, --inspect-log LOG, ...), then run dbt build")


def check_fresh(wh: Warehouse) -> None:
    """Exit-2 user error when the marts are stale (module docstring)."""
    wh.require(["model_summary", "build_info"])
    require_runs(wh)
    why = staleness(wh)
    if why:
        raise AgentHopError(f"{STALE} (warehouse {wh.path}: {why})")


def stale_warning(wh: Warehouse) -> str | None:
    """One line saying the marts are stale (for ``sql``, which answers anyway); None when they are
    current or the warehouse has no built marts to judge."""
    if not {"model_summary", "build_info"} <= set(wh.relations()):
        return None
    why = staleness(wh)
    return f"warning: {STALE} (warehouse {wh.path}: {why}); the answer may be out of date" if why else None


def dq_issues(wh: Warehouse) -> list[DqIssue]:
    """Every non-empty dq_* relation of schema main with its row count and counts per issue."""
    out = []
    for name in sorted(n for n in wh.relations() if n.startswith("dq_")):
        (n,) = wh.con.execute(f'SELECT count(*) FROM main."{name}"').fetchone()  # type: ignore[misc]
        if not n:
            continue
        kind_col = next((c for c in DQ_KIND_COLUMNS if wh.has(name, c)), None)
        kinds: list[tuple[str, int]] = []
        if kind_col:
            kinds = [(str(k), int(c)) for k, c in wh.con.execute(
                f'SELECT "{kind_col}", count(*) AS c FROM main."{name}" GROUP BY 1 ORDER BY c DESC, 1').fetchall()]
        out.append(DqIssue(mart=name, n_rows=int(n), kinds=kinds))
    return out


def prepare(wh: Warehouse) -> list[DqIssue]:
    """The checks every report runs first: marts present, not empty, current; then the dq warnings."""
    check_fresh(wh)
    return dq_issues(wh)
