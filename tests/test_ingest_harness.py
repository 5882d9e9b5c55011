"""Ingest of what the real tools write: `agenthop-harness make-benchmark` + `run --backend sim`."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from agenthop.schemas import trajectory as ts

from conftest import cli

ITEMS = 24


def run(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(args), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def harness_run(bench: Path, out: Path, model: str, *extra: str) -> None:
    run(cli("agenthop-harness"), "run", "--data", str(bench), "--model", model, "--backend", "sim",
        "--out", str(out), "--messages", "--flush-every", "5", "--no-progress", *extra)


def parquet_rows(run_dir: Path, table: str) -> int:
    return sum(pq.read_metadata(p).num_rows for p in sorted(run_dir.glob(f"{table}-*.parquet")))


def table_digest(db: Path) -> dict[str, tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            t: con.sql(f"SELECT count(*), md5(coalesce(string_agg(CAST(x AS VARCHAR), chr(10) "
                       f"ORDER BY CAST(x AS VARCHAR)), '')) FROM raw.{t} x").fetchall()[0]
            for t in ("items", "sections", "graph_nodes", *ts.TABLES)
        }
    finally:
        con.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("ingest_harness")
    bench, runs = work / "bench", work / "runs"
    run(cli("agenthop-harness"), "make-benchmark", "--out", str(bench), "--items", str(ITEMS), "--seed", "3")
    harness_run(bench, runs, "early-committer", "--limit", "10")
    harness_run(bench, runs, "verifier", "--condition", "closed_book")
    return {"work": work, "bench": bench, "runs": runs}


def test_real_runs_load_and_reload(world: dict) -> None:
    bench, runs = world["bench"], world["runs"]
    db = world["work"] / "w.duckdb"
    proc = run(cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(bench), "--runs", str(runs))
    assert "benchmark inserted; runs 2 inserted, 0 replaced, 0 unchanged" in proc.stdout
    run_dirs = sorted(d for d in runs.iterdir() if d.is_dir())
    con = duckdb.connect(str(db), read_only=True)
    try:
        for table in ts.TABLES:
            expected = sum(parquet_rows(d, table) for d in run_dirs)
            assert con.sql(f"SELECT count(*) FROM raw.{table}").fetchall() == [(expected,)], table
        sha = hashlib.sha256((bench / "qa/full.jsonl").read_bytes()).hexdigest()[:16]
        assert con.sql("SELECT DISTINCT benchmark_sha256 FROM raw.runs").fetchall() == [(sha,)]
        assert con.sql("SELECT count(*) FROM raw.items").fetchall() == [(ITEMS,)]
        assert con.sql("SELECT model, condition, count(*) FILTER (WHERE is_final) FROM raw.runs "
                       "JOIN raw.trajectories USING (run_id) GROUP BY ALL ORDER BY 1").fetchall() == [
            ("early-committer", "full", 10), ("verifier", "closed_book", ITEMS),
        ]
        assert con.sql("SELECT count(*) FROM raw.tool_calls WHERE sample_id NOT IN "
                       "(SELECT sample_id FROM raw.items)").fetchall() == [(0,)]
        assert con.sql("SELECT bool_and(NOT _partial) FROM raw.runs").fetchall() == [(True,)]
    finally:
        con.close()
    before = table_digest(db)
    proc = run(cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(bench), "--runs", str(runs))
    assert "benchmark unchanged; runs 0 inserted, 0 replaced, 2 unchanged" in proc.stdout
    assert table_digest(db) == before


def test_resumed_run_replaces_previous_version(world: dict) -> None:
    bench, runs = world["bench"], world["work"] / "runs2"
    db = world["work"] / "w2.duckdb"
    harness_run(bench, runs, "balanced", "--limit", "6")
    run(cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(bench), "--runs", str(runs))
    harness_run(bench, runs, "balanced")  # resumes into the same run directory
    (run_dir,) = [d for d in runs.iterdir() if d.is_dir()]
    proc = run(cli("agenthop-ingest"), "--db", str(db), "--runs", str(run_dir))
    assert "runs 0 inserted, 1 replaced, 0 unchanged" in proc.stdout
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.sql("SELECT count(*) FROM raw.trajectories WHERE is_final").fetchall() == [(ITEMS,)]
        assert con.sql("SELECT count(*) FROM raw.tool_calls").fetchall() == [(parquet_rows(run_dir, "tool_calls"),)]
        assert con.sql("SELECT action FROM raw.ingest_log WHERE kind = 'runs' ORDER BY load_id").fetchall() == [
            ("inserted",), ("replaced",),
        ]
    finally:
        con.close()


def test_missing_part_of_finished_run_is_detected(world: dict, tmp_path: Path) -> None:
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(world["runs"], runs)
    run_dir = next(d for d in sorted(runs.iterdir()) if d.name.startswith("verifier"))
    # a finished run is compacted into one part per table: lose rows of it, as a lost part would
    (turns,) = run_dir.glob("turns-*.parquet")
    table = pq.read_table(turns)
    pq.write_table(table.slice(0, table.num_rows - 5), turns)
    db = tmp_path / "w.duckdb"
    proc = subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(world["bench"]),
                           "--runs", str(run_dir)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {run_dir / '_SUCCESS'}: the finished run recorded ")
    assert "turns rows but its part files hold" in proc.stderr
    assert not db.exists()
