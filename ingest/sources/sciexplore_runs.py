"""SciExplore harness runs into SciExplore's own tables (the registry entry's ``on_runs_loaded``).

Called by the ingest core inside its transaction, right after the run tables of SciExplore runs were
written: each run's final attempts become the rows a responses file would have given
(``sciexplore_runs``, ``sciexplore_responses``, ``sciexplore_trace``) and get the ``normalized-match``
verdicts, so the SciExplore marts read harness runs and imported responses alike. The answer is the
trajectory's ``answer_json`` (the parsed final text), the status follows from ``terminated_by`` and
the text (docs/sciexplore.md#final-answers); the trace is every executed tool call of the final
attempt. A run loaded again replaces its rows, the verdicts of every judge included.

``agenthop-ingest --delete-run`` reaches SciExplore through the registry entry's hooks: the runs it
holds (``imported_run_ids``: those of responses files have no ``raw.runs`` row) and
:func:`delete_runs`, which removes a run's rows from every SciExplore run table, verdicts of every
judge included.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from agenthop.harness.benchmarks.sciexplore.answers import answer_status
from agenthop.harness.benchmarks.sciexplore.release import Where
from agenthop.schemas import sciexplore as sx

from ..conform import IngestError
from ..warehouse import insert_arrow
from .sciexplore_ingest import verdict_rows
from .sciexplore_release import loaded_release
from .sciexplore_responses import _response

#: calls that did not run are not part of a trace
_NOT_RUN = ("rejected_budget", "rejected_disabled", "not_executed")


def _trace(calls: list[tuple]) -> list[dict[str, Any]]:
    out = []
    for tool, query, target, chars in calls:
        step: dict[str, Any] = {"tool": tool, "result_chars": chars}
        if query is not None:
            step["query"] = query
        if target is not None:
            step["target"] = target
        out.append(step)
    return out


#: SciExplore's tables keyed by run: what a deleted run leaves behind otherwise
RUN_KEYED = tuple(sx.RUN_TABLES)


def _existing(con: duckdb.DuckDBPyConnection, tables: tuple[str, ...]) -> list[str]:
    """The tables of ``tables`` present in ``raw`` (a warehouse made before SciExplore has none)."""
    rows = con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw'").fetchall()
    present = {name for (name,) in rows}
    return [t for t in tables if t in present]


def imported_run_ids(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Every SciExplore run of the warehouse (harness runs and responses files alike)."""
    if not _existing(con, ("sciexplore_runs",)):
        return set()
    return {r for (r,) in con.execute("SELECT run_id FROM raw.sciexplore_runs").fetchall()}


def delete_runs(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, int]:
    """Delete the rows of ``run_ids`` from SciExplore's run tables; rows deleted per table."""
    deleted: dict[str, int] = {}
    con.register("__sx_deleted_runs", pa.table({"run_id": pa.array(run_ids, pa.string())}))
    try:
        for table in _existing(con, RUN_KEYED):
            rows = con.execute(f"DELETE FROM raw.{table} WHERE run_id IN "
                               "(SELECT run_id FROM __sx_deleted_runs)").fetchall()
            deleted[table] = int(rows[0][0]) if rows else 0
    finally:
        con.unregister("__sx_deleted_runs")
    return deleted


def derive_from_runs(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, int]:
    loaded = loaded_release(con)
    if loaded is None:  # the core refuses runs of a release that is not loaded; this is a second guard
        raise IngestError("SciExplore runs need the SciExplore release loaded (--benchmark DIR)")
    sha, tasks = loaded
    con.register("__sx_run_ids", pa.table({"run_id": pa.array(run_ids, pa.string())}))
    try:
        runs = con.execute(
            "SELECT run_id, model, coalesce(paradigm, condition), replicate, backend, benchmark_sha256, _source "
            "FROM raw.runs WHERE run_id IN (SELECT run_id FROM __sx_run_ids) ORDER BY run_id").fetchall()
        finals = con.execute(
            "SELECT run_id, sample_id, attempt, predicted_answer, answer_json, terminated_by, total_prompt_tokens, "
            "total_completion_tokens, wall_time_s FROM raw.trajectories "
            "WHERE is_final AND run_id IN (SELECT run_id FROM __sx_run_ids) ORDER BY run_id, sample_id").fetchall()
        calls: dict[tuple[str, str], list[tuple]] = {}
        for run_id, sid, tool, query, target, chars in con.execute(
                "SELECT c.run_id, c.sample_id, c.tool, c.search_query, c.paper_id, c.output_chars "
                "FROM raw.tool_calls c JOIN raw.trajectories t USING (run_id, sample_id, attempt) "
                "WHERE t.is_final AND c.run_id IN (SELECT run_id FROM __sx_run_ids) "
                f"AND c.status NOT IN {_NOT_RUN} ORDER BY c.run_id, c.sample_id, c.seq").fetchall():
            calls.setdefault((run_id, sid), []).append((tool, query, target, chars))
        for table in ("sciexplore_runs", "sciexplore_responses", "sciexplore_trace", "judgments"):
            con.execute(f"DELETE FROM raw.{table} WHERE run_id IN (SELECT run_id FROM __sx_run_ids)").fetchall()
    finally:
        con.unregister("__sx_run_ids")
    run_rows = []
    source = {}
    for run_id, model, paradigm, replicate, backend, run_sha, src in runs:
        if run_sha != sha:
            raise IngestError(f"{src}: run {run_id!r} was made on SciExplore release {run_sha[:16]}, the loaded "
                              f"one is {sha[:16]}")
        run_rows.append({"run_id": run_id, "model": model, "paradigm": paradigm, "replicate": replicate,
                         "backend": backend, "benchmark_sha256": sha, "simulated": backend == "sim"})
        source[run_id] = src
    responses, trace, verdicts = [], [], []
    for run_id, sid, attempt, text, answer_json, terminated_by, pt, ct, wall in finals:
        task = tasks.get(sid)
        if task is None:
            raise IngestError(f"{source.get(run_id, run_id)}: sample {sid!r} is not a task of the loaded release")
        answer = json.loads(answer_json) if answer_json else text
        status = answer_status(task, terminated_by, text, answer)
        obj = {"answer": answer, "trace": _trace(calls.get((run_id, sid), [])), "prompt_tokens": pt,
               "completion_tokens": ct, "wall_time_s": wall, "attempt": attempt, "text": text}
        where = f"{source.get(run_id, run_id)}:{sid}"
        resp = _response(Where(Path(source.get(run_id, run_id)), 0), obj, task, run_id, status, where)
        responses.append(resp.row)
        trace += [{"run_id": run_id, "task_id": sid, **s} for s in resp.trace]
        verdicts += verdict_rows(resp)
    insert_arrow(con, "sciexplore_runs", pa.Table.from_pylist(run_rows, schema=sx.RUNS))
    insert_arrow(con, "sciexplore_responses", pa.Table.from_pylist(responses, schema=sx.RESPONSES))
    insert_arrow(con, "sciexplore_trace", pa.Table.from_pylist(trace, schema=sx.TRACE))
    insert_arrow(con, "judgments", pa.Table.from_pylist(verdicts, schema=sx.JUDGMENTS))
    return {"sciexplore_runs": len(run_rows), "sciexplore_responses": len(responses), "sciexplore_trace": len(trace),
            "judgments": len(verdicts)}
