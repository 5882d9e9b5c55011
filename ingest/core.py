"""One ingest invocation: read and validate every input, then write it in one transaction.

Order: (1) find the inputs and hash them, (2) open the warehouse and read its state, (3) parse and
validate everything that changed, including the data-quality rules of schemas/quality.py (nothing
is committed yet; a violation refuses the whole ingest unless ``accept_dq``), (4) BEGIN; create the layout if needed;
replace the benchmark and the changed runs; log; COMMIT. With reference JSON the transaction opens
during (3) instead: each changed run is inserted as soon as it is validated, while later folders
are still parsed (``_EarlyWrite``), and (4) adds the rest; with Inspect logs it opens at the first
batch of their rows, each batch inserted as it is mapped (``_EarlyWrite.stream``, docs/inspect.md#memory).
Any error or refusal before COMMIT rolls back and leaves the warehouse file as it was (see
warehouse.py).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from . import ddl
from . import quality
from . import reference_json as refjson
from . import runs as runsmod
from agenthop.harness import benchmarks
from agenthop.harness.benchmarks import Benchmark, ReleaseTables
from agenthop.harness.errors import AgentHopError
from agenthop.schemas.sample_hash import sample_hash
from agenthop.schemas.trajectory import DEFAULT_BENCHMARK, KEYS

from .conform import IngestError, find_duplicate, format_key
from .metric_catalogue import write_catalogue
from .progress import Progress
from .sources import inspect_import, inspect_ingest, interchange_ingest
from .sources.agenthop_release import reference_lookup
from .stream_writer import StreamWriter
from .transcripts.index import index_streamed, sync_index
from .transcripts.prepared import run_units
from .warehouse import (
    WarehouseState,
    insert_arrow,
    json_counts,
    open_warehouse,
    read_state,
    release_arrow_memory,
    transaction,
)

LAYOUT_VERSION = "1"

#: A write of more rows than this gets a progress line off a terminal.
BIG_WRITE_ROWS = 1_000_000
#: DuckDB's memory while an imported log's rows are streamed into the open transaction
#: (``_EarlyWrite.stream``; docs/inspect.md#memory)
STREAM_MEMORY_LIMIT = "256MB"
#: DuckDB's memory while the search index takes in the runs a streamed import wrote (each group of
#: samples, ``_EarlyWrite._index_streamed``, and ``sync_index`` at the end of the transaction): under the
#: streaming cap its sorts and hash tables spill to disk
#: (at 8,000 samples about 3 of the import's 23 CPU seconds); at 512 MB they mostly do not, and the peak RSS
#: stays well under the import's 2 GB target (docs/inspect.md#memory)
INDEX_MEMORY_LIMIT = "512MB"
#: streamed samples whose data-quality rules are checked together (their rows are held until then)
STREAM_CHECK_SAMPLES = 2048
#: A release larger than this gets a progress line while it is parsed.
BIG_BENCHMARK_BYTES = 50_000_000


@dataclass(slots=True)
class IngestResult:
    db: Path
    benchmark_action: str | None = None
    run_actions: Counter = field(default_factory=Counter)
    rows: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    #: data-quality violations loaded with accept_dq (recorded in raw.dq_issues)
    dq_issues: int = 0
    #: samples of imported logs loaded with a recorded reason (docs/inspect.md#damaged-logs)
    notes: str = ""
    #: what benchmarks' own inputs (``load_imports``) did, one part each
    imported: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = []
        if self.benchmark_action:
            parts.append(f"benchmark {self.benchmark_action}")
        if sum(self.run_actions.values()):
            parts.append(
                f"runs {self.run_actions['inserted']} inserted, {self.run_actions['replaced']} replaced, "
                f"{self.run_actions['unchanged']} unchanged"
            )
        parts += [p for p in self.imported if p]
        rows = " ".join(f"{t}={n}" for t, n in self.rows.items())
        what = "; ".join(parts) or "nothing to do"
        out = f"ingested into {self.db} in {self.seconds:.1f} s: {what}; rows loaded: {rows}"
        if self.dq_issues:
            out += f"; {self.dq_issues} data-quality violation(s) accepted, listed in raw.dq_issues"
        return out + (f"\n{self.notes}" if self.notes else "")


@dataclass(slots=True)
class _Plan:
    """Everything validated and ready to write."""

    benchmark: Path | None
    bench_content: str | None
    bench_action: str | None
    bench: ReleaseTables | None
    datas: list[runsmod.RunData]
    #: run_ids whose rows are replaced
    replaced: list[str]
    #: run table -> rows of every changed run
    combined: dict[str, pa.Table]
    #: violations accepted with --accept-dq (quality.ISSUE_SCHEMA)
    dq_issues: pa.Table
    #: the benchmark's source as the user named it (ingest_log.source)
    benchmark_source: str = ""
    #: items and notes of Inspect logs (docs/inspect.md)
    inspect: inspect_ingest.InspectPlan = field(default_factory=inspect_ingest.InspectPlan)
    #: reported results of interchange files (their runs are in datas, their items in inspect.items)
    interchange: interchange_ingest.InterchangePlan = field(default_factory=interchange_ingest.InterchangePlan)
    #: the benchmark of the release given (``--benchmark``), and ``--force``
    bench_name: str | None = None
    force: bool = False
    #: benchmark -> kind -> paths of the inputs benchmarks load themselves (``load_imports``)
    imports: dict[str, dict[str, list[Path]]] = field(default_factory=dict)
    #: the user's metric settings: (name, direction) and primary metric names (ingest/metric_catalogue.py)
    metric_directions: Sequence[tuple[str, str]] = ()
    primary_metrics: Sequence[str] = ()


def _dedupe(paths: Sequence[Path]) -> list[Path]:
    seen: dict[Path, None] = {}
    for p in paths:
        seen.setdefault(p.resolve(), None)
    return list(seen)


def _releases(
    con: duckdb.DuckDBPyConnection, state: WarehouseState, bt: ReleaseTables | None
) -> dict[str, runsmod.LoadedRelease]:
    """Every release runs can be checked against: the warehouse's, with the one being loaded."""
    out: dict[str, runsmod.LoadedRelease] = {}
    for name, sha in state.releases.items():
        try:
            bench = benchmarks.get(name)
        except AgentHopError:
            continue  # a benchmark this installation does not know: its runs are refused by name
        ids = con.sql(bench.item_ids_sql).to_arrow_table().column(0).combine_chunks()
        out[name] = runsmod.LoadedRelease(sha, ids)
    if bt is not None:
        ids = _release_item_ids(bt)
        out[bt.benchmark] = runsmod.LoadedRelease(bt.sha256, ids)
    return out


