"""The same AgentHop items from four sources (the harness, the AgentHop Inspect task, an EEE export and an ATIF
export imported back) join on sample_hash: the SQL example of docs/interchange.md#sample-hash, run as written."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

from conftest import _check, run_dbt_build
from inspect_fixtures import query_rows as _rows
from test_inspect_agenthop_task import ITEMS, BothRuns, both_runs, both_runs_warehouse  # noqa: F401 (session fixtures)

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]


def _run(env: dict[str, str], *args: str | Path) -> None:
    proc = subprocess.run([str(BIN / str(args[0])), *map(str, args[1:])], capture_output=True, text=True, env=env,
                          cwd=REPO)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])


def example_sql() -> str:
    text = (REPO / "docs" / "interchange.md").read_text()
    section = text.split("## Sample hash", 1)[1]
    return re.search(r"```sql\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def test_four_sources_join_on_shared_items(both_runs_warehouse: Path, tmp_path: Path) -> None:  # noqa: F811
    db = tmp_path / "w.duckdb"
    shutil.copyfile(both_runs_warehouse, db)  # the release, the harness run and the Inspect log, built
    env = dict(os.environ, AGENTHOP_DB=str(db), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    con = duckdb.connect(str(db), read_only=True)
    (harness_id,) = con.execute("SELECT run_id FROM raw.runs WHERE backend = 'sim'").fetchone()  # type: ignore[misc]
    con.close()
    for fmt in ("eee", "atif"):
        _run(env, "agenthop-report", "export", "--format", fmt, "--runs", harness_id, "--out", tmp_path / fmt,
             "--db", db)
    _run(env, "agenthop-ingest", "--db", db, "--eee", tmp_path / "eee", "--atif", tmp_path / "atif")
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(example_sql()).fetchall()
    finally:
        con.close()
    by_hash: dict[str, dict[str, tuple[str, float]]] = {}
    for sample_hash, source, benchmark, sample_id, score in rows:
        by_hash.setdefault(sample_hash, {})[source] = (sample_id, score)
    assert len(by_hash) == ITEMS
    for sources in by_hash.values():
        assert set(sources) == {"sim", "inspect-log", "eee", "atif"}
        # one item under one id everywhere, and the same simulated agent scored it alike in every source
        assert len({sid for sid, _ in sources.values()}) == 1
        assert len({score for _, score in sources.values()}) == 1


def test_an_inspect_run_round_trips_through_eee(both_runs: BothRuns, tmp_path: Path) -> None:  # noqa: F811
    db, back = tmp_path / "w.duckdb", tmp_path / "back.duckdb"
    env = dict(os.environ, AGENTHOP_DB=str(db), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    _run(env, "agenthop-ingest", "--db", db, "--benchmark", both_runs.release, "--inspect-log", both_runs.inspect_log)
    _check(run_dbt_build(db, tmp_path), "dbt build")
    _run(env, "agenthop-report", "export", "--format", "eee", "--out", tmp_path / "eee", "--db", db)
    _run(env, "agenthop-ingest", "--db", back, "--eee", tmp_path / "eee")
    for sql in (
        "SELECT sample_id, attempt, is_final, score, is_correct, predicted_answer, terminated_by, total_prompt_tokens, "
        "total_completion_tokens, cache_read_tokens, total_tokens, wall_time_s FROM raw.trajectories ORDER BY ALL",
        "SELECT sample_id, attempt, seq, turn, tool, args_json, status, cost FROM raw.tool_calls ORDER BY ALL",
        "SELECT sample_id, attempt, idx, role, tool_call_id, content FROM raw.messages ORDER BY ALL",
        "SELECT sample_id, scorer, key, value_text, value_num FROM raw.scores ORDER BY ALL",
    ):
        original = _rows(db, sql)
        assert original and _rows(back, sql) == original
