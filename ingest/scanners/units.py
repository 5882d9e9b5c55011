"""What a scan reads from the warehouse: the selected runs with their content hashes, their attempts (the
units a scanner classifies), what each scanner last scanned, and the attempts' transcripts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from agenthop.harness.errors import AgentHopError
from agenthop.harness.shards import Shard

from .llm_kind import render_messages, render_steps

Unit = tuple[str, str, int]  # run_id, sample_id, attempt


@dataclass(frozen=True, slots=True)
class Done:
    """A scanner's record of one run it scanned (raw.scanner_runs)."""

    shard: str
    scanner_version: str
    run_sha256: str


def table_exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'raw' "
                            "AND table_name = ?", [table]).fetchall()[0][0])


def select_runs(con: duckdb.DuckDBPyConnection, runs: Sequence[str],
                models: Sequence[str]) -> dict[str, tuple[str, str]]:
    """run_id -> (content hash, benchmark) of the runs to scan: the ones named by ``runs`` or of the ``models`` (every
    run when neither is given); an unknown run or model is an error."""
    if not table_exists(con, "runs"):
        raise AgentHopError("the warehouse holds no runs: load some with agenthop-ingest first")
    rows = con.execute(
        """
        SELECT r.run_id, r.model, coalesce(l.content_sha256, ''), r.benchmark
        FROM raw.runs AS r
        LEFT JOIN (
            SELECT run_id, arg_max(content_sha256, load_id) AS content_sha256
            FROM raw.ingest_log
            WHERE run_id IS NOT NULL AND action IN ('inserted', 'replaced')
            GROUP BY run_id
        ) AS l USING (run_id)
        ORDER BY r.run_id
        """).fetchall()
    known = {r[0]: r for r in rows}
    for run in runs:
        if run not in known:
            raise AgentHopError(f"--runs {run}: no such run in the warehouse ({len(known)} loaded)")
    models_known = {r[1] for r in rows}
    for model in models:
        if model not in models_known:
            raise AgentHopError(f"--models {model}: no run of this model in the warehouse "
                                f"(models: {', '.join(sorted(models_known)) or 'none'})")
    return {r[0]: (r[2], r[3]) for r in rows
            if (not runs and not models) or r[0] in runs or r[1] in models}


def units_of(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str], shard: Shard | None) -> dict[str, list[Unit]]:
    """run_id -> its attempts (sample_id, attempt order), only the ``shard``'s samples when given."""
    if not run_ids:
        return {}
    rows = con.execute("SELECT run_id, sample_id, attempt FROM raw.trajectories WHERE list_contains(?, run_id) "
                       "ORDER BY run_id, sample_id, attempt", [list(run_ids)]).fetchall()
    out: dict[str, list[Unit]] = {r: [] for r in run_ids}
    for run_id, sample_id, attempt in rows:
        if shard is None or shard.owns(sample_id):
            out[run_id].append((run_id, sample_id, int(attempt)))
    return out


def done_runs(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], list[Done]]:
    """(scanner, run_id) -> the records of its scans (none in a warehouse without raw.scanner_runs)."""
    if not table_exists(con, "scanner_runs"):
        return {}
    out: dict[tuple[str, str], list[Done]] = {}
    for scanner, run_id, shard, version, sha in con.execute(
            "SELECT scanner, run_id, shard, scanner_version, run_sha256 FROM raw.scanner_runs").fetchall():
        out.setdefault((scanner, run_id), []).append(Done(shard, version, sha))
    return out


def is_current(records: list[Done], shard: str, version: str, sha: str) -> bool:
    """Whether a scan of ``shard`` ('' for all) by ``version`` of a run whose content is ``sha`` is done
    already: a record of the whole run, or of this shard, by the same version of the same content."""
    return any(d.scanner_version == version and d.run_sha256 == sha and d.shard in ("", shard) for d in records)


def units_table(units: Sequence[Unit]) -> pa.Table:
    return pa.table({"run_id": pa.array([u[0] for u in units], pa.string()),
                     "sample_id": pa.array([u[1] for u in units], pa.string()),
                     "attempt": pa.array([u[2] for u in units], pa.int32())})


def transcripts(con: duckdb.DuckDBPyConnection, units: Sequence[Unit]) -> dict[Unit, str]:
    """Each unit's transcript text (llm_kind.py): its messages, else its turns and tool calls."""
    if not units:
        return {}
    con.register("scan_units", units_table(units))
    try:
        msgs: dict[Unit, list[tuple]] = {}
        if table_exists(con, "messages"):
            for run_id, sample_id, attempt, *rest in con.execute(
                    "SELECT m.run_id, m.sample_id, m.attempt, m.idx, m.role, m.name, m.content FROM raw.messages AS m "
                    "SEMI JOIN scan_units AS u USING (run_id, sample_id, attempt) "
                    "ORDER BY m.run_id, m.sample_id, m.attempt, m.idx").fetchall():
                msgs.setdefault((run_id, sample_id, int(attempt)), []).append(tuple(rest))
        turns: dict[Unit, list[tuple]] = {}
        calls: dict[Unit, list[tuple]] = {}
        error_text = "t.error_text" if con.execute(  # a column added later: an older warehouse lacks it
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'raw' AND table_name = 'turns' "
            "AND column_name = 'error_text'").fetchall()[0][0] else "NULL"
        for run_id, sample_id, attempt, *rest in con.execute(
                f"SELECT t.run_id, t.sample_id, t.attempt, t.turn, t.role, {error_text} FROM raw.turns AS t "
                "SEMI JOIN scan_units AS u USING (run_id, sample_id, attempt) "
                "ORDER BY t.run_id, t.sample_id, t.attempt, t.turn").fetchall():
            turns.setdefault((run_id, sample_id, int(attempt)), []).append(tuple(rest))
        for run_id, sample_id, attempt, *rest in con.execute(
                "SELECT c.run_id, c.sample_id, c.attempt, c.turn, c.seq, c.tool, c.args_json, c.status, c.answer "
                "FROM raw.tool_calls AS c SEMI JOIN scan_units AS u USING (run_id, sample_id, attempt) "
                "ORDER BY c.run_id, c.sample_id, c.attempt, c.seq").fetchall():
            calls.setdefault((run_id, sample_id, int(attempt)), []).append(tuple(rest))
    finally:
        con.unregister("scan_units")
    return {u: render_messages(msgs[u]) if u in msgs else render_steps(turns.get(u, []), calls.get(u, []))
            for u in units}
