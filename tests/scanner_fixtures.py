"""A tiny hand-built warehouse for the scanner tests: the raw layout (ingest/ddl.py) with a few rows written by
hand, so that every scanner's expected result can be worked out by reading this file.

Runs r1 (model m1) and r2 (model m2), content hashes h1 and h2:

- r1/s1 attempt 0 (final, answer, correct): search {"q": "a"} twice (turns 1 and 2), then submit; messages
  recorded, the last assistant message hedges ("I am not sure").
- r1/s2 attempt 0 (final, answer, wrong): answers with no tool call at all.
- r1/s3 attempt 0 (not final, error): fetch {"id": 1} fails (tool_error) and is retried identically.
  r1/s3 attempt 1 (final, max_turns, wrong): calls the tool `teleport`, which does not exist (unknown_tool).
- r2/s1 attempt 0 (final, answer, correct): search {"q": "a"} then search {"q": "b"}, submit.
- r2/s2 attempt 0 (final, budget, wrong): search {"q": "c"}.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from agenthop.ingest import ddl

RUNS = [("r1", "m1", "h1"), ("r2", "m2", "h2")]
# run, sample, attempt, is_final, terminated_by, is_correct, predicted_answer
TRAJECTORIES = [
    ("r1", "s1", 0, True, "answer", True, "B, but I am not sure"),
    ("r1", "s2", 0, True, "answer", False, "A"),
    ("r1", "s3", 0, False, "error", False, None),
    ("r1", "s3", 1, True, "max_turns", False, None),
    ("r2", "s1", 0, True, "answer", True, "B"),
    ("r2", "s2", 0, True, "budget", False, None),
]
# run, sample, attempt, turn, seq, tool, args_json, status
CALLS = [
    ("r1", "s1", 0, 1, 0, "search", '{"q": "a"}', "ok"),
    ("r1", "s1", 0, 2, 1, "search", '{"q": "a"}', "ok"),
    ("r1", "s1", 0, 3, 2, "submit", '{"answer": "B"}', "ok"),
    ("r1", "s3", 0, 1, 0, "fetch", '{"id": 1}', "tool_error"),
    ("r1", "s3", 0, 2, 1, "fetch", '{"id": 1}', "ok"),
    ("r1", "s3", 1, 1, 0, "teleport", "{}", "unknown_tool"),
    ("r2", "s1", 0, 1, 0, "search", '{"q": "a"}', "ok"),
    ("r2", "s1", 0, 2, 1, "search", '{"q": "b"}', "ok"),
    ("r2", "s1", 0, 3, 2, "submit", '{"answer": "B"}', "ok"),
    ("r2", "s2", 0, 1, 0, "search", '{"q": "c"}', "ok"),
]
# run, sample, attempt, idx, role, name, content
MESSAGES = [
    ("r1", "s1", 0, 0, "user", None, "Which option?"),
    ("r1", "s1", 0, 1, "assistant", None, "Let me search."),
    ("r1", "s1", 0, 2, "tool", "search", "results for a"),
    ("r1", "s1", 0, 3, "assistant", None, "B, but I am not sure."),
]


def _filled(schema: pa.Schema, rows: list[dict[str, Any]]) -> pa.Table:
    """``rows`` as a table of ``schema``; a required column a row leaves out gets a zero of its type."""
    def zero(t: pa.DataType) -> Any:
        if pa.types.is_boolean(t):
            return False
        if pa.types.is_integer(t) or pa.types.is_floating(t):
            return 0
        if pa.types.is_timestamp(t):
            return dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        return ""
    cols = {f.name: [r.get(f.name, None if f.nullable else zero(f.type)) for r in rows] for f in schema}
    return pa.table(cols, schema=schema)


def insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict[str, Any]]) -> None:
    data = _filled(ddl.warehouse_schema(table), rows)  # noqa: F841 (read by DuckDB by name)
    con.execute(f"INSERT INTO raw.{table} SELECT * FROM data")


def build(db: Path, *, with_scanner_tables: bool = True, benchmark: str = "agenthop") -> Path:
    """The warehouse above at ``db``; ``with_scanner_tables=False``: as an earlier version made it; the runs
    belong to ``benchmark``."""
    con = duckdb.connect(str(db))
    try:
        for stmt in ddl.ddl_statements():
            if with_scanner_tables or not any(f'"{t}"' in stmt for t in ("scanner_results", "scanner_runs",
                                                                          "human_labels")):
                con.execute(stmt)
        insert(con, "runs", [{"run_id": r, "model": m, "backend": "sim", "condition": "full", "benchmark": benchmark,
                             "config_json": "{}"}
                             for r, m, _ in RUNS])
        insert(con, "ingest_log", [{"load_id": i, "kind": "runs", "source": r, "run_id": r, "content_sha256": h,
                                    "action": "inserted", "row_counts": "{}"} for i, (r, _, h) in enumerate(RUNS, 1)])
        insert(con, "trajectories", [
            {"run_id": r, "sample_id": s, "attempt": a, "is_final": f, "terminated_by": t, "is_correct": c,
             "predicted_answer": p, "score": float(c)} for r, s, a, f, t, c, p in TRAJECTORIES])
        insert(con, "tool_calls", [
            {"run_id": r, "sample_id": s, "attempt": a, "turn": t, "call_index": 0, "seq": q, "tool": tool,
             "args_json": args, "status": st} for r, s, a, t, q, tool, args, st in CALLS])
        turns = sorted({(r, s, a, t) for r, s, a, t, *_ in CALLS})
        insert(con, "turns", [{"run_id": r, "sample_id": s, "attempt": a, "turn": t, "role": "assistant"}
                              for r, s, a, t in turns])
        insert(con, "messages", [{"run_id": r, "sample_id": s, "attempt": a, "idx": i, "role": role, "name": n,
                                  "content": c} for r, s, a, i, role, n, c in MESSAGES])
    finally:
        con.close()
    return db


#: Labels of give_up_or_hedge by one labeler: r1/s1 yes (flagged), r1/s2 no (not flagged), r2/s1 yes (not
#: flagged): sensitivity 1/2, specificity 1.
LABELS = [{"run_id": "r1", "sample_id": "s1", "scanner": "give_up_or_hedge", "value": True, "labeler": "ann"},
          {"run_id": "r1", "sample_id": "s2", "scanner": "give_up_or_hedge", "value": False, "labeler": "ann"},
          {"run_id": "r2", "sample_id": "s1", "scanner": "give_up_or_hedge", "value": True, "labeler": "ann"}]


def scanned(work: Path, benchmark: str = "agenthop") -> Path:
    """The warehouse above in ``work``, scanned with the shipped scanners (shipped:common) and with
    :data:`LABELS` loaded (no dbt build yet)."""
    from click.testing import CliRunner

    from agenthop.ingest.cli import main as ingest_main
    from agenthop.ingest.scanners.cli import main as scan_main

    db = build(work / "w.duckdb", benchmark=benchmark)
    assert CliRunner().invoke(scan_main, ["--scanners", "shipped:common", "--db", str(db)]).exit_code == 0
    labels = work / "labels.jsonl"
    labels.write_text("".join(json.dumps(x) + "\n" for x in LABELS))
    assert CliRunner().invoke(ingest_main, ["--db", str(db), "--labels", str(labels)]).exit_code == 0
    return db


def rerun(db: Path, run_id: str, new_hash: str) -> None:
    """Record a reload of ``run_id`` with other content (as an ingest that replaced it would)."""
    con = duckdb.connect(str(db))
    try:
        load_id = con.execute("SELECT max(load_id) + 1 FROM raw.ingest_log").fetchall()[0][0]
        insert(con, "ingest_log", [{"load_id": load_id, "kind": "runs", "source": run_id, "run_id": run_id,
                                    "content_sha256": new_hash, "action": "replaced", "row_counts": "{}"}])
    finally:
        con.close()