def _release_item_ids(bt: ReleaseTables) -> pa.Array:
    """The item ids of a release being loaded, by its benchmark's query over its own tables."""
    con = duckdb.connect()
    try:
        con.execute("CREATE SCHEMA raw")
        for name, table in bt.tables.items():
            con.register(f"__t_{name}", table)
            con.execute(f"CREATE VIEW raw.{name} AS SELECT * FROM __t_{name}")
        return con.sql(benchmarks.get(bt.benchmark).item_ids_sql).to_arrow_table().column(0).combine_chunks()
    finally:
        con.close()


def _content_key(benchmark: str) -> str:
    """warehouse_meta key of a benchmark's release identity (AgentHop's predates the others)."""
    return "benchmark_content_sha256" if benchmark == DEFAULT_BENCHMARK else f"benchmark_content_sha256:{benchmark}"


def detect_release(root: Path) -> tuple[Benchmark, str]:
    """The benchmark whose release ``root`` is, and the release's content hash (no parsing)."""
    if not root.is_dir():
        raise IngestError(f"benchmark directory {root} does not exist")
    try:
        bench = benchmarks.detect(root)
    except AgentHopError as exc:
        raise IngestError(str(exc)) from None
    return bench, bench.release_content_sha256(root)


def _run_table(rd: runsmod.RunData, name: str, source: str) -> pa.Table | None:
    """One changed run's rows of ``name`` as written (raw.runs with its _partial and _source), or
    None for a source without this optional table."""
    assert rd.tables is not None
    if name not in rd.tables:
        return None
    t = rd.tables[name]
    if name == "runs":
        n = t.num_rows
        t = t.append_column(ddl.RUNS_EXTRA.field("_partial"), pa.array([rd.partial] * n, pa.bool_()))
        t = t.append_column(ddl.RUNS_EXTRA.field("_source"), pa.array([source] * n, pa.string()))
    return t


def _combine(changed: Sequence[runsmod.RunData], free: bool = True,
             rename: Callable[[str], str] | None = None) -> tuple[dict[str, pa.Table], dict[str, quality.Segments]]:
    """Concatenate the changed runs' tables per run table, with where their rows came from.

    Frees each run's own tables unless ``free`` is false; ``rename`` maps each run's source first
    (the sources of runs not renamed yet).
    """
    parts: dict[str, list[pa.Table]] = {name: [] for name in ddl.RUN_TABLES}
    segments = {name: quality.Segments() for name in ddl.RUN_TABLES}
    for rd in changed:
        assert rd.tables is not None and rd.segments is not None
        for name in ddl.RUN_TABLES:
            if name in rd.segments:
                segments[name].extend(rd.segments[name])
        for name in ddl.RUN_TABLES:
            t = _run_table(rd, name, rd.source if rename is None else rename(rd.source))
            if t is not None:
                parts[name].append(t)
        if free:
            rd.tables = None
            rd.segments = None
    combined = {
        name: pa.concat_tables(ts) if ts else ddl.warehouse_schema(name).empty_table()
        for name, ts in parts.items()
    }
    return combined, segments


def _increasing(table: pa.Table, keys: Sequence[str]) -> bool:
    """Whether ``table``'s rows are in strictly increasing order of ``keys`` (so no key repeats):
    the parsers emit a run's rows in key order, so this vectorised test of neighbouring rows
    usually settles the key check without grouping (False: undecided)."""
    if table.num_rows < 2:
        return True
    if any(table.column(k).null_count for k in keys):
        return False
    later: pa.Array | None = None  # whether row i+1 sorts after row i on the keys seen so far
    tie: pa.Array | None = None  # whether rows i and i+1 are equal on the keys seen so far
    for k in keys:
        col = table.column(k)
        a, b = col.slice(0, len(col) - 1), col.slice(1)
        gt, eq = pc.greater(b, a), pc.equal(b, a)
        later = gt if later is None else pc.or_(later, pc.and_(tie, gt))
        tie = eq if tie is None else pc.and_(tie, eq)
    return bool(pc.all(later).as_py())


