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
import shutil
import subprocess
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from tests import mart_snapshot
from tests.conftest import BuiltWarehouse, cli, dbt_env, run_dbt_build
from tests.test_dbt_marts import q

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
    # marts may gain columns; the rows over the columns they had must be the same
    actual = mart_snapshot.digest(built_warehouse.db, {m: v["columns"] for m, v in expected.items()})
    missing = sorted(set(expected) - set(actual))
    assert not missing, f"marts gone from the warehouse: {missing}"
    changed = {
        mart: (want, actual[mart]) for mart, want in expected.items() if actual[mart] != want
    }
    assert not changed, f"marts whose rows changed (expected, actual): {changed}"


def _ingest(db: Path, release: Path, run_dir: Path) -> None:
    _ok([cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(release), "--runs", str(run_dir)], dbt_env(db))


@pytest.mark.parametrize("fmt", ["pre_core", "before_wait_s", "first_release"])
def test_older_run_directory_ingests_as_agenthop_with_its_run_id(small_release: Path, tmp_path: Path, fmt: str) -> None:
    db = tmp_path / "w.duckdb"
    _ingest(db, small_release, FORMATS / fmt / PRE_CORE_RUN)
    assert q(db, "SELECT run_id, model, benchmark, paradigm FROM raw.runs") == [
        (PRE_CORE_RUN, "early-committer", "agenthop", None)
    ]
    # score reads as is_correct; the columns added later read as null
    rows = q(db, "SELECT is_correct, score, answer_json FROM raw.trajectories ORDER BY sample_id")
    assert rows == [(c, 1.0 if c else 0.0, None) for c, _, _ in rows] and len(rows) == 3
    assert sum(c for c, _, _ in rows) == 2  # accuracy 2/3 when the run was made
    wait = q(db, "SELECT count(wait_s), count(repaired_chars) FROM raw.trajectories")[0]
    assert wait == ((3, 3) if fmt == "pre_core" else (0, 0))
    assert q(db, "SELECT count(error_type) FROM raw.tool_calls") == [(0,)]
    assert q(db, "SELECT benchmark, n_items FROM raw.benchmarks") == [("agenthop", 4)]


#: what the raw layout gained with the benchmark-agnostic core
CORE_COLUMNS = {"runs": ["benchmark", "paradigm"], "trajectories": ["score", "answer_json"], "tool_calls": ["error_type"]}


def test_warehouse_of_the_pre_core_layout_is_upgraded_by_its_next_ingest(small_release: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    _ingest(db, small_release, FORMATS / "pre_core" / PRE_CORE_RUN)
    con = duckdb.connect(str(db))  # back to the layout the version before the core wrote
    for table, cols in CORE_COLUMNS.items():
        for col in cols:
            con.execute(f"ALTER TABLE raw.{table} DROP COLUMN {col}")
    con.execute("DROP TABLE raw.benchmarks")
    con.execute("DROP TABLE raw.scores")
    con.close()
    # the same run in another format: new content, so it replaces the loaded one
    _ok([cli("agenthop-ingest"), "--db", str(db), "--runs", str(FORMATS / "first_release" / PRE_CORE_RUN)], dbt_env(db))
    assert q(db, "SELECT run_id, benchmark FROM raw.runs") == [(PRE_CORE_RUN, "agenthop")]
    assert q(db, "SELECT count(*), sum(score) FROM raw.trajectories") == [(3, 2.0)]
    sha = q(db, "SELECT value FROM raw.warehouse_meta WHERE key = 'benchmark_sha256'")[0][0]
    assert q(db, "SELECT benchmark, sha256, n_items FROM raw.benchmarks") == [("agenthop", sha, 4)]
    # and the marts build on the upgraded warehouse
    proc = run_dbt_build(db, tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert q(db, "SELECT run_id, benchmark, n, mean_score FROM run_summary") == [(PRE_CORE_RUN, "agenthop", 3, 2 / 3)]
    assert q(db, "SELECT count(*), sum(is_correct::int) FROM fct_trajectory") == [(3, 2)]


def test_run_of_a_benchmark_without_a_loaded_release_is_refused(small_release: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    run = tmp_path / "runs" / PRE_CORE_RUN
    shutil.copytree(FORMATS / "pre_core" / PRE_CORE_RUN, run)
    part = run / "runs-00000.parquet"
    t = pq.read_table(part)
    pq.write_table(t.append_column("benchmark", pa.array(["sciexplore"])), part)
    db = tmp_path / "w.duckdb"
    proc = subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(small_release), "--runs", str(run)],
                          env=dbt_env(db), capture_output=True, text=True)
    assert proc.returncode != 0
    assert "no release of benchmark 'sciexplore' is loaded" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not db.exists()


def test_same_configuration_keeps_its_run_id(small_release: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    _ok([cli("agenthop-harness"), "run", "--data", str(small_release), "--model", "early-committer",
         "--limit", "3", "--out", str(out), "--no-progress"], dbt_env(tmp_path / "unused.duckdb"))
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == [PRE_CORE_RUN]
    # today's files carry the benchmark and the score
    import pyarrow.parquet as pq

    run = pq.read_table(next((out / PRE_CORE_RUN).glob("runs-*.parquet")))
    assert run.column("benchmark").to_pylist() == ["agenthop"]
    assert run.column("paradigm").to_pylist() == [None]
    tr = pq.read_table(next((out / PRE_CORE_RUN).glob("trajectories-*.parquet")))
    assert tr.column("score").to_pylist() == [1.0 if c else 0.0 for c in tr.column("is_correct").to_pylist()]
    assert "error_type" in pq.read_schema(next((out / PRE_CORE_RUN).glob("tool_calls-*.parquet"))).names
