"""The Inspect part of one ingest: read every ``--inspect-log`` (before the transaction), then write
the items the logs carry (inside it). The runs themselves go through the shared run path.

Items: each ``inspect:<task>`` benchmark's items are the union of the samples its loaded logs
carry (``raw.inspect_items``); its release in ``raw.benchmarks`` hashes the task name and those
items. A sample id that comes back with another input, target or metadata is refused (``--force``
replaces the item). Logs of the project's AgentHop task are AgentHop runs: they are checked against
the loaded AgentHop release like any run and carry no items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from agenthop.ingest import ddl
from agenthop.ingest import runs as runsmod
from agenthop.ingest.conform import IngestError
from agenthop.ingest.progress import Progress
from agenthop.ingest.runs import RunData
from agenthop.schemas.sample_hash import references, sample_hash

from . import inspect_import, inspect_map, inspect_read
from .inspect_bounds import ImportBudget, limits_from_env

ITEMS_TABLE = "inspect_items"
_ITEM_FIELDS = ("input", "target", "metadata_json")


@dataclass
class InspectPlan:
    datas: list[RunData] = field(default_factory=list)
    #: benchmark -> every item it holds after this ingest (loaded ones and new ones); only changed ones
    items: dict[str, pa.Table] = field(default_factory=dict)
    #: reasons samples were loaded incompletely (also in each run's config_json import_notes)
    notes: list[str] = field(default_factory=list)
    #: the logs' rows of the metric catalogue (``raw.metric_defs``), in log order
    metric_defs: list[dict] = field(default_factory=list)


def items_ddl() -> str:
    cols = ", ".join(
        f"{f.name} {ddl.duckdb_type(f.type)}{'' if f.nullable else ' NOT NULL'}" for f in inspect_import.ITEMS
    )
    return f"CREATE TABLE IF NOT EXISTS {ddl.RAW}.{ITEMS_TABLE} ({cols}, PRIMARY KEY (benchmark, sample_id))"


def loaded_items(con: duckdb.DuckDBPyConnection, benchmark: str) -> dict[str, dict]:
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
        [ddl.RAW, ITEMS_TABLE],
    ).fetchall()[0][0]
    if not exists:
        return {}
    cur = con.execute(f"SELECT * FROM {ddl.RAW}.{ITEMS_TABLE} WHERE benchmark = ? ORDER BY item_order", [benchmark])
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    return {r["sample_id"]: r for r in rows}


def _check_agenthop(rd: RunData, checks: runsmod.Checks) -> None:
    where = f"{rd.source} (epoch {rd.run_id.rsplit('-e', 1)[-1]})"
    runsmod.check_benchmark(rd.run_id, rd.benchmark_sha256, checks, where)
    assert rd.tables is not None
    for name, table in rd.tables.items():
        if name in ("runs", "scores"):
            continue
        runsmod.validate_table(name, table, rd.run_id, checks, f"{where} {name}")


def _loaded_runs(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, tuple[str, str]]:
    """run_id -> (model, benchmark) of the loaded runs among ``run_ids``."""
    if not run_ids:
        return {}
    con.register("__inspect_run_ids", pa.table({"run_id": pa.array(run_ids, pa.string())}))
    try:
        rows = con.execute(f"SELECT run_id, model, benchmark FROM {ddl.RAW}.runs "
                           "WHERE run_id IN (SELECT run_id FROM __inspect_run_ids)").fetchall()
    finally:
        con.unregister("__inspect_run_ids")
    return {r: (m, b) for r, m, b in rows}


def check_replacements(con: duckdb.DuckDBPyConnection, path: Path, header: dict, run_ids: list[str],
                       loaded_hashes: dict[str, str], replace_changed: bool) -> None:
    """A log whose runs ``run_ids`` would replace loaded runs of another model or task is refused
    unless ``replace_changed`` (``--replace-changed``): one eval id reused for another eval is a
    mistake. Checked from the log's header, before any of its rows is written."""
    if replace_changed:
        return
    model = str(header["eval"].get("model") or "unknown")
    benchmark = inspect_map.benchmark_of(header)
    for run_id, (loaded_model, loaded_benchmark) in _loaded_runs(con, sorted(r for r in run_ids if r in loaded_hashes)).items():
        if (model, benchmark) != (loaded_model, loaded_benchmark):
            raise IngestError(
                f"{path}: run {run_id} is loaded as model {loaded_model} on {loaded_benchmark}; this log would replace "
                f"it with model {model} on {benchmark} (same eval id); pass --replace-changed to replace it"
            )