class _EarlyWrite:
    """The write's transaction opened while reference folders are still being parsed.

    Each changed run is inserted as soon as it is validated (reference folders as they are
    finished, the ``--runs`` runs before them at the first folder), in the order ``_combine``
    concatenates them, so every table's rows end in the same order as when all are inserted after
    the checks. The transaction opens at the first run with the layout statements the write starts
    with; a replaced run's old rows are deleted just before its new ones go in. The keys, the
    data-quality verdict and every other check still run on all runs before COMMIT: a refusal or
    any error rolls the transaction back (optimistic writes are off, so the file stays as it was).
    A DuckDB error here rolls back at once and leaves the whole write to ``_write``, which then
    fails, or succeeds, as it would have.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, state: WarehouseState, rename: Callable[[str], str],
                 fresh: bool = False) -> None:
        self.con, self.state, self.rename = con, state, rename
        #: the warehouse file is new (built under a temporary name, removed if the load fails)
        self.fresh = fresh
        #: runs whose sample rows ``stream`` inserted (run id -> source); their rows per table; the
        #: data-quality violations of each group of batches checked, per rule
        self.streamed_runs: dict[str, str] = {}
        self.streamed: Counter = Counter()
        self.stream_groups: list[list[pa.Table | None]] = []
        #: batches streamed but not checked yet (``_check_streamed``)
        self.stream_pending: list[runsmod.RunData] = []
        #: streamed runs whose units the search index holds (``_index_streamed``)
        self.indexed: set[str] = set()
        self.open = False
        self.off = False
        self.now = datetime.now(timezone.utc)
        #: changed runs to insert before the first one handed to ``add``
        self.first: list[runsmod.RunData] = []
        #: run ids inserted, in order; rows inserted per table; replaced runs whose old rows are deleted
        self.run_ids: list[str] = []
        self.rows: Counter = Counter()
        self.deleted: set[str] = set()
        #: whether a run inserted has a duplicate key (every key holds the run id, and no run is
        #: loaded twice, so without one no table of all runs has one: ``keys_checked``)
        self.duplicate = False
        self._keys: duckdb.DuckDBPyConnection | None = None
        #: the connection's thread count while the early inserts hold it at one
        self.threads: int | None = None
        #: data-quality rules run on inserted runs while this process waits for the worker
        #: (``check_quality``): runs not checked yet; the runs checked, in order, and each group's
        #: violations per rule (None once a check failed: the rules then run at the end)
        self.unchecked: list[runsmod.RunData] = []
        self.dq_runs: list[str] | None = []
        self.dq_groups: list[list[pa.Table | None]] = []

    def _keys_con(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB for the key checks (one: each new one costs about 13 ms)."""
        if self._keys is None:
            self._keys = duckdb.connect(config={"threads": 1})
        return self._keys

    def _duplicate_key(self, table: pa.Table, name: str) -> dict[str, object] | None:
        """A key that repeats in `table` (rows of table `name`), or None. Rows in key order, as the parsers
        emit them, settle it without a query; only others are grouped."""
        return None if _increasing(table, KEYS[name]) else find_duplicate(table, KEYS[name], self._keys_con())

    def keys_checked(self, changed: Sequence[runsmod.RunData]) -> bool:
        """Whether ``runs.check_keys`` over ``changed`` is known to pass (each run was checked
        while the rest was parsed)."""
        return self.open and not self.duplicate and len(self.run_ids) == len(changed)

    def add(self, rd: runsmod.RunData) -> None:
        if self.off or rd.tables is None:
            return
        try:
            if not self.open:
                self._begin()
                first, self.first = self.first, []
                for prior in first:
                    self._insert(prior)
            self._insert(rd)
        except Exception:  # DuckDB's error, or any other: _write reports it as it would have
            self.rollback()
            self.off = True

    def _begin(self) -> None:
        self.con.execute("BEGIN TRANSACTION")
        self.open = True
        self._one_thread()
        self.now = datetime.now(timezone.utc)
        _layout(self.con, self.state, self.now)

    def stream(self, batch: inspect_import.StreamedBatch) -> None:
        """Insert one batch of an imported log's rows as it is mapped (the transaction opens at the
        first), so an import's memory does not grow with the log (docs/inspect.md#memory). The batch's
        keys and data-quality rules are checked on it (the rules look at one sample at a time, and a
        batch holds whole samples); keys across batches by :meth:`check_streamed_keys`."""
        if not self.open:
            self._begin()
            # DuckDB keeps the rows of an open transaction in its buffer pool: cap it (it spills to
            # a temporary file beside the warehouse). A new warehouse file, removed if the load
            # fails, takes each full row group into the file at once (optimistic writes).
            self.con.execute(f"SET memory_limit = '{STREAM_MEMORY_LIMIT}'")
            if self.fresh:
                self.con.execute("SET enable_optimistic_write = true")
        if batch.run_id not in self.streamed_runs:
            self.streamed_runs[batch.run_id] = batch.source
            if batch.run_id in self.state.run_benchmarks and batch.run_id not in self.deleted:
                _delete_runs(self.con, [batch.run_id])
                self.deleted.add(batch.run_id)
        for name, table in batch.tables.items():
            key = self._duplicate_key(table, name)
            if key is not None:
                raise IngestError(f"{batch.source}: duplicate key in {name}: {format_key(key)}")
        rd = runsmod.RunData(inspect_import.KIND, batch.source, batch.run_id, "", batch.partial, "",
                             {"runs": batch.runs, **batch.tables})
        rd.segments = {name: quality.Segments() for name in rd.tables}
        for name, table in batch.tables.items():
            rd.segments[name].add(batch.source, table.num_rows, "json")
            insert_arrow(self.con, name, table, on_one_thread=True)
            self.streamed[name] += table.num_rows
        self.stream_pending.append(rd)
        if sum(r.tables["trajectories"].num_rows for r in self.stream_pending if r.tables) >= STREAM_CHECK_SAMPLES:
            self._check_streamed()

    def _check_streamed(self) -> None:
        """The data-quality rules over the batches streamed since the last check (a group of them:
        each check has a fixed cost of its own)."""
        if not self.stream_pending:
            return
        pending, self.stream_pending = self.stream_pending, []
        seen: set[str] = set()
        for rd in pending:  # each run's row once (the rules join it)
            if rd.run_id in seen and rd.tables is not None and rd.segments is not None:
                rd.tables.pop("runs", None)
                rd.segments.pop("runs", None)
            seen.add(rd.run_id)
        self._index_streamed(pending)
        per_rule = quality.issues_by_rule(*_combine(pending, rename=self.rename))
        # the runs' own rows are checked once, as written at the end
        self.stream_groups.append([None if t is None or t.column("table_name")[0].as_py() == "runs" else t
                                   for t in per_rule])

    def _index_streamed(self, pending: list[runsmod.RunData]) -> None:
        """The search index takes in a group of streamed batches at once, from their rows in memory,
        while the next batches are read (docs/search.md#index): not all at the end of the transaction."""
        by_run: dict[str, list[runsmod.RunData]] = {}
        for rd in pending:
            by_run.setdefault(rd.run_id, []).append(rd)
        units = []
        for run_id, parts in by_run.items():
            tables = {name: pa.concat_tables([rd.tables[name] for rd in parts if rd.tables and name in rd.tables]
                                             or [ddl.warehouse_schema(name).empty_table()])
                      for name in ("turns", "tool_calls", "messages")}
            units.append(run_units(self._keys_con(), run_id, tables["turns"], tables["tool_calls"], tables["messages"]))
        first = [run_id for run_id in by_run if run_id not in self.indexed]
        self.con.execute(f"SET memory_limit = '{INDEX_MEMORY_LIMIT}'")  # as the index at the end has
        try:
            index_streamed(self.con, units, first)
        finally:
            self.con.execute(f"SET memory_limit = '{STREAM_MEMORY_LIMIT}'")
        self.indexed.update(first)

    def check_streamed_keys(self) -> None:
        """No key of the streamed runs repeats across their batches: a sample's rows all come in one
        batch, and every key of its turns, calls and messages holds its trajectory's key, so it is
        enough to look at the trajectories and scores written."""
        if not self.streamed_runs:
            return
        self.con.register("__streamed_runs", pa.table({"run_id": pa.array(list(self.streamed_runs), pa.string())}))
        try:
            for name in ("trajectories", "scores"):
                cols = ", ".join(KEYS[name])
                found = self.con.execute(
                    f"SELECT {cols} FROM {ddl.RAW}.{name} WHERE run_id IN (SELECT run_id FROM __streamed_runs) "
                    f"GROUP BY ALL HAVING count(*) > 1 LIMIT 1").fetchall()
                if found:
                    key = dict(zip(KEYS[name], found[0]))
                    raise IngestError(f"{self.streamed_runs[str(key['run_id'])]}: duplicate key in {name}: "
                                      f"{format_key(key)}")
        finally:
            self.con.unregister("__streamed_runs")

    def _one_thread(self) -> None:
        """Put the connection on one thread for all early inserts (``insert_arrow`` would switch
        to one thread and back for each, about 1 ms each way); ``restore_threads`` undoes it."""
        self.threads = int(self.con.execute("SELECT current_setting('threads')").fetchall()[0][0])
        self.con.execute("SET threads = 1")

    def restore_threads(self) -> None:
        if self.threads is not None:
            threads, self.threads = self.threads, None
            self.con.execute(f"SET threads = {threads}")

    def _insert(self, rd: runsmod.RunData) -> None:
        if rd.run_id in self.state.run_benchmarks and rd.run_id not in self.deleted:
            _delete_runs(self.con, [rd.run_id])
            self.deleted.add(rd.run_id)
        for name in ddl.RUN_TABLES:
            t = _run_table(rd, name, self.rename(rd.source))
            if t is not None:
                insert_arrow(self.con, name, t, on_one_thread=True)  # _one_thread set it
                self.rows[name] += t.num_rows
                if not self.duplicate and self._duplicate_key(t, name) is not None:
                    self.duplicate = True
        self.run_ids.append(rd.run_id)
        self.unchecked.append(rd)

    def check_quality(self) -> None:
        """Run the data-quality rules on the runs inserted since the last call (while this process
        would wait for the worker): the rules look at one run at a time, so the verdict at the end
        only has the runs inserted after the last call left to check (``issues``)."""
        if not self.open or self.dq_runs is None or not self.unchecked:
            return
        runs, self.unchecked = self.unchecked, []
        try:
            self.dq_groups.append(quality.issues_by_rule(*_combine(runs, free=False, rename=self.rename)))
        except Exception:  # the check at the end finds (or reports) it
            self.dq_runs, self.dq_groups = None, []
            return
        self.dq_runs += [rd.run_id for rd in runs]

    def issues(self, changed: Sequence[runsmod.RunData]) -> pa.Table | None:
        """``quality.find_issues`` of all of ``changed``, from the groups already checked and the
        rest (before ``_combine`` frees the runs' tables), or None: the caller runs it."""
        self._check_streamed()
        if self.stream_groups:  # the streamed batches, then the rest (no run is both: ``stream``)
            return quality.merge_issues([*self.stream_groups, quality.issues_by_rule(*_combine(changed, free=False))])
        done = self.dq_runs
        if not self.open or done is None or done != [rd.run_id for rd in changed[: len(done)]]:
            return None
        rest = changed[len(done):]
        try:
            groups = self.dq_groups + ([quality.issues_by_rule(*_combine(rest, free=False))] if rest else [])
        except Exception:  # reported by the check at the end, after the key check, as before
            return None
        return quality.merge_issues(groups)

    def covers(self, changed: Sequence[runsmod.RunData]) -> bool:
        """Whether what was inserted is the first runs of ``changed`` (else roll back: the write
        does it all)."""
        if self.open and self.run_ids != [rd.run_id for rd in changed[: len(self.run_ids)]]:
            self.rollback()
        return self.open

    def rollback(self) -> None:
        """Undo everything inserted (nothing if the transaction is not open); close the key checks."""
        if self._keys is not None:
            self._keys.close()
            self._keys = None
        if self.open:
            self.open = False
            self.run_ids, self.rows, self.deleted, self.duplicate = [], Counter(), set(), False
            self.unchecked, self.dq_runs, self.dq_groups = [], [], []
            self.streamed_runs, self.streamed, self.stream_groups, self.stream_pending = {}, Counter(), [], []
            self.indexed = set()
            try:
                self.con.execute("ROLLBACK")
                self.restore_threads()
            except duckdb.Error:
                pass


