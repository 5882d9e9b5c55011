"""Import reference-harness trajectory JSON (the reference harness) into the raw run tables.

``--reference-json`` takes ``experiments/`` (every model folder below it) or one ``<model>/``
folder. Each ``<sample_id>.json`` (``summary.json`` skipped as a trajectory, read for metadata) and
each ``_failed_attempts/<sample_id>.attempt_<k>.json`` becomes rows of raw.trajectories, turns,
tool_calls and messages; each folder becomes one raw.runs row. What the reference does not record
(status, resolved section, output length) is derived from the recorded outputs; see docs/ingest.md.

Speed: the files are parsed on every core (this process and a process pool of one worker per other
core, over runs of consecutive samples, each task running ingest/reference_bulk.py); a task reads
each file once, hashing the bytes it decodes (the folder's content hash is built from those per-file
hashes, see folder_hash). The tasks return Arrow tables; as soon as a folder's last task is in, its
tables are concatenated, resolved against the benchmark's sections (SectionIndex) and conformed in
bulk while the other tasks are parsed, and handed to the ingest (``on_folder``), which inserts them
meanwhile. Small imports skip the pool (its start-up would cost more than it saves).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import re
import shutil
import sys
import tempfile
import threading
from collections import defaultdict
from collections.abc import Callable, Container, Iterator, Sequence
from contextlib import contextmanager
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from agenthop.schemas import trajectory as tschema

from .conform import IngestError, conform
from .quality import Segments
from . import reference_bulk
from .reference_bulk import expand_ranges, parse_task, spooled_task
from .reference_parse import (ALIAS_COLUMN, INT32_MAX, INT64_MAX, UNIT_TURN_COLUMN, ParseError, Sample, load_json,
                              task_schema)
from .reference_parse import status_of as status_of  # re-exported: the status rule lives there
from .runs import Checks, RunData, check_benchmark, validate_table
from .transcripts.prepared import held_units, run_units

BACKEND = "reference-json"
SUMMARY = "summary.json"
FAILED_DIR = "_failed_attempts"
FAILED_RE = re.compile(r"^(.+)\.attempt_(\d+)\.json$")

#: Reference defaults (the reference harness), used when summary.json has no config.
DEFAULT_BUDGET = 30
DEFAULT_MAX_TURNS = 20
DEFAULT_MAX_TOTAL_TOKENS = 200_000

#: Samples per worker task, and the fewest samples for which a process pool is worth starting.
TASK_SAMPLES = 250
POOL_MIN_SAMPLES = 1500

#: (graph nodes: sample_id, paper_id, arxiv_id; sections: arxiv_id, section_index, header, n_chars)
BenchTables = tuple[pa.Table, pa.Table]


# --------------------------------------------------------------------------------------------
# discovery and identity


def _json_names(folder: Path) -> list[str]:
    """The ``*.json`` regular files directly in ``folder``, sorted by name (one directory scan:
    pathlib's glob, stat and sort cost more than the parsing of small folders)."""
    try:
        with os.scandir(folder) as entries:
            return sorted(e.name for e in entries if e.name.endswith(".json") and e.is_file())
    except (FileNotFoundError, NotADirectoryError):
        return []


def _has_samples(folder: Path) -> bool:
    """Whether ``folder`` holds a trajectory file (a ``*.json`` other than summary.json)."""
    return any(n != SUMMARY for n in _json_names(folder))


def discover(path: Path) -> list[Path]:
    """``path`` if it is a model folder (holds trajectory JSON), else its model subfolders."""
    if not path.exists():
        raise IngestError(f"--reference-json {path}: no such directory")
    if not path.is_dir():
        raise IngestError(f"--reference-json {path}: not a directory")
    if _has_samples(path):
        return [path]
    found = sorted(
        d
        for d in path.iterdir()
        if d.is_dir() and not d.name.startswith((".", "_")) and _has_samples(d)
    )
    if not found:
        raise IngestError(f"--reference-json {path}: no <sample_id>.json trajectory files found")
    return found


def condition_of(folder_name: str) -> str:
    return "closed_book" if folder_name.endswith("_noretrieval") else "full"


def run_id_of(folder_name: str) -> str:
    """Stable per model folder and condition, so a changed folder replaces its previous import."""
    return f"ref__{folder_name}__{condition_of(folder_name)}"


def _rel_names(folder: Path) -> list[str]:
    """The folder's JSON files as names relative to it, in the order its content hash takes them."""
    return [*_json_names(folder), *(f"{FAILED_DIR}/{n}" for n in _json_names(folder / FAILED_DIR))]


def folder_hash(rels: Sequence[str], digests: Callable[[str], bytes]) -> str:
    """The folder's identity: SHA-256 over each JSON file's relative name and SHA-256 (``digests``),
    in the order of ``_rel_names``. Per-file digests let the workers hash the bytes they parse, so
    each file is read once."""
    h = hashlib.sha256()
    for rel in rels:
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0" + digests(rel))
    return h.hexdigest()


def content_sha256(folder: Path) -> str:
    """The folder's content hash (folder_hash), reading every JSON file once."""
    base = os.fspath(folder)
    per_file: dict[str, bytes] = {}
    rels = _rel_names(folder)
    for rel in rels:
        with open(os.path.join(base, rel), "rb") as fh:
            per_file[rel] = hashlib.sha256(fh.read()).digest()
    return folder_hash(rels, per_file.__getitem__)


def legacy_content_sha256(folder: Path) -> str:
    """The content hash versions before folder_hash stored: one SHA-256 stream over the relative
    name and bytes of every JSON file (recognised, so that an unchanged folder loaded by an earlier
    version stays unchanged)."""
    h = hashlib.sha256()
    base = os.fspath(folder)
    for rel in _rel_names(folder):
        with open(os.path.join(base, rel), "rb") as fh:
            data = fh.read()
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        h.update(data)
        h.update(b"\0")
    return h.hexdigest()


def _loaded_version(folder: Path, loaded: str) -> tuple[str, bool]:
    """The folder's content hash and whether the warehouse's ``loaded`` hash is of these bytes (the
    current definition first; the earlier one only when that differs)."""
    sha = content_sha256(folder)
    return sha, sha == loaded or legacy_content_sha256(folder) == loaded


def read_json(path: Path) -> Any:
    """One JSON file, or an error naming the file and the field (see reference_parse.load_json)."""
    try:
        return load_json(path)
    except ParseError as exc:
        raise IngestError(str(exc)) from None


# --------------------------------------------------------------------------------------------
# summary.json and the runs row


def _parse_time(v: Any) -> datetime | None:
    if not isinstance(v, str) or not v:
        return None
    try:
        dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _cfg_int(config: dict[str, Any], key: str, default: int, where: Path, limit: int = INT32_MAX) -> int:
    v = config.get(key)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        raise IngestError(f"{where}: field 'config.{key}' must be an integer, found {v!r:.40}")
    if not -limit <= v <= limit:
        raise IngestError(
            f"{where}: field 'config.{key}' is {v}, outside the {64 if limit == INT64_MAX else 32}-bit integer range"
        )
    return v


def _text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _runs_row(
    run_id: str, name: str, bsha: str, summary: dict[str, Any], summary_path: Path, models: set[str],
    budget_total: int | None,
) -> pa.Table:
    fingerprint = summary.get("fingerprint") if isinstance(summary.get("fingerprint"), dict) else {}
    config = summary.get("config") if isinstance(summary.get("config"), dict) else {}
    return pa.table(
        {
            "run_id": [run_id],
            "model": [name],
            "backend": [BACKEND],
            "condition": [condition_of(name)],
            "replicate": [0],
            "benchmark_sha256": [bsha],
            "budget_total": [_cfg_int(config, "budget", budget_total or DEFAULT_BUDGET, summary_path)],
            "max_turns": [_cfg_int(config, "max_turns", DEFAULT_MAX_TURNS, summary_path)],
            "max_total_tokens": [
                _cfg_int(config, "max_total_tokens", DEFAULT_MAX_TOTAL_TOKENS, summary_path, INT64_MAX)
            ],
            "harness_version": [f"reference:{_text(fingerprint.get('schema_version') or 'unknown')}"],
            "config_json": [
                json.dumps(
                    {"fingerprint": fingerprint, "config": config, "file_models": sorted(models)},
                    ensure_ascii=False,
                    sort_keys=True,
                )
            ],
            "family": [None],
            "tier": [None],
            "started_at": [_parse_time(fingerprint.get("started_at"))],
            "finished_at": [_parse_time(fingerprint.get("completed_at"))],
            "generation": [None],
            "benchmark": [tschema.DEFAULT_BENCHMARK],  # the reference harness runs AgentHop
            "paradigm": [None],
            # provenance of imported Inspect logs: the reference harness records none of it
            **{c: [None] for c in ("source_packages_json", "task_version", "task_args_json", "message_limit",
                                   "time_limit_s", "working_limit_s")},
        },
        schema=tschema.RUNS,
    )


# --------------------------------------------------------------------------------------------
# folders -> tasks -> tables


@dataclass(slots=True)
class _Folder:
    path: Path
    run_id: str
    #: the content hash, when it was computed before parsing (the run was loaded before)
    sha: str | None
    bsha: str
    summary: dict[str, Any]
    summary_path: Path
    rels: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)


