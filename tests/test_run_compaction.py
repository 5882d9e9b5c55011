"""A finished run's part files are compacted into one file per table: atomically (a crash at any point
leaves a consistent directory), and ingest loads exactly the same rows before and after."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
from agenthop.harness.benchmarks.agenthop.loader import load_release
from agenthop.harness.panel import ModelSpec, RunSpec
from agenthop.harness.runner import COMPLETE, RunOptions, run_model
from agenthop.harness.writer import compact_run_dir, finished_samples, list_parts, recover_run_dir
from agenthop.schemas import trajectory as ts

from conftest import cli

N_ITEMS = 20


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("compaction")
    bench = work / "bench"
    make_benchmark(bench, N_ITEMS, seed=8)
    release = load_release(bench)
    opts = RunOptions(progress=False, record_messages=True, flush_every=3, compact=False)
    res = run_model(RunSpec(ModelSpec("verifier", sim={"archetype": "verifier"}), "full", 0), release,
                    work / "parts", opts)
    assert res.status == COMPLETE
    return {"work": work, "bench": bench, "run": Path(res.run_dir)}


def names(run_dir: Path) -> list[str]:
    return sorted(p.name for p in run_dir.glob("*.parquet"))


def raw_rows(db: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for t in ts.TABLES:
            cols = ", ".join(f.name for f in ts.TABLES[t])
            out[t] = con.sql(f"SELECT {cols} FROM raw.{t} ORDER BY ALL").fetchall()
        return out
    finally:
        con.close()


def ingest(bench: Path, runs: Path, db: Path) -> dict[str, list[tuple]]:
    proc = subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(bench), "--runs", str(runs)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return raw_rows(db)


def test_compaction_keeps_every_row_for_ingest(world: dict[str, Path], tmp_path: Path) -> None:
    before_dir = world["run"]
    assert len(list_parts(before_dir)["trajectories"]) == 7  # 20 samples, 3 per part
    after_root = tmp_path / "compacted"
    after_dir = after_root / before_dir.name
    shutil.copytree(before_dir, after_dir)
    assert compact_run_dir(after_dir) == 7
    assert names(after_dir) == ["messages-00007.parquet", "runs-00000.parquet", "tool_calls-00007.parquet",
                                "trajectories-00007.parquet", "turns-00007.parquet"]
    assert compact_run_dir(after_dir) == 0  # already one part per table
    before = ingest(world["bench"], before_dir.parent, tmp_path / "before.duckdb")
    after = ingest(world["bench"], after_root, tmp_path / "after.duckdb")
    assert all(before[t] for t in ("trajectories", "turns", "tool_calls", "messages"))
    assert before == after
    # resume after compaction: nothing to redo, the next part number follows the compacted one
    state = recover_run_dir(after_dir)
    assert len(state.finals) == N_ITEMS and state.next_part == 8


@pytest.mark.parametrize("crash", ["before_trajectories", "before_deleting"])
def test_a_crash_during_compaction_leaves_a_consistent_run(world: dict[str, Path], tmp_path: Path,
                                                           crash: str) -> None:
    run_dir = tmp_path / world["run"].name
    shutil.copytree(world["run"], run_dir)
    old = {p.name: p.read_bytes() for p in run_dir.glob("*-0000[0-6].parquet") if not p.name.startswith("runs")}
    compact_run_dir(run_dir)
    for name, data in old.items():  # the old parts were not deleted yet ...
        (run_dir / name).write_bytes(data)
    if crash == "before_trajectories":  # ... nor the merged trajectories part renamed into place
        (run_dir / "trajectories-00007.parquet").unlink()
    state = recover_run_dir(run_dir)
    assert sorted(state.finals) == sorted(finished_samples(world["run"])) and len(state.finals) == N_ITEMS
    if crash == "before_trajectories":  # the merged parts of other tables were orphans: removed
        assert names(run_dir) == sorted([*old, "runs-00000.parquet"])
    else:  # the merged part names what it replaces: the old parts are deleted
        assert names(run_dir) == ["messages-00007.parquet", "runs-00000.parquet", "tool_calls-00007.parquet",
                                  "trajectories-00007.parquet", "turns-00007.parquet"]