def run_ingest(
    db: Path,
    *,
    benchmark: Path | None = None,
    runs: Sequence[Path] = (),
    reference_json: Sequence[Path] = (),
    inspect_logs: Sequence[Path] = (),
    inspect_score: str | None = None,
    inspect_reader: str = "auto",
    inspect_replace_changed: bool = False,
    partial: bool = False,
    force: bool = False,
    accept_dq: bool = False,
    progress: Progress | None = None,
    rename: Callable[[str], str] | None = None,
    imports: Mapping[str, Sequence[Path]] | None = None,
    metric_directions: Sequence[tuple[str, str]] = (),
    primary_metrics: Sequence[str] = (),
    interchange: Mapping[str, Sequence[Path]] | None = None,
) -> IngestResult:
    """Load the given inputs into the warehouse at ``db`` in one transaction (module docstring).

    ``imports``: inputs of a kind that one benchmark loads itself (``--responses`` files: kind
    ``responses``), by the ``load_imports`` hook of the benchmark that declares the kind, inside the
    same transaction. ``rename`` maps the text of a local path to the name the user gave (an ``s3://`` URL read
    through a temporary copy) in recorded sources and in error messages. ``metric_directions`` ((name,
    direction) pairs) and ``primary_metrics`` are the user's metric settings, applied after everything
    else in the same transaction (ingest/metric_catalogue.py); alone, they need an existing warehouse.
    ``interchange``: format (``eee``, ``atif``) -> files or folders (docs/interchange.md#importing).
    """
    inspect_args = (inspect_logs, inspect_score, inspect_reader, inspect_replace_changed)
    exchange = {k: list(v) for k, v in (interchange or {}).items() if v}
    own = _imports_by_benchmark(imports or {})
    settings = (tuple(metric_directions), tuple(primary_metrics))
    if (settings[0] or settings[1]) and not db.exists() and benchmark is None and not runs and not reference_json \
            and not inspect_logs and not own and not exchange:
        raise IngestError(f"warehouse {db} does not exist: metric settings apply to a loaded warehouse")
    if rename is None:
        return _run_ingest(db, benchmark, runs, reference_json, partial, force, accept_dq, progress, str, inspect_args,
                           own, settings, exchange)
    try:
        return _run_ingest(db, benchmark, runs, reference_json, partial, force, accept_dq, progress, rename,
                           inspect_args, own, settings, exchange)
    except IngestError as exc:
        raise IngestError(rename(str(exc))) from None