def prepare(
    con: duckdb.DuckDBPyConnection,
    paths: Sequence[Path],
    checks: runsmod.Checks,
    loaded_hashes: dict[str, str],
    score: str | None = None,
    reader: str = "auto",
    progress: Progress | None = None,
    replace_changed: bool = False,
    sink: inspect_import.Sink | None = None,
    wait: Callable[[], None] = lambda: None,
) -> InspectPlan:
    """Read, map and check every log below ``paths``: nothing is written, or with a ``sink`` (the
    open write transaction, docs/inspect.md#memory) the rows of each batch of samples as it is mapped.
    ``wait`` is called before each query of ``con``: a sink writing on another thread returns once
    it has written what it was handed (the connection is then free)."""
    progress = progress or Progress(quiet=True)
    plan = InspectPlan()
    files = inspect_import.discover(paths)
    merged: dict[str, dict[str, dict]] = {}
    origin: dict[tuple[str, str], str] = {}
    changed: set[str] = set()
    budget = ImportBudget(limits_from_env())  # the rows of logs not streamed are held until the commit
    agenthop = [False]  # whether the log being read is one of the AgentHop task's

    def before_samples(info: inspect_read.LogInfo, run_ids: list[str]) -> None:
        wait()
        check_replacements(con, info.path, info.header, run_ids, loaded_hashes, replace_changed)
        agenthop[0] = inspect_map.benchmark_of(info.header) == inspect_map.AGENTHOP

    def checked(batch: inspect_import.StreamedBatch) -> None:
        """The AgentHop task's rows checked against its release as they go to the sink."""
        if agenthop[0]:
            for name, table in batch.tables.items():
                if name != "scores":
                    runsmod.validate_table(name, table, batch.run_id, checks, f"{batch.where} {name}")
        assert sink is not None
        sink(batch)

    for path in progress.iterate(files, "reading Inspect logs", "log"):
        lt = inspect_import.read_log(path, score, reader, loaded_hashes, budget=budget,
                                     sink=checked if sink is not None else None, before_samples=before_samples)
        wait()
        plan.notes += [f"{path}: {n}" for n in lt.notes]
        plan.datas += lt.runs
        plan.metric_defs += lt.metric_defs
        if lt.benchmark == inspect_map.AGENTHOP:
            for rd in lt.runs:
                if rd.tables is not None:
                    _check_agenthop(rd, checks)
            continue
        if lt.items is None:
            continue
        items = merged.get(lt.benchmark)
        if items is None:
            items = merged[lt.benchmark] = loaded_items(con, lt.benchmark)
            for sid in items:
                origin[(lt.benchmark, sid)] = "the warehouse"
        for item in lt.items.to_pylist():
            sid = item["sample_id"]
            old = items.get(sid)
            if old is not None and any(old[k] != item[k] for k in _ITEM_FIELDS):
                if not checks.force:
                    raise IngestError(
                        f"{path}: sample {sid!r} of {lt.benchmark} has another input, target or metadata "
                        f"than the item loaded from {origin[(lt.benchmark, sid)]}; pass --force to replace it"
                    )
                old = None
            if old is None:
                order = items[sid]["item_order"] if sid in items else len(items)
                items[sid] = {**item, "item_order": order}
                origin[(lt.benchmark, sid)] = str(path)
                changed.add(lt.benchmark)
    for benchmark in sorted(changed):
        rows = sorted(merged[benchmark].values(), key=lambda r: r["item_order"])
        plan.items[benchmark] = pa.Table.from_pylist(rows, schema=inspect_import.ITEMS)
    return plan