def _plan_folder(folder: Path, pre: tuple[str, bool] | None, checks: Checks,
                 loaded_hashes: dict[str, str]) -> _Folder | RunData:
    """Identity, summary and sample list of one folder; a RunData when it is unchanged (``pre``: its
    content hash and whether it is the loaded version, found when its run is loaded already)."""
    name = folder.name
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise IngestError(f"{folder}: the folder name is not valid UTF-8 (it becomes the model name)") from None
    run_id = run_id_of(name)
    summary: dict[str, Any] = {}
    summary_path = folder / SUMMARY
    if summary_path.is_file():
        s = read_json(summary_path)
        if not isinstance(s, dict):
            raise IngestError(f"{summary_path}: expected a JSON object")
        summary = s
    fingerprint = summary.get("fingerprint") if isinstance(summary.get("fingerprint"), dict) else {}
    bsha = fingerprint.get("benchmark_sha256") or checks.benchmark_sha256
    if pre is not None and pre[1]:
        return RunData(BACKEND, str(folder), run_id, loaded_hashes[run_id], False, _text(bsha or ""))
    if not bsha:
        raise IngestError(f"{folder}: no benchmark is loaded; pass --benchmark DIR to load one first")
    check_benchmark(run_id, _text(bsha), checks, str(summary_path if summary else folder))

    plan = _Folder(folder, run_id, pre[0] if pre is not None else None, _text(bsha), summary, summary_path)
    names = _json_names(folder)
    failed = _json_names(folder / FAILED_DIR)
    plan.rels = [*names, *(f"{FAILED_DIR}/{n}" for n in failed)]
    plan.samples = _samples_of(folder, names, failed)
    return plan