def _imports_by_benchmark(imports: Mapping[str, Sequence[Path]]) -> dict[str, dict[str, list[Path]]]:
    """benchmark name -> kind -> paths, for the kinds given (each kind loaded by the benchmark declaring it)."""
    out: dict[str, dict[str, list[Path]]] = {}
    for kind, paths in imports.items():
        if not paths:
            continue
        try:
            bench = benchmarks.importer(kind)
        except AgentHopError as exc:
            raise IngestError(str(exc)) from None
        out.setdefault(bench.name, {})[kind] = _dedupe(list(paths))
    return out


def _run_ingest(
    db: Path,
    benchmark: Path | None,
    runs: Sequence[Path],
    reference_json: Sequence[Path],
    partial: bool,
    force: bool,
    accept_dq: bool,
    progress: Progress | None,
    rename: Callable[[str], str],
    inspect_args: tuple[Sequence[Path], str | None, str, bool] = ((), None, "auto", False),
    imports: dict[str, dict[str, list[Path]]] | None = None,
    settings: tuple[Sequence[tuple[str, str]], Sequence[str]] = ((), ()),
    exchange: dict[str, list[Path]] | None = None,
) -> IngestResult:
    t0 = time.monotonic()
    progress = progress or Progress(quiet=True)
    result = IngestResult(db=db)
    # (1) inputs, before touching the warehouse
    bench, bench_content = detect_release(benchmark) if benchmark is not None else (None, None)
    run_dirs = _dedupe([d for p in runs for d in runsmod.discover(p)])
    ref_dirs = _dedupe([d for p in reference_json for d in refjson.discover(p)])
    fresh = not db.exists()
    try:
        with open_warehouse(db) as con:
            state = read_state(con, db)  # (2)
            refjson.start_workers(ref_dirs, state.run_hashes)
            early = _EarlyWrite(con, state, rename, fresh)
            try:
                plan = _prepare(
                    con, state, bench, benchmark, bench_content, run_dirs, ref_dirs, partial, force, accept_dq,
                    progress, rename, inspect_args, early, exchange or {},
                )
                result.notes = inspect_ingest.summary_notes(plan.inspect)
                n_rows = sum(t.num_rows for t in plan.combined.values())
                n_rows += sum(plan.bench.counts().values()) if plan.bench is not None else 0
                progress.phase(f"writing {n_rows:,} rows to {db}", big=n_rows > BIG_WRITE_ROWS)
                plan.imports = imports or {}
                plan.metric_directions, plan.primary_metrics = settings
                try:
                    _write(con, state, plan, result, early)  # (4)
                except duckdb.Error as exc:
                    raise IngestError(f"warehouse {db}: write failed, nothing was changed: {exc}") from None
            finally:
                early.rollback()  # a refusal or error before COMMIT: the early inserts go
    except duckdb.Error as exc:
        raise IngestError(f"warehouse {db}: {exc}") from None
    finally:
        refjson.stop_workers()
    result.seconds = time.monotonic() - t0
    return result


