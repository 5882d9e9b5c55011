"""AgentHop keeps its numbers and its files through the benchmark-agnostic core.

- Every mart of the session's test warehouse (tests/conftest.py::built_warehouse: synthetic release,
  simulated panel, ingest, dbt build) equals, row for row, the snapshot taken before the core was
  introduced (tests/fixtures/agenthop_mart_snapshot.json, see tests/mart_snapshot.py).
- A run directory written by the harness before the core (tests/fixtures/run_formats/pre_core/)
  still ingests, with its run id, as an AgentHop run.
- The same configuration run today gets the same run id (hash included) as that directory.

The fixture run was made with `agenthop-harness make-benchmark --items 4 --seed 3` and
`agenthop-harness run --model early-committer --limit 3`; the tests regenerate that release (the
generator is deterministic per seed) instead of keeping 2 MB of JSONL in the repository.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import pytest

from tests import mart_snapshot
from tests.conftest import BuiltWarehouse, cli, dbt_env

FORMATS = Path(__file__).resolve().parent / "fixtures" / "run_formats"
PRE_CORE_RUN = "early-committer__full__r0__bbc3df3d"


def _ok(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"{cmd[0]} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def small_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("release") / "bench"
    _ok([cli("agenthop-harness"), "make-benchmark", "--out", str(out), "--items", "4", "--seed", "3"], dbt_env(out))
    return out


def test_every_mart_matches_the_pre_core_snapshot(built_warehouse: BuiltWarehouse) -> None:
    expected = json.loads(mart_snapshot.SNAPSHOT.read_text())
    actual = mart_snapshot.digest(built_warehouse.db)
    missing = sorted(set(expected) - set(actual))
    assert not missing, f"marts gone from the warehouse: {missing}"
    changed = {
        mart: (want, actual[mart]) for mart, want in expected.items() if actual[mart] != want
    }
    assert not changed, f"marts whose rows changed (expected, actual): {changed}"


def _ingest(db: Path, release: Path, run_dir: Path) -> None:
    _ok([cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(release), "--runs", str(run_dir)], dbt_env(db))


def test_pre_core_run_directory_ingests_as_agenthop_with_its_run_id(small_release: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    _ingest(db, small_release, FORMATS / "pre_core" / PRE_CORE_RUN)
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT run_id, model FROM raw.runs").fetchall()
        n = con.execute("SELECT count(*) FROM raw.trajectories").fetchall()[0][0]
    finally:
        con.close()
    assert rows == [(PRE_CORE_RUN, "early-committer")]
    assert n == 3


def test_same_configuration_keeps_its_run_id(small_release: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    _ok([cli("agenthop-harness"), "run", "--data", str(small_release), "--model", "early-committer",
         "--limit", "3", "--out", str(out), "--no-progress"], dbt_env(tmp_path / "unused.duckdb"))
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == [PRE_CORE_RUN]
