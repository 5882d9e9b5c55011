"""One SciExplore ingest: a release, responses files and judgments files, in one transaction.

Order as in ingest/core.py: read and validate every input (nothing written), apply the
``normalized-match`` judge to every new or changed response, then BEGIN; create the layout;
replace the release, the changed (run, task) responses with their traces and verdicts, the
judgments from files; log; COMMIT. Any error leaves the warehouse as it was.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from agenthop.harness.benchmarks.sciexplore import NAME as BENCHMARK
from agenthop.harness.benchmarks.sciexplore.judge import JUDGE_NAME, JUDGE_VERSION, judge_task
from agenthop.harness.benchmarks.sciexplore.release import Release, Task
from agenthop.schemas import sciexplore as sx

from .. import ddl
from ..core import _catalogue
from ..conform import IngestError
from ..progress import Progress
from ..warehouse import insert_arrow, json_counts, open_warehouse, transaction
from .sciexplore_judgments import judgment_key, read_judgments
from .sciexplore_release import loaded_release, read_release, release_tables
from .sciexplore_responses import Response, read_responses


@dataclass(slots=True)
class SciIngestResult:
    db: Path
    release_action: str | None = None
    responses: dict[str, int] = field(default_factory=lambda: {"inserted": 0, "replaced": 0, "unchanged": 0})
    runs: int = 0
    verdicts: int = 0
    file_verdicts: int = 0
    dropped_verdicts: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        parts = []
        if self.release_action:
            parts.append(f"SciExplore release {self.release_action}")
        if sum(self.responses.values()):
            r = self.responses
            parts.append(f"responses of {self.runs} run(s): {r['inserted']} inserted, {r['replaced']} replaced, "
                         f"{r['unchanged']} unchanged; {self.verdicts} {JUDGE_NAME} verdicts")
        if self.file_verdicts:
            parts.append(f"{self.file_verdicts} verdicts from judgments files")
        if self.dropped_verdicts:
            parts.append(f"{self.dropped_verdicts} verdict(s) of other judges dropped because their answers "
                         "were replaced")
        return f"ingested into {self.db} in {self.seconds:.1f} s: " + ("; ".join(parts) or "nothing to do")


def _exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'raw' "
                            "AND table_name = ?", [table]).fetchall()[0][0])


def _rows(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema)


def verdict_rows(resp: Response) -> list[dict[str, Any]]:
    return [{"run_id": resp.run_id, "task_id": resp.task.id, "unit": v.unit, "slot": v.slot,
             "ref_index": v.ref_index, "row_key": v.row_key, "column": v.column, "verdict": v.verdict,
             "judge": JUDGE_NAME, "judge_version": JUDGE_VERSION, "rationale": v.rationale}
            for v in judge_task(resp.task, resp.status, resp.answer)]


def _delete_keys(con: duckdb.DuckDBPyConnection, table: str, keys: pa.Table, cols: list[str],
                 where: str = "") -> int:
    con.register("__sx_keys", keys)
    try:
        cond = " AND ".join(f"t.{ddl._ident(c)} IS NOT DISTINCT FROM k.{ddl._ident(c)}" for c in cols)
        n = con.execute(f"DELETE FROM raw.{table} t WHERE EXISTS (SELECT 1 FROM __sx_keys k WHERE {cond}){where}"
                        ).fetchall()
    finally:
        con.unregister("__sx_keys")
    return int(n[0][0]) if n else 0


def run_sciexplore_ingest(db: Path, *, release: Path | None = None, responses: tuple[Path, ...] = (),
                          judgments: tuple[Path, ...] = (), force: bool = False,
                          progress: Progress | None = None) -> SciIngestResult:
    t0 = time.monotonic()
    progress = progress or Progress(quiet=True)
    result = SciIngestResult(db=db)
    new_rel: Release | None = read_release(release) if release is not None else None
    try:
        with open_warehouse(db) as con:
            plan = _prepare(con, new_rel, list(responses), list(judgments), force, result)
            try:
                _write(con, plan, result)
            except duckdb.Error as exc:
                raise IngestError(f"warehouse {db}: write failed, nothing was changed: {exc}") from None
    except duckdb.Error as exc:
        raise IngestError(f"warehouse {db}: {exc}") from None
    result.seconds = time.monotonic() - t0
    return result


@dataclass(slots=True)
class _Plan:
    release: Release | None
    runs: list[dict[str, Any]]
    changed: list[Response]
    replaced: list[Response]
    verdicts: list[dict[str, Any]]
    file_rows: list[dict[str, Any]]
    #: (kind, file, lines, action) for the ingest log
    sources: list[tuple[str, str, int, str]]


def _prepare(con: duckdb.DuckDBPyConnection, new_rel: Release | None, responses: list[Path],
             judgments: list[Path], force: bool, result: SciIngestResult) -> _Plan:
    have_layout = _exists(con, "sciexplore_tasks")
    loaded = loaded_release(con) if have_layout else None
    if new_rel is not None:
        if loaded is not None and loaded[0] == new_rel.sha256:
            result.release_action = "unchanged"
        else:
            if loaded is not None and not force:
                n = con.execute("SELECT count(*) FROM raw.sciexplore_runs WHERE benchmark_sha256 <> ?",
                                [new_rel.sha256]).fetchall()[0][0]
                if n:
                    raise IngestError(f"{new_rel.root}: SciExplore release {new_rel.sha256[:16]} differs from the one "
                                      f"the warehouse's {n} SciExplore run(s) were made on; use a new --db, or "
                                      "pass --force to replace the release and keep those runs")
            result.release_action = "replaced" if loaded is not None else "inserted"
        sha, tasks = new_rel.sha256, new_rel.by_id
    elif loaded is not None:
        sha, tasks = loaded
    else:
        raise IngestError("no SciExplore release is loaded: give --benchmark DIR (a directory with tasks.jsonl) "
                          "together with the responses or judgments, or load it first")
    read = read_responses(responses, tasks, sha)
    old_hash: dict[tuple[str, str], str] = {}
    stored_answers: dict[tuple[str, str], Any] = {}
    known_runs: set[str] = set(read.runs)
    if have_layout:
        for run_id, tid, h, aj in con.execute(
                "SELECT run_id, task_id, line_sha256, answer_json FROM raw.sciexplore_responses").fetchall():
            old_hash[(run_id, tid)] = h
            stored_answers[(run_id, tid)] = aj
        known_runs |= {r for (r,) in con.execute("SELECT run_id FROM raw.sciexplore_runs").fetchall()}
    changed, replaced = [], []
    for resp in read.responses:
        prev = old_hash.get((resp.run_id, resp.task.id))
        if prev == resp.row["line_sha256"]:
            result.responses["unchanged"] += 1
            continue
        changed.append(resp)
        if prev is not None:
            replaced.append(resp)
        result.responses["replaced" if prev is not None else "inserted"] += 1
        stored_answers[(resp.run_id, resp.task.id)] = resp.row["answer_json"]
    result.runs = len(read.runs)
    verdicts = [v for resp in changed for v in verdict_rows(resp)]
    result.verdicts = len(verdicts)

    def answer_of(run_id: str, task_id: str) -> Any:
        aj = stored_answers[(run_id, task_id)]
        return None if aj is None else json.loads(aj)

    file_rows, per_file = read_judgments(judgments, tasks, sha, known_runs, answer_of) if judgments else ([], {})
    result.file_verdicts = len(file_rows)
    per_source: dict[str, int] = {}
    changed_sources = {resp.source.rsplit(":", 1)[0] for resp in changed}
    for resp in read.responses:
        src = resp.source.rsplit(":", 1)[0]
        per_source[src] = per_source.get(src, 0) + 1
    sources = [("responses-file", s, n, "inserted" if s in changed_sources else "unchanged")
               for s, n in per_source.items()]
    sources += [("judgments-file", s, n, "inserted") for s, n in per_file.items()]
    return _Plan(release=new_rel if result.release_action in ("inserted", "replaced") else None,
                 runs=list(read.runs.values()), changed=changed, replaced=replaced, verdicts=verdicts,
                 file_rows=file_rows, sources=sources)


def _write(con: duckdb.DuckDBPyConnection, plan: _Plan, result: SciIngestResult) -> None:
    now = datetime.now(timezone.utc)
    with transaction(con):
        for stmt in ddl.ddl_statements():
            con.execute(stmt)
        load_id = int(con.execute("SELECT coalesce(max(load_id), 0) + 1 FROM raw.ingest_log").fetchall()[0][0])
        log: list[tuple] = []
        if plan.release is not None:
            tables = release_tables(plan.release, now)
            counts = {name: t.num_rows for name, t in tables.items()}
            for name, t in tables.items():
                con.execute(f"DELETE FROM raw.{name}").fetchall()
                insert_arrow(con, name, t)
            _catalogue(con, BENCHMARK, plan.release.sha256, "SELECT count(*) FROM raw.sciexplore_tasks", now)
            log.append(("sciexplore-release", str(Path(plan.release.root).resolve()), None, plan.release.sha256,
                        result.release_action, counts))
        if plan.runs:
            runs = _rows(plan.runs, sx.RUNS)
            _delete_keys(con, "sciexplore_runs", runs.select(["run_id"]), ["run_id"])
            insert_arrow(con, "sciexplore_runs", runs)
        if plan.changed:
            keys = _rows([{"run_id": r.run_id, "task_id": r.task.id} for r in plan.changed],
                         pa.schema([sx.RESPONSES.field("run_id"), sx.RESPONSES.field("task_id")]))
            for table in ("sciexplore_responses", "sciexplore_trace"):
                _delete_keys(con, table, keys, ["run_id", "task_id"])
            _delete_keys(con, "judgments", keys, ["run_id", "task_id"], f" AND t.judge = '{JUDGE_NAME}'")
            if plan.replaced:
                rkeys = _rows([{"run_id": r.run_id, "task_id": r.task.id} for r in plan.replaced], keys.schema)
                result.dropped_verdicts = _delete_keys(con, "judgments", rkeys, ["run_id", "task_id"])
            insert_arrow(con, "sciexplore_responses", _rows([r.row for r in plan.changed], sx.RESPONSES))
            trace = [{"run_id": r.run_id, "task_id": r.task.id, **s} for r in plan.changed for s in r.trace]
            insert_arrow(con, "sciexplore_trace", _rows(trace, sx.TRACE))
            insert_arrow(con, "judgments", _rows(plan.verdicts, sx.JUDGMENTS))
        if plan.file_rows:
            rows = _rows(plan.file_rows, sx.JUDGMENTS)
            key_cols = ["run_id", "task_id", "unit", "slot", "ref_index", "row_key", "column", "judge"]
            _delete_keys(con, "judgments", rows.select(key_cols), key_cols)
            insert_arrow(con, "judgments", rows)
        for kind, source, n, action in plan.sources:
            log.append((kind, source, None, "", action, {"lines": n}))
        if log:
            insert_arrow(con, "ingest_log", pa.table(
                {f.name: [(load_id, now, *row[:5], json_counts(row[5]))[i] for row in log]
                 for i, f in enumerate(ddl.INGEST_LOG)}, schema=ddl.INGEST_LOG))
        for key, value in (("layout_version", "1"), ("duckdb_version", duckdb.__version__)):
            con.execute("DELETE FROM raw.warehouse_meta WHERE key = ?", [key]).fetchall()
            con.execute("INSERT INTO raw.warehouse_meta VALUES (?, ?)", [key, value]).fetchall()


__all__ = ["run_sciexplore_ingest", "SciIngestResult", "judgment_key", "Task"]