def _prepare_benchmark(
    state: WarehouseState,
    bench: Benchmark | None,
    benchmark: Path | None,
    bench_content: str | None,
    force: bool,
    progress: Progress,
) -> tuple[ReleaseTables | None, str | None]:
    """Parse a changed release (None if unchanged or not given) and decide its action."""
    if benchmark is None or bench is None:
        return None, None
    key = _content_key(bench.name)
    if state.meta.get(key) == bench_content:
        return None, "unchanged"
    size = sum(p.stat().st_size for p in benchmark.rglob("*") if p.is_file())
    progress.phase(f"reading benchmark {benchmark} ({size / 1e6:.0f} MB)", big=size > BIG_BENCHMARK_BYTES)
    bt = bench.release_tables(benchmark, bench_content or "")
    others = sorted(
        r for r, b in state.run_benchmarks.items()
        if b != bt.sha256 and state.run_benchmark_names.get(r) == bt.benchmark
    )
    if others and not force:
        raise IngestError(
            f"{benchmark}: benchmark {bt.sha256} differs from the one the "
            f"warehouse's {len(others)} run(s) were made on (e.g. {others[0]!r}); "
            f"use a new --db, or pass --force to replace the benchmark and keep those runs"
        )
    return bt, "replaced" if state.meta.get(key) else "inserted"


def _prepare(
    con: duckdb.DuckDBPyConnection,
    state: WarehouseState,
    bench: Benchmark | None,
    benchmark: Path | None,
    bench_content: str | None,
    run_dirs: list[Path],
    ref_dirs: list[Path],
    partial: bool,
    force: bool,
    accept_dq: bool,
    progress: Progress,
    rename: Callable[[str], str] = str,
    inspect_args: tuple[Sequence[Path], str | None, str, bool] = ((), None, "auto", False),
    early: _EarlyWrite | None = None,
    exchange: dict[str, list[Path]] | None = None,
) -> _Plan:
    """(3) Parse and validate every changed input; nothing is committed.

    Run directories are read in a background thread while the benchmark is parsed (Parquet
    decoding releases the GIL); the checks that need the benchmark run afterwards. With ``early``,
    the changed runs are inserted while reference folders are parsed (``_EarlyWrite``; not with
    Inspect logs, whose reading queries the warehouse).
    """
    stop = threading.Event()

    def read_all() -> list[runsmod.RunFiles]:
        out = []
        for d in progress.iterate(run_dirs, "reading runs", "run"):
            if stop.is_set():
                break
            out.append(runsmod.read_run_files(d, partial, state.run_hashes))
        return out

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-read") as pool:
        pending = pool.submit(read_all)
        try:
            bt, bench_action = _prepare_benchmark(state, bench, benchmark, bench_content, force, progress)
            run_files = pending.result()
        except BaseException:
            stop.set()
            raise

    checks = runsmod.Checks(releases=_releases(con, state, bt), force=force, partial=partial)
    datas = [runsmod.validate_run(rf, checks) for rf in run_files]
    del run_files

    def bench_tables() -> refjson.BenchTables | None:
        """What reference JSON needs of its release, from the release being loaded or the warehouse."""
        if checks.sample_ids is None:  # no release of the benchmark reference JSON runs are on
            return None
        new = bt.tables if bt is not None and bt.benchmark == DEFAULT_BENCHMARK else None
        return reference_lookup(con, new)

    logs, score, reader, replace_changed = inspect_args
    if ref_dirs:
        progress.phase(f"reading reference JSON ({len(ref_dirs)} folders)", big=len(ref_dirs) >= 5)
        on_folder = on_idle = None
        if early is not None and not logs:
            early.first = [rd for rd in datas if rd.tables is not None]
            on_folder, on_idle = early.add, early.check_quality
        datas += refjson.read_folders(ref_dirs, checks, state.run_hashes, bench_tables, on_folder, on_idle)

    inspect_plan = inspect_ingest.InspectPlan()
    if logs:
        if early is not None:  # the rows are written on a thread of their own while the next are read
            with StreamWriter(early.stream) as writer:
                inspect_plan = inspect_ingest.prepare(con, logs, checks, state.run_hashes, score, reader, progress,
                                                      replace_changed, sink=writer, wait=writer.drain)
                writer.drain()
        else:
            inspect_plan = inspect_ingest.prepare(con, logs, checks, state.run_hashes, score, reader, progress,
                                                  replace_changed)
        datas += inspect_plan.datas

    exchange_plan = interchange_ingest.InterchangePlan()
    if exchange:
        exchange_plan = interchange_ingest.prepare(exchange, state.run_hashes, progress)
        datas += exchange_plan.datas
        inspect_plan.items.update(interchange_ingest.merge_items(
            exchange_plan, lambda b: inspect_ingest.loaded_items(con, b), force))
        inspect_plan.metric_defs += exchange_plan.metric_defs

    by_id: dict[str, runsmod.RunData] = {}
    for rd in datas:
        rd.source = rename(rd.source)
        prev = by_id.get(rd.run_id)
        if prev is not None:
            raise IngestError(f"run {rd.run_id!r} is given twice: {prev.source} and {rd.source}")
        by_id[rd.run_id] = rd

    changed = [rd for rd in datas if rd.tables is not None]
    issues = None
    if early is not None:
        early.restore_threads()  # the reading is done: what is left of the write may have every core
        early.covers(changed)
        early.check_streamed_keys()
        issues = early.issues(changed)
    combined, segments = _combine(changed)  # the per-run tables are dropped to keep memory down
    if early is None or not early.keys_checked(changed):
        runsmod.check_keys(changed, combined)
    if issues is None:
        issues = quality.find_issues(combined, segments)
    if rename is not str and issues.num_rows:
        i = issues.schema.get_field_index("file")
        issues = issues.set_column(i, "file", pa.array([rename(f) for f in issues.column(i).to_pylist()], pa.string()))
    if issues.num_rows and not accept_dq:
        raise IngestError(quality.refusal(issues))
    return _Plan(
        benchmark=benchmark,
        benchmark_source=rename(str(benchmark.resolve())) if benchmark is not None else "",
        bench_content=bench_content,
        bench_action=bench_action,
        bench_name=bench.name if bench is not None else None,
        force=force,
        bench=bt,
        datas=datas,
        replaced=[rd.run_id for rd in changed if rd.run_id in state.run_benchmarks],
        combined=combined,
        dq_issues=issues,
        inspect=inspect_plan,
        interchange=exchange_plan,
    )


