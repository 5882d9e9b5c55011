"""One SciExplore ingest: a release, responses files and judgments files, in one transaction.

Order as in ingest/core.py: read and validate every input (nothing written), apply the
``normalized-match`` judge to every new or changed response, then BEGIN; create the layout;
replace the release, the changed (run, task) responses with their traces and verdicts, the
judgments from files; log; COMMIT. Any error leaves the warehouse as it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from agenthop.harness.benchmarks import ImportOutcome
from agenthop.harness.benchmarks.sciexplore.judge import JUDGE_NAME, JUDGE_VERSION, judge_task
from agenthop.harness.benchmarks.sciexplore.release import Task
from agenthop.schemas import sciexplore as sx

from .. import ddl
from ..conform import IngestError
from ..progress import Progress
from ..warehouse import insert_arrow
from .sciexplore_judgments import judgment_key, read_judgments
from .sciexplore_release import loaded_release
from .sciexplore_responses import Response, read_responses


@dataclass(slots=True)
class SciIngestResult:
    db: Path
    responses: dict[str, int] = field(default_factory=lambda: {"inserted": 0, "replaced": 0, "unchanged": 0})
    runs: int = 0
    verdicts: int = 0
    file_verdicts: int = 0
    dropped_verdicts: int = 0
    rows: dict[str, int] = field(default_factory=dict)

    def summary_parts(self) -> str:
        parts = []
        if sum(self.responses.values()):
            r = self.responses
            parts.append(f"responses of {self.runs} run(s): {r['inserted']} inserted, {r['replaced']} replaced, "
                         f"{r['unchanged']} unchanged; {self.verdicts} {JUDGE_NAME} verdicts")
        if self.file_verdicts:
            parts.append(f"{self.file_verdicts} verdicts from judgments files")
        if self.dropped_verdicts:
            parts.append(f"{self.dropped_verdicts} verdict(s) of other judges dropped because their answers "
                         "were replaced")
        return "; ".join(parts)


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
                          progress: Progress | None = None) -> Any:
    """A release, responses and judgments files loaded by the ingest core in one transaction."""
    from ..core import run_ingest

    return run_ingest(db, benchmark=release, imports={"responses": list(responses), "judgments": list(judgments)},
                      force=force, progress=progress)


def load_imports(con: duckdb.DuckDBPyConnection, inputs: Mapping[str, list[Path]], *, force: bool,
                 release_loaded: bool) -> ImportOutcome:
    """SciExplore's ``load_imports`` hook: inside the ingest core's transaction, after the release (loaded
    in this call when ``release_loaded``) and the runs; read, validate, judge and write the responses and
    judgments files. An error rolls the whole ingest back."""
    result = SciIngestResult(db=Path(""))
    loaded = loaded_release(con)
    if loaded is None:
        raise IngestError("no SciExplore release is loaded: give --benchmark DIR (a directory with tasks.jsonl) "
                          "together with the responses or judgments, or load it first")
    sha, tasks = loaded
    if release_loaded and not force:
        n = con.execute("SELECT count(*) FROM raw.sciexplore_runs WHERE benchmark_sha256 <> ?", [sha]).fetchall()[0][0]
        if n:
            raise IngestError(f"SciExplore release {sha[:16]} differs from the one the warehouse's {n} SciExplore "
                              "run(s) were made on; use a new --db, or pass --force to replace the release and keep "
                              "those runs")
    plan = _prepare(con, sha, tasks, list(inputs.get("responses", ())), list(inputs.get("judgments", ())), result)
    _write(con, plan, result)
    return ImportOutcome(summary=result.summary_parts(), rows=result.rows, log=plan.sources)


@dataclass(slots=True)
class _Plan:
    runs: list[dict[str, Any]]
    changed: list[Response]
    replaced: list[Response]
    verdicts: list[dict[str, Any]]
    file_rows: list[dict[str, Any]]
    #: (kind, file, lines, action) for the ingest log
    sources: list[tuple[str, str, int, str]]


def _prepare(con: duckdb.DuckDBPyConnection, sha: str, tasks: dict[str, Task], responses: list[Path],
             judgments: list[Path], result: SciIngestResult) -> _Plan:
    read = read_responses(responses, tasks, sha)
    old_hash: dict[tuple[str, str], str] = {}
    stored_answers: dict[tuple[str, str], Any] = {}
    known_runs: set[str] = set(read.runs)
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
    return _Plan(runs=list(read.runs.values()), changed=changed, replaced=replaced, verdicts=verdicts,
                 file_rows=file_rows, sources=sources)


def _write(con: duckdb.DuckDBPyConnection, plan: _Plan, result: SciIngestResult) -> None:
    """Inside the caller's transaction: the runs, the changed (run, task) responses with their traces and
    verdicts, the judgments from files."""
    if plan.runs:
        runs = _rows(plan.runs, sx.RUNS)
        _delete_keys(con, "sciexplore_runs", runs.select(["run_id"]), ["run_id"])
        insert_arrow(con, "sciexplore_runs", runs)
        result.rows["sciexplore_runs"] = runs.num_rows
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
        result.rows.update(sciexplore_responses=len(plan.changed), sciexplore_trace=len(trace),
                           judgments=len(plan.verdicts))
    if plan.file_rows:
        rows = _rows(plan.file_rows, sx.JUDGMENTS)
        key_cols = ["run_id", "task_id", "unit", "slot", "ref_index", "row_key", "column", "judge"]
        _delete_keys(con, "judgments", rows.select(key_cols), key_cols)
        insert_arrow(con, "judgments", rows)
        result.rows["judgments"] = result.rows.get("judgments", 0) + rows.num_rows


__all__ = ["load_imports", "run_sciexplore_ingest", "SciIngestResult", "judgment_key", "Task"]