def release_sha256(benchmark: str, items: pa.Table) -> str:
    """The items' hash of an imported benchmark (``inspect:<task>``, ``eee:<name>``, ``atif:<task>``)."""
    if benchmark.startswith(inspect_map.BENCHMARK_PREFIX):
        benchmark = benchmark[len(inspect_map.BENCHMARK_PREFIX):]
    return inspect_map.items_sha256(benchmark, items.to_pylist())


def _fill_hashes(con: duckdb.DuckDBPyConnection) -> None:
    """Give the table the ``sample_hash`` column when a warehouse of an earlier version lacks it, and every
    item without a hash its hash (docs/interchange.md#sample-hash)."""
    cols = {r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ?",
        [ddl.RAW, ITEMS_TABLE]).fetchall()}
    if "sample_hash" not in cols:
        con.execute(f"ALTER TABLE {ddl.RAW}.{ITEMS_TABLE} ADD COLUMN sample_hash VARCHAR").fetchall()
    rows = con.execute(f"SELECT benchmark, sample_id, input, target FROM {ddl.RAW}.{ITEMS_TABLE} "
                       "WHERE sample_hash IS NULL").fetchall()
    if not rows:
        return
    fill = pa.table({"benchmark": [r[0] for r in rows], "sample_id": [r[1] for r in rows],
                     "sample_hash": [sample_hash(r[2] or "", references(r[3])) for r in rows]})
    con.register("__item_hashes", fill)
    try:
        con.execute(f"UPDATE {ddl.RAW}.{ITEMS_TABLE} AS i SET sample_hash = h.sample_hash FROM __item_hashes AS h "
                    "WHERE i.benchmark = h.benchmark AND i.sample_id = h.sample_id").fetchall()
    finally:
        con.unregister("__item_hashes")


def write(con: duckdb.DuckDBPyConnection, plan: InspectPlan, now: datetime) -> dict[str, int]:
    """Inside the ingest transaction: the changed benchmarks' items and catalogue rows."""
    con.execute(items_ddl()).fetchall()
    _fill_hashes(con)  # a table of an earlier version gains the column and its items their hashes
    counts = {}
    has_catalogue = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = 'benchmarks'",
        [ddl.RAW],
    ).fetchall()[0][0]
    for benchmark, items in plan.items.items():
        con.execute(f"DELETE FROM {ddl.RAW}.{ITEMS_TABLE} WHERE benchmark = ?", [benchmark]).fetchall()
        counts[benchmark] = items.num_rows
        sha = release_sha256(benchmark, items)
        con.register("__inspect_items", items)
        con.execute(f"INSERT INTO {ddl.RAW}.{ITEMS_TABLE} BY NAME SELECT * FROM __inspect_items").fetchall()
        con.unregister("__inspect_items")
        if has_catalogue:
            con.execute("DELETE FROM raw.benchmarks WHERE benchmark = ?", [benchmark]).fetchall()
            con.execute("INSERT INTO raw.benchmarks (benchmark, version, sha256, n_items, loaded_at) "
                        "VALUES (?, NULL, ?, ?, ?)", [benchmark, sha, items.num_rows, now]).fetchall()
    if plan.items:
        _fill_hashes(con)
    return counts


def summary_notes(plan: InspectPlan, limit: int = 10) -> str:
    """The reasons samples loaded incompletely, for the end of the ingest summary."""
    if not plan.notes:
        return ""
    shown = plan.notes[:limit]
    more = f"\n  ... and {len(plan.notes) - limit} more (runs.config_json -> import_notes)" if len(plan.notes) > limit else ""
    return "loaded with a recorded reason:\n  " + "\n  ".join(shown) + more

