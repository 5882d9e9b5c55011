"""Ingest's summary line counts what it names: ``rows loaded: TABLE=N`` is the number of rows written to
``raw.TABLE``. SciExplore harness runs once wrote their ``raw.sciexplore_runs`` rows without counting
them, so four harness runs and a responses file of one run printed ``sciexplore_runs=1`` for five rows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
from click.testing import CliRunner

from agenthop.harness.benchmarks.sciexplore.generator import write_release
from agenthop.harness.cli import main as harness_main
from agenthop.ingest.cli import main as ingest_main


def _loaded(summary: str) -> dict[str, int]:
    tail = summary.split("rows loaded: ", 1)[1].splitlines()[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"(\w+)=(\d+)", tail)}


def test_rows_loaded_counts_every_row_written_to_each_table(tmp_path: Path) -> None:
    rel, runs, db = tmp_path / "release", tmp_path / "runs", tmp_path / "w.duckdb"
    write_release(rel, 0)
    for replicate in range(4):
        r = CliRunner().invoke(harness_main, ["run", "--model", "skim-search", "--condition", "search", "--replicate",
                                              str(replicate), "--limit", "2", "--data", str(rel), "--out", str(runs),
                                              "--no-progress", "--processes", "1"], catch_exceptions=False)
        assert r.exit_code == 0, r.output
    task = json.loads((rel / "tasks.jsonl").read_text().splitlines()[0])["id"]
    responses = tmp_path / "responses.jsonl"
    responses.write_text(json.dumps({"model": "quill", "paradigm": "foundation", "replicate": 0, "task_id": task,
                                     "status": "answered", "answer": "x", "trace": [], "prompt_tokens": 1,
                                     "completion_tokens": 1, "wall_time_s": 1.0}) + "\n")
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--benchmark", str(rel), "--runs", str(runs),
                                         "--responses", str(responses)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    loaded = _loaded(r.output)
    with duckdb.connect(str(db), read_only=True) as con:
        stored = {t: con.execute(f"SELECT count(*) FROM raw.{t}").fetchall()[0][0] for t in loaded}
    assert stored["sciexplore_runs"] == 5 and stored["runs"] == 4
    assert loaded == stored  # a fresh warehouse: every row in each table was loaded by this ingest