def folder_samples(folder: Path) -> list[Sample]:
    """Each ``<sample_id>.json`` of a folder with its failed-attempt files, in attempt order."""
    return _samples_of(folder, _json_names(folder), _json_names(folder / FAILED_DIR))


def _samples_of(folder: Path, names: list[str], failed_names: list[str]) -> list[Sample]:
    failed: dict[str, list[tuple[int, str]]] = defaultdict(list)
    fdir = folder / FAILED_DIR
    for name in failed_names:
        m = FAILED_RE.match(name)
        if not m:
            raise IngestError(f"{fdir / name}: not named <sample_id>.attempt_<k>.json")
        failed[m.group(1)].append((int(m.group(2)), f"{fdir}/{name}"))
    base = str(folder)
    return [(f"{base}/{n}", [p for _, p in sorted(failed.pop(n[:-5], []))])
            for n in names if n != SUMMARY]


def _hash_after_parse(plan: _Folder, results: list[dict[str, Any]]) -> str:
    """The folder's content hash from the digests its tasks took of the files they parsed (the parent
    hashes the rest: summary.json, failed attempts of samples without a final file)."""
    digests: dict[str, bytes] = {}
    for r in results:
        digests.update(r["digests"])
    base = os.fspath(plan.path)

    def digest(rel: str) -> bytes:
        path = f"{base}/{rel}"
        found = digests.get(path)
        if found is not None:
            return found
        try:
            with open(path, "rb") as fh:
                return hashlib.sha256(fh.read()).digest()
        except OSError as exc:
            raise IngestError(f"{path}: cannot read ({exc.strerror or exc})") from None

    return folder_hash(plan.rels, digest)


def _tasks(plans: Sequence[_Folder]) -> list[tuple[int, str, list[Sample]]]:
    out = []
    for i, plan in enumerate(plans):
        for k in range(0, len(plan.samples), TASK_SAMPLES):
            out.append((i, plan.run_id, plan.samples[k : k + TASK_SAMPLES]))
    return out


