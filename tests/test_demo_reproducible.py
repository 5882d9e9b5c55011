"""The demo reruns to the same numbers: the demo's pipeline (panels/demo.yaml) run twice into one
warehouse leaves every mart row as it was, prints no warning, and records no `error` terminations."""

from __future__ import annotations

import subprocess
from pathlib import Path

import duckdb

from conftest import REPO, _check, cli, dbt_env, run_dbt_build


def _pipeline(work: Path, db: Path) -> None:
    """The steps of `make demo` up to `dbt build`, on a small benchmark."""
    bench, runs, env = work / "benchmark", work / "runs", dbt_env(db)
    steps = {
        "make-benchmark": [cli("agenthop-harness"), "make-benchmark", "--out", str(bench), "--items", "12",
                           "--seed", "0"],
        "harness run": [cli("agenthop-harness"), "run", "--panel", str(REPO / "panels" / "demo.yaml"),
                        "--data", str(bench), "--out", str(runs), "--messages", "--no-progress"],
        "ingest": [cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(bench), "--runs", str(runs)],
    }
    for what, cmd in steps.items():
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        _check(proc, what)
        assert "warn" not in (proc.stdout + proc.stderr).lower(), f"{what} printed a warning:\n{proc.stderr}"
    # models and seeds only: data and unit tests change no row (the suite runs them elsewhere)
    proc = run_dbt_build(db, work, "--resource-type", "model", "--resource-type", "seed")
    _check(proc, "dbt build")
    assert "warn" not in proc.stdout.lower().replace("warn=0", ""), f"dbt build printed a warning:\n{proc.stdout}"


#: Relations that describe the build itself (when it ran, which ingest load it saw), not the data.
BUILD_METADATA = {"build_info", "sciexplore_build_info"}


def _marts(db: Path) -> dict[str, list[tuple]]:
    with duckdb.connect(str(db), read_only=True) as con:
        names = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY 1").fetchall()]
        return {n: sorted(con.execute(f'SELECT * FROM main."{n}"').fetchall(), key=repr) for n in names if n not in BUILD_METADATA}


def test_second_demo_run_changes_no_mart_row(tmp_path: Path) -> None:
    db = tmp_path / "warehouse.duckdb"
    _pipeline(tmp_path, db)
    first = _marts(db)
    with duckdb.connect(str(db), read_only=True) as con:
        errors = con.execute("SELECT count(*) FROM raw.trajectories WHERE terminated_by = 'error'").fetchone()[0]
    assert errors == 0, "the demo panel must not inject simulated transient errors"
    assert {"fct_trajectory", "model_summary", "cell_accuracy"} <= set(first)

    _pipeline(tmp_path, db)
    second = _marts(db)
    assert set(second) == set(first)
    changed = [name for name in first if first[name] != second[name]]
    assert not changed, f"marts changed on the second run: {changed}"