def _delete_runs(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> None:
    """Delete the rows of ``run_ids`` from every run table and raw.dq_issues (a replaced run's old rows)."""
    con.register("__ingest_replaced", pa.table({"run_id": pa.array(list(run_ids), pa.string())}))
    for name in (*ddl.RUN_TABLES, "dq_issues"):
        con.execute(f"DELETE FROM {ddl.RAW}.{name} WHERE run_id IN (SELECT run_id FROM __ingest_replaced)").fetchall()
    con.unregister("__ingest_replaced")


def _layout(con: duckdb.DuckDBPyConnection, state: WarehouseState, now: datetime) -> None:
    """The write's first statements: upgrades of an older warehouse, the layout, the catalogue."""
    for stmt in state.upgrades:  # a warehouse of an earlier version gains the later columns
        con.execute(stmt).fetchall()
    if any("sample_hash" in stmt for stmt in state.upgrades):
        _fill_item_hashes(con)
    for stmt in ddl.ddl_statements():
        con.execute(stmt)
    if state.needs_catalogue:  # its release was described only by warehouse_meta
        ids = benchmarks.get(DEFAULT_BENCHMARK).item_ids_sql
        _catalogue(con, DEFAULT_BENCHMARK, state.releases[DEFAULT_BENCHMARK], f"SELECT count(*) FROM ({ids})", now)


def _fill_item_hashes(con: duckdb.DuckDBPyConnection) -> None:
    """The ``sample_hash`` of every loaded item that lacks one (a warehouse of an earlier version), from each
    benchmark's own view of its items (docs/interchange.md#sample-hash)."""
    for bench in benchmarks.available():
        if bench.item_inputs is None or bench.item_hash_table is None:
            continue
        table, id_col = bench.item_hash_table
        found = con.execute("SELECT count(*) FROM information_schema.columns WHERE table_schema = ? AND table_name = ? "
                            "AND column_name = 'sample_hash'", [ddl.RAW, table]).fetchall()[0][0]
        if not found:
            continue
        hashes = {sid: sample_hash(text, refs) for sid, (text, refs) in bench.item_inputs(con).items()}
        if not hashes:
            continue
        con.register("__item_hashes", pa.table({"id": list(hashes), "sample_hash": list(hashes.values())}))
        try:
            con.execute(f'UPDATE {ddl.RAW}."{table}" AS t SET sample_hash = h.sample_hash FROM __item_hashes AS h '
                        f'WHERE t."{id_col}" = h.id AND t.sample_hash IS NULL').fetchall()
        finally:
            con.unregister("__item_hashes")


def _write(con: duckdb.DuckDBPyConnection, state: WarehouseState, plan: _Plan, result: IngestResult,
           early: _EarlyWrite | None = None) -> None:
    """(4) The one transaction: layout, benchmark, runs, log, meta (the transaction and the first
    runs already in place when ``early`` inserted them during the parsing)."""
    if early is not None and early.open:
        # a failure here leaves the transaction to the caller's early.rollback()
        early.restore_threads()
        _write_body(con, plan, result, load_id=state.next_load_id, now=early.now, state=state, early=early)
        early.open = False
        con.execute("COMMIT")
        return
    now = datetime.now(timezone.utc)
    with transaction(con):
        _layout(con, state, now)
        _write_body(con, plan, result, load_id=state.next_load_id, now=now, state=state, early=None)


def _write_body(con: duckdb.DuckDBPyConnection, plan: _Plan, result: IngestResult, *, load_id: int, now: datetime,
                state: WarehouseState, early: _EarlyWrite | None) -> None:
    """Everything of the write after ``_layout``, less the rows ``early`` inserted."""
    log: dict[str, list] = {f.name: [] for f in ddl.INGEST_LOG}

    def add_log(kind: str, source: str, run_id: str | None, sha: str, action: str, counts: dict[str, int]) -> None:
        row = (load_id, now, kind, source, run_id, sha, action, json_counts(counts))
        for f, v in zip(ddl.INGEST_LOG, row):
            log[f.name].append(v)

    bt = plan.bench
    bench_counts = bt.counts() if bt is not None else {}
    result.benchmark_action = plan.bench_action
    if bt is not None:
        for name in list(bt.tables):
            con.execute(f"DELETE FROM {ddl.RAW}.{name}").fetchall()
            result.rows[name] = bench_counts[name]
            insert_arrow(con, name, bt.tables.pop(name))  # the only reference: memory goes
            release_arrow_memory()
        _catalogue(con, bt.benchmark, bt.sha256, str(bt.n_items), now, bt.version)
    if plan.benchmark is not None:
        add_log(
            "benchmark",
            plan.benchmark_source,
            None,
            plan.bench_content or "",
            plan.bench_action or "unchanged",
            bench_counts,
        )
    replaced = [r for r in plan.replaced if early is None or r not in early.deleted]
    if replaced:
        _delete_runs(con, replaced)
    loaded_runs = _runs_by_benchmark(plan.combined.get("runs"))
    for name in ddl.RUN_TABLES:
        if name not in plan.combined:
            continue
        result.rows[name] = plan.combined[name].num_rows + (early.streamed[name] if early is not None else 0)
        done = early.rows[name] if early is not None else 0
        table = plan.combined.pop(name)
        insert_arrow(con, name, table.slice(done) if done else table)  # the rows early did not insert
        del table
        release_arrow_memory()
    for benchmark, n in inspect_ingest.write(con, plan.inspect, now).items():
        result.rows[f"items {benchmark}"] = n
    n_reported = interchange_ingest.write_reported(con, plan.interchange, now)
    if n_reported:
        result.rows["reported_results"] = n_reported
        for source, n in interchange_ingest.reported_by_source(plan.interchange).items():
            add_log("eee", source, None, "", "inserted", {"reported_results": n})
    _benchmark_hooks(con, plan, loaded_runs, result, add_log, plan.force)
    changed = write_catalogue(con, plan.inspect.metric_defs, plan.metric_directions, plan.primary_metrics)
    if changed:
        result.imported.append("metric settings: " + "; ".join(changed))
    issues = plan.dq_issues
    result.dq_issues = issues.num_rows
    if issues.num_rows:
        ids = pa.array([load_id] * issues.num_rows, pa.int64())
        insert_arrow(con, "dq_issues", issues.add_column(0, ddl.warehouse_schema("dq_issues").field(0), ids))
    for rd in plan.datas:
        if not rd.counts:
            action = "unchanged"
        else:
            action = "replaced" if rd.run_id in plan.replaced else "inserted"
        result.run_actions[action] += 1
        add_log(rd.kind, rd.source, rd.run_id, rd.content_sha256, action, rd.counts)
    insert_arrow(con, "ingest_log", pa.table(log, schema=ddl.INGEST_LOG))
    if early is not None and early.streamed_runs:  # the streaming cap would make the index spill
        con.execute(f"SET memory_limit = '{INDEX_MEMORY_LIMIT}'")
    # the search index follows the runs written and replaced (docs/search.md#index), taking the units
    # of runs whose tables were held in memory from there
    held = {rd.run_id: rd.units for rd in plan.datas if rd.units is not None}
    for rd in plan.datas:
        rd.units = None
    sync_index(con, held, early.indexed if early is not None else ())

    meta = {"layout_version": LAYOUT_VERSION, "duckdb_version": duckdb.__version__}
    if bt is not None:
        meta[_content_key(bt.benchmark)] = bt.content_sha256
        if bt.benchmark == DEFAULT_BENCHMARK:  # the keys of warehouses from before raw.benchmarks
            meta.update(benchmark_sha256=bt.sha256, benchmark_source=str(Path(bt.root).resolve()))
    for key, value in meta.items():
        if state.meta.get(key) != value:
            con.execute("DELETE FROM raw.warehouse_meta WHERE key = ?", [key]).fetchall()
            con.execute("INSERT INTO raw.warehouse_meta VALUES (?, ?)", [key, value]).fetchall()


def _runs_by_benchmark(runs: pa.Table | None) -> dict[str, list[str]]:
    """benchmark -> run ids of the runs being written."""
    out: dict[str, list[str]] = {}
    if runs is None or not runs.num_rows:
        return out
    names = runs.column("benchmark").to_pylist() if "benchmark" in runs.column_names else [DEFAULT_BENCHMARK] * runs.num_rows
    for run_id, name in zip(runs.column("run_id").to_pylist(), names):
        out.setdefault(name or DEFAULT_BENCHMARK, []).append(run_id)
    return out


def _benchmark_hooks(con: duckdb.DuckDBPyConnection, plan: _Plan, loaded_runs: dict[str, list[str]],
                     result: IngestResult, add_log: Callable[..., None], force: bool) -> None:
    """Inside the transaction: each benchmark's tables derived from its runs just written
    (``on_runs_loaded``), then its own inputs (``load_imports``; also called when its release was loaded)."""
    for name, run_ids in loaded_runs.items():
        try:
            bench = benchmarks.get(name)
        except AgentHopError:
            continue
        if bench.on_runs_loaded is not None:
            for table, n in bench.on_runs_loaded(con, run_ids).items():
                result.rows[table] = result.rows.get(table, 0) + n
    names = set(plan.imports)
    if plan.bench is not None or plan.bench_action is not None:
        names.add(plan.bench_name)
    for name in sorted(n for n in names if n):
        bench = benchmarks.get(name)
        if bench.load_imports is None:
            continue
        out = bench.load_imports(con, plan.imports.get(name, {}), force=force,
                                 release_loaded=plan.bench_name == name and plan.bench_action in ("inserted", "replaced"))
        for table, n in out.rows.items():
            result.rows[table] = result.rows.get(table, 0) + n
        result.imported.append(out.summary)
        for kind, source, n, action in out.log:
            add_log(kind, source, None, "", action, {"lines": n})


def _catalogue(con: duckdb.DuckDBPyConnection, benchmark: str, sha: str, n_items_sql: str, now: datetime,
               version: str | None = None) -> None:
    """Record ``benchmark``'s loaded release in raw.benchmarks (replacing its previous one)."""
    con.execute("DELETE FROM raw.benchmarks WHERE benchmark = ?", [benchmark]).fetchall()
    con.execute(
        f"INSERT INTO raw.benchmarks (benchmark, version, sha256, n_items, loaded_at) "
        f"SELECT ?, ?, ?, ({n_items_sql}), ?",
        [benchmark, version, sha, now],
    ).fetchall()