def _spool_root(tasks: list[tuple[int, str, list[Sample]]]) -> str | None:
    """Where workers leave their tables for the parent: shared memory when it has room for three
    times the files (their size estimated from a few of them)."""
    shm = "/dev/shm"
    paths = [s[0] for t in tasks for s in t[2]]
    try:
        probe = paths[:: max(1, len(paths) // 16)]
        n_bytes = sum(os.stat(p).st_size for p in probe) * len(paths) // max(1, len(probe))
        if os.path.isdir(shm) and shutil.disk_usage(shm).free > 3 * n_bytes:
            return shm
    except OSError:
        pass
    return None  # the system's temporary directory


def _unspool(result: dict[str, Any]) -> dict[str, Any]:
    if result["error"] is None:
        result["tables"] = {
            name: pa.ipc.open_file(pa.memory_map(path)).read_all() for name, path in result["tables"].items()
        }
    return result


def _worker_context() -> multiprocessing.context.BaseContext:
    """Workers forked from a fork server that imported only the parsing modules, once.

    Not fork: the parent holds DuckDB and Arrow thread pools, which do not survive a fork. Not
    spawn where avoidable: each spawned worker would import the command's whole main module (the
    CLI, DuckDB, the data-quality rules; about 0.7 s of CPU per worker) before parsing anything.
    """
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload([reference_bulk.__name__])
        return ctx
    return multiprocessing.get_context("spawn")


@contextmanager
def _main_left_out() -> Iterator[None]:
    """Workers started inside this block do not run the command's main module again.

    multiprocessing tells each new worker (forkserver or spawn) to re-run the parent's
    ``__main__`` (the ``agenthop-ingest`` script, or the module run with ``-m``) before its first
    task, so that functions defined there can be unpickled. The tasks are reference_bulk's, which
    the fork server has imported already; re-running the script imported the whole command (the
    CLI, DuckDB, click, the benchmark registry: about 0.28 s of CPU, before the worker's first
    task). The main module's ``__file__`` and ``__spec__``, which multiprocessing reads to decide
    that, are hidden while the pool starts its workers, and put back.
    """
    main = sys.modules.get("__main__")
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if main is not None and k in main.__dict__}
    if main is None or not saved:
        yield
        return
    main.__dict__.pop("__file__", None)
    if "__spec__" in saved:
        main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.update(saved)


def _parse_all(tasks: list[tuple[int, str, list[Sample]]], on_result: Callable[[int, dict[str, Any]], None],
               on_idle: Callable[[], None] | None = None) -> None:
    """Parse every task, handing each result to ``on_result`` (task index, result) as it arrives, in
    this process: on all cores when there is enough to do.

    Every task is queued for the workers (one fewer than the cores) at once, so they never wait for
    this process; this process parses too, taking in order each task no worker has started yet
    (cancelling its queued copy), so its share of the tables needs no transfer and one process fewer
    is started. Whatever else this process does meanwhile (``on_result`` finishing and inserting
    folders) only leaves the workers more tasks. Worker results arrive as Arrow files in shared
    memory, which this process maps.
    """
    n_samples = sum(len(t[2]) for t in tasks)
    workers = min(os.cpu_count() or 1, len(tasks)) - 1
    if workers < 1 or n_samples < POOL_MIN_SAMPLES:
        for k, (_, run_id, samples) in enumerate(tasks):
            on_result(k, parse_task(run_id, samples))
        return
    ctx = _worker_context()
    background = False
    with tempfile.TemporaryDirectory(prefix="agenthop-ref-", dir=_spool_root(tasks)) as spool:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
        queuing = _Queuing(pool, tasks, spool)
        try:
            for i in range(len(tasks)):
                if queuing.take(i):  # no worker has it (or it is not queued yet): parse it here
                    on_result(i, parse_task(tasks[i][1], tasks[i][2]))
                for k, f in queuing.done():
                    on_result(k, _unspool(f.result()))
            left = queuing.rest()
            for n, (k, f) in enumerate(left, 1):
                if on_idle is not None and not f.done():
                    on_idle()  # this process would wait for the worker
                result = _unspool(f.result())  # mapped memory outlives the files' removal
                if n == len(left):  # the last task: the workers and their server stop meanwhile
                    background = _stop_in_background(pool, ctx)
                on_result(k, result)
        except BrokenProcessPool:
            raise IngestError(
                f"a process parsing reference JSON ({tasks[0][2][0][0]} and others) died, for instance "
                f"out of memory; nothing was loaded (load fewer folders per invocation)"
            ) from None
        finally:
            queuing.stop()
            if not background:  # else the thread stopping them shuts the pool down (not both at once)
                pool.shutdown(wait=True, cancel_futures=True)
                _stop_fork_server(ctx)


class _Queuing:
    """Queues every task for the workers from a thread of its own, so that this process parses
    meanwhile: starting the first worker waits until the fork server has imported the parsing
    modules (about 0.1 s when it was started just before), and this process would wait with it.
    ``take`` claims a task for this process: one not queued yet (the thread then skips it), or a
    queued one no worker has started (its queued copy is cancelled); the task being queued at that
    moment stays with the workers."""

    def __init__(self, pool: ProcessPoolExecutor, tasks: list[tuple[int, str, list[Sample]]], spool: str) -> None:
        self.pool, self.tasks, self.spool = pool, tasks, spool
        self.lock = threading.Lock()
        self.queued: dict[int, Future[dict[str, Any]]] = {}
        self.taken: set[int] = set()
        #: the task being queued (left to the workers), and every task queued
        self.submitting: int | None = None
        self.sent: set[int] = set()
        self.error: BaseException | None = None
        self.stopped = False
        self.thread = threading.Thread(target=self._queue_all, name="ingest-queue-tasks")
        self.thread.start()

    def _queue_all(self) -> None:
        try:
            with _main_left_out():  # the first submit starts the worker; later ones may start more
                for i, (_, run_id, samples) in enumerate(self.tasks):
                    with self.lock:
                        if self.stopped:
                            return
                        if i in self.taken:
                            continue
                        self.submitting = i
                    # outside the lock: the first submit waits for the worker to start
                    f = self.pool.submit(spooled_task, run_id, samples, self.spool, i)
                    with self.lock:
                        self.queued[i], self.submitting = f, None
                        self.sent.add(i)
        except BaseException as exc:  # BrokenProcessPool and the like: raised where the results are read
            self.error = exc

    def take(self, i: int) -> bool:
        with self.lock:
            f = self.queued.get(i)
            if f is None:
                if i == self.submitting or i in self.sent:  # being queued, or done by a worker
                    return False
                self.taken.add(i)
                return True
            if f.cancel():
                del self.queued[i]
                return True
            return False

    def done(self) -> list[tuple[int, Future[dict[str, Any]]]]:
        with self.lock:
            return [(k, self.queued.pop(k)) for k in [k for k, f in self.queued.items() if f.done()]]

    def rest(self) -> list[tuple[int, Future[dict[str, Any]]]]:
        """The tasks still with the workers, in task order, once every task is queued."""
        self.thread.join()
        if self.error is not None:
            raise self.error
        with self.lock:
            return sorted(self.queued.items())

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
        self.thread.join()


#: the thread that stops the workers and then their fork server once the last task is in (the
#: server's own exit takes about 50 ms), while the import goes on; ``stop_workers`` joins it
_stopping: threading.Thread | None = None


def _stop_in_background(pool: ProcessPoolExecutor, ctx: multiprocessing.context.BaseContext) -> bool:
    global _stopping

    def stop() -> None:
        pool.shutdown(wait=True)  # the workers first: the server reaps them (their CPU time is ours)
        _stop_fork_server(ctx)

    _stopping = threading.Thread(target=stop, name="ingest-stop-workers")
    _stopping.start()
    return True


def start_workers(folders: Sequence[Path], loaded: Container[str]) -> None:
    """Start the workers' fork server now if the folders whose runs are not ``loaded`` yet are big
    enough for the process pool, so that it imports the parsing modules (about 0.3 s) on another
    core while this process plans the tasks (a loaded folder may be unchanged: its pool, if it needs
    one, starts when its tasks do). Pair with stop_workers."""
    if (os.cpu_count() or 1) < 2 or "forkserver" not in multiprocessing.get_all_start_methods():
        return
    n = 0
    for folder in folders:
        if run_id_of(folder.name) in loaded:
            continue
        n += len(_json_names(folder))
        if n >= POOL_MIN_SAMPLES:
            _worker_context()
            from multiprocessing import forkserver

            forkserver.ensure_running()
            return


def stop_workers() -> None:
    """Stop a fork server start_workers started (none is left running after an import)."""
    global _stopping
    if _stopping is not None:
        _stopping.join()
        _stopping = None
    if "forkserver" in multiprocessing.get_all_start_methods():
        _stop_fork_server(multiprocessing.get_context("forkserver"))


def _stop_fork_server(ctx: multiprocessing.context.BaseContext) -> None:
    """Stop and reap the fork server, so that its workers' CPU time is accounted to this process's
    children (as spawned workers' is) and no server outlives the import."""
    if ctx.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        stop = getattr(forkserver._forkserver, "_stop", None)  # stable since Python 3.8, not public
        if stop is not None:
            stop()


class SectionIndex:
    """The benchmark's graph nodes and their papers' sections, for resolving read_section calls.

    Built once per ingest, when the first folder is resolved (so that the workers are parsing
    meanwhile): the nodes ordered by a hash of (sample, graph node), each with the range of its
    paper's sections in a table of every section ordered by paper, and each section's displayed
    header. A folder's calls find their node by binary search on the hash and their section by
    comparing headers within that range, all in NumPy and Arrow: joining every node with every
    section of its paper (1.3 million pairs in the paper-scale release) for each folder cost more
    than parsing a third of the files, and a DuckDB query per folder more in planning than the
    lookups themselves.
    """

    def __init__(self, bench: BenchTables | None) -> None:
        self._bench = bench
        self._con: duckdb.DuckDBPyConnection | None = None
        self.hashes = np.zeros(0, dtype=np.uint64)
        self.nodes = pa.table({})
        self.first = np.zeros(0, dtype=np.int64)
        self.count = np.zeros(0, dtype=np.int64)
        self.sections = pa.table({})

    def ready(self) -> bool:
        """Build the index on first use; False when there is no benchmark to resolve against."""
        if self._con is None and self._bench is not None:
            nodes, sections = self._bench
            self._bench = None
            # one thread: the sorts are small, and the workers have the other cores
            self._con = con = duckdb.connect(config={"threads": 1})
            con.register("secs", sections.select(["arxiv_id", "section_index", "header", "n_chars"]))
            self.sections = con.sql("""
                SELECT row_number() OVER (ORDER BY arxiv_id, section_index) - 1 AS pos, arxiv_id, section_index,
                       n_chars, coalesce(nullif(header, ''), 'Section ' || (section_index + 1)) AS shown_header
                FROM secs ORDER BY pos
            """).to_arrow_table().combine_chunks()
            con.unregister("secs")
            con.register("nodes", nodes.select(["sample_id", "paper_id", "arxiv_id"]))
            con.register("sorted_secs", self.sections.select(["pos", "arxiv_id"]))
            table = con.sql("""
                WITH papers AS (SELECT arxiv_id, min(pos) AS first, count(*) AS count FROM sorted_secs GROUP BY arxiv_id)
                SELECT hash(n.sample_id, n.paper_id) AS h, n.sample_id, n.paper_id, p.first, p.count
                FROM nodes AS n JOIN papers AS p ON p.arxiv_id = n.arxiv_id
                WHERE n.arxiv_id <> '' ORDER BY h
            """).to_arrow_table().combine_chunks()
            for name in ("nodes", "sorted_secs"):
                con.unregister(name)
            self.hashes = table.column("h").to_numpy()
            self.nodes = table.select(["sample_id", "paper_id"])
            self.first = _int64s(table.column("first"))
            self.count = _int64s(table.column("count"))
        return self._con is not None

    def hash_keys(self, reads: pa.Table) -> np.ndarray:
        """The (sample, node) hash of each call, by the same function as the index's."""
        assert self._con is not None
        self._con.register("calls", reads.select(["sample_id", "paper_id"]))
        try:
            keys = self._con.sql("SELECT hash(sample_id, paper_id) AS h FROM calls").fetchnumpy()["h"]
        finally:
            self._con.unregister("calls")
        return np.asarray(keys, dtype=np.uint64)

    def close(self) -> None:
        if self._con is not None:
            self._con.close()


def _matches(left: pa.Array, right: pa.Array) -> np.ndarray:
    """Where two aligned arrays hold equal values (a null never matches)."""
    return pc.fill_null(pc.equal(left, right), False).to_numpy(zero_copy_only=False)


def resolve_sections(calls: pa.Table, index: SectionIndex) -> pa.Table:
    """Fill resolved_section_index and the full output length of read_section calls.

    A call's section is the one of its paper (``paper_id`` -> arXiv id through the item's graph)
    whose displayed header is the header the output shows; among several, the one the queried
    alias names, else the first.
    """
    alias_of = calls.column(ALIAS_COLUMN).combine_chunks()
    calls = calls.drop_columns([ALIAS_COLUMN])
    if calls.num_rows == 0 or not index.ready():
        return calls
    at = np.flatnonzero(pc.is_valid(calls.column("resolved_header")).to_numpy(zero_copy_only=False))
    reads = calls.select(["sample_id", "paper_id", "resolved_header"]).take(at)
    keys = index.hash_keys(reads)
    lo = np.searchsorted(index.hashes, keys, side="left")
    call, node = expand_ranges(lo, np.searchsorted(index.hashes, keys, side="right") - lo)
    same = (_matches(reads.column("sample_id").take(call), index.nodes.column("sample_id").take(node))
            & _matches(reads.column("paper_id").take(call), index.nodes.column("paper_id").take(node)))
    call, node = call[same], node[same]
    pair, sec = expand_ranges(index.first[node], index.count[node])
    call = call[pair]
    shown = _matches(reads.column("resolved_header").take(call), index.sections.column("shown_header").take(sec))
    call, sec = call[shown], sec[shown]
    if not len(call):
        return calls
    section = _int64s(index.sections.column("section_index").take(sec))
    alias = pc.cast(alias_of.take(at[call]), pa.int64())
    named = _matches(alias, pa.array(section))
    order = np.lexsort((section, ~named, call))  # per call: the alias's section first, then by index
    first = order[np.r_[True, call[order][1:] != call[order][:-1]]]
    rows = at[call[first]]
    lengths = _int64s(pc.utf8_length(reads.column("resolved_header").take(call[first])))
    picked = {"resolved_section_index": section[first],
              "output_chars": lengths + 10 + _int64s(index.sections.column("n_chars").take(sec[first]))}
    for name, values in picked.items():
        col = calls.column(name).combine_chunks()
        dense = np.zeros(calls.num_rows, dtype=np.int64)
        filled = np.zeros(calls.num_rows, dtype=bool)
        dense[rows] = values
        filled[rows] = True
        new = pc.if_else(pa.array(filled), pa.array(dense), col.cast(pa.int64()))
        calls = calls.set_column(calls.schema.get_field_index(name), name, new.cast(tschema.TOOL_CALLS.field(name).type))
    return calls


def _int64s(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A column without nulls as int64 NumPy values."""
    return np.asarray(pc.cast(values, pa.int64()).to_numpy(), dtype=np.int64)


def _concat(results: list[dict[str, Any]], name: str) -> pa.Table:
    """One table of a folder from its tasks' results (tool_calls still with ALIAS_COLUMN)."""
    parts = [r["tables"][name] for r in results]
    return pa.concat_tables(parts) if parts else task_schema(name).empty_table()


def _folder_data(plan: _Folder, results: list[dict[str, Any]], calls: pa.Table, checks: Checks,
                 keys: Callable[[], duckdb.DuckDBPyConnection]) -> RunData:
    """One folder's task results (and its resolved tool_calls) -> a validated RunData, with the search
    index's units held from its tables (transcripts/prepared.py; ``keys``: a connection for their turns)."""
    folder = str(plan.path)
    tables: dict[str, pa.Table] = {}
    segments: dict[str, Segments] = {"runs": Segments()}
    names = [n for n in tschema.TABLES if n != "runs"]
    # each message's turn for the search index, when every task's bulk parsing gave it (else computed
    # below, from the conformed tables)
    parts = [r["tables"]["messages"] for r in results]
    turned = bool(parts) and all(UNIT_TURN_COLUMN in t.column_names for t in parts)
    turns_of_messages = pa.chunked_array([t.column(UNIT_TURN_COLUMN) for t in parts], pa.int32()) if turned else None
    for r in results:
        t = r["tables"]["messages"]
        if UNIT_TURN_COLUMN in t.column_names:
            r["tables"]["messages"] = t.drop_columns([UNIT_TURN_COLUMN])
    for name in names:
        tables[name] = calls if name == "tool_calls" else _concat(results, name)
        seg = segments[name] = Segments()
        for r in results:  # (file, rows) pairs with rows > 0, in row order
            pairs = r["segments"][name]
            seg.files += [file for file, _ in pairs]
            seg.counts += [n for _, n in pairs]
        seg.kinds = ["json"] * len(seg.files)
    known = checks.sample_ids
    sample_ids = [s for r in results for s in r["sample_ids"]]
    if known is not None and sample_ids:
        ids = pa.array(sample_ids, pa.string())
        unknown = pc.filter(ids, pc.invert(pc.is_in(ids, value_set=known)))
        if len(unknown):
            sid = unknown[0].as_py()
            raise IngestError(
                f"{plan.path / (sid + '.json')}: sample id {sid!r} is not in the loaded benchmark's items"
                + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
            )
    for name in names:
        # the tasks built every text column from decoded Python strings: valid UTF-8 by construction
        tables[name] = conform(tables[name], tschema.TABLES[name], f"{folder} ({name})", utf8_known=True)
        validate_table(name, tables[name], plan.run_id, checks, f"{folder} ({name})")
    units = (held_units(plan.run_id, tables["tool_calls"], tables["messages"], turns_of_messages)
             if turns_of_messages is not None
             else run_units(keys(), plan.run_id, tables["turns"], tables["tool_calls"], tables["messages"]))
    models = set().union(*(r["models"] for r in results)) if results else set()
    budget_total = next((r["budget_total"] for r in results if r["budget_total"] is not None), None)
    runs = _runs_row(plan.run_id, plan.path.name, plan.bsha, plan.summary, plan.summary_path, models, budget_total)
    segments["runs"].add(str(plan.summary_path if plan.summary else plan.path), 1, "json")
    tables = {"runs": runs, **tables}
    return RunData(
        BACKEND, folder, plan.run_id, plan.sha, False, plan.bsha, tables,
        {k: v.num_rows for k, v in tables.items()}, segments, units,
    )


def read_folders(
    folders: Sequence[Path],
    checks: Checks,
    loaded_hashes: dict[str, str],
    bench: Callable[[], BenchTables | None],
    on_folder: Callable[[RunData], None] | None = None,
    on_idle: Callable[[], None] | None = None,
) -> list[RunData]:
    """Convert model folders to validated RunData (unchanged folders are recognised, not read).

    ``bench`` returns the loaded benchmark's graph nodes and sections (fetched only when needed).
    ``on_folder`` receives each changed folder's RunData as soon as it and every changed folder
    before it are finished, in folder order, while later folders are still being parsed (the
    ingest inserts them meanwhile); none once any folder has failed. ``on_idle`` is called whenever
    this process would wait for a worker's task (the ingest checks the inserted runs meanwhile).
    """
    folders = [f.resolve() for f in folders]
    # A folder whose run is loaded may be unchanged: hash it first (reads and SHA-256 release the
    # GIL, so threads use every core). Any other folder is hashed by the tasks parsing it.
    loaded = [f for f in folders if run_id_of(f.name) in loaded_hashes]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        pre = dict(zip(loaded, pool.map(lambda f: _loaded_version(f, loaded_hashes[run_id_of(f.name)]), loaded)))
    planned = [_plan_folder(f, pre.get(f), checks, loaded_hashes) for f in folders]
    todo = [p for p in planned if isinstance(p, _Folder)]
    tasks = _tasks(todo)
    # Each folder is finished (hashed, sections resolved, conformed, validated) as soon as its last
    # task is in, while the other tasks are still being parsed. The errors raised are those of the
    # import finishing folder by folder after parsing everything: the first parse error in task
    # order, else the first folder's error.
    results: list[dict[str, Any] | None] = [None] * len(tasks)
    left = [0] * len(todo)
    for i, _, _ in tasks:
        left[i] += 1
    data: list[RunData | None] = [None] * len(todo)
    parse_errors: dict[int, str] = {}
    folder_errors: dict[int, IngestError] = {}
    index = SectionIndex(bench() if todo else None)
    emitted = 0
    scratch: list[duckdb.DuckDBPyConnection] = []

    def keys() -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB on one thread (the workers have the other cores) for the units' turns."""
        if not scratch:
            scratch.append(duckdb.connect(config={"threads": 1}))
        return scratch[0]

    def emit() -> None:
        nonlocal emitted
        while on_folder is not None and emitted < len(todo) and data[emitted] is not None \
                and not parse_errors and not folder_errors:
            on_folder(data[emitted])  # type: ignore[arg-type]
            emitted += 1

    def finish(i: int) -> None:
        plan = todo[i]
        mine = [r for (f, _, _), r in zip(tasks, results) if f == i]
        try:
            if plan.sha is None:
                plan.sha = _hash_after_parse(plan, mine)  # type: ignore[arg-type]
            calls = resolve_sections(_concat(mine, "tool_calls"), index)  # type: ignore[arg-type]
            data[i] = _folder_data(plan, mine, calls, checks, keys)  # type: ignore[arg-type]
        except IngestError as exc:
            folder_errors[i] = exc
        emit()

    def on_result(k: int, result: dict[str, Any]) -> None:
        if result["error"] is not None:
            parse_errors[k] = result["error"]
            return
        results[k] = result
        i = tasks[k][0]
        left[i] -= 1
        if left[i] == 0 and not parse_errors:
            finish(i)

    try:
        _parse_all(tasks, on_result, on_idle)
        if parse_errors:
            raise IngestError(parse_errors[min(parse_errors)])
        for i in range(len(todo)):
            if data[i] is None and i not in folder_errors:
                finish(i)  # a folder without tasks
        if folder_errors:
            raise folder_errors[min(folder_errors)]
    finally:
        index.close()
        for c in scratch:
            c.close()
    done = iter(data)
    return [next(done) if isinstance(p, _Folder) else p for p in planned]
