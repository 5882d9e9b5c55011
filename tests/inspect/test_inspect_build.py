"""From logs to built marts in one command, from any folder: `agenthop-ingest --inspect-log ... --build`
and `agenthop-dbt` run outside the repository, with dbt's target and logs beside the warehouse file
(docs/ingest.md#building-the-marts). Three dbt builds in all: the first, an incremental one, a failing one."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

from inspect_fixtures import inspect_logs  # noqa: F401  (the session's logs)
from inspect_fixtures import query_rows as _rows

BIN = Path(sys.executable).parent
SUMMARY = re.compile(r"^built (\d+) models, (?:\d+ seeds?, )?(\d+) tests passed(?:, .*)? in \d+ s; warehouse: (.+)$")


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A console script run from `cwd` (a folder outside the repository), without $AGENTHOP_DB."""
    env = {k: v for k, v in os.environ.items() if k != "AGENTHOP_DB"}
    env.update(DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    return subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True, env=env, cwd=cwd)


def _results(db: Path) -> list[dict]:
    return json.loads((db.parent / ".dbt" / db.name / "target" / "run_results.json").read_text())["results"]


@pytest.fixture(scope="module")
def built(inspect_logs, tmp_path_factory: pytest.TempPathFactory):  # noqa: F811
    """alpha's toolbox log (two epochs) loaded and built into a fresh warehouse, from an empty folder."""
    cwd = tmp_path_factory.mktemp("elsewhere")
    db = tmp_path_factory.mktemp("warehouse") / "w.duckdb"
    proc = _run("agenthop-ingest", "--db", str(db), "--inspect-log", str(inspect_logs.eval_logs[0]), "--build", cwd=cwd)
    return db, cwd, proc


def test_ingest_build_leaves_the_marts_built_and_prints_one_summary(built):
    db, cwd, proc = built
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ingest_line, summary = proc.stdout.strip().splitlines()
    assert "runs 2 inserted" in ingest_line
    m = SUMMARY.match(summary)
    assert m, summary
    results = _results(db)
    assert int(m.group(1)) == sum(1 for r in results if r["unique_id"].startswith("model.")) > 20
    assert int(m.group(2)) == sum(1 for r in results if r["status"] == "pass") > 50
    assert m.group(3) == str(db)
    # stderr is not a terminal here: no progress, no dbt output
    assert proc.stderr == ""
    # both epochs of alpha: s1-s3 right, s4 stopped by the token limit
    assert _rows(db, "SELECT benchmark, model, replicate, n, mean_score, n_limit FROM run_summary ORDER BY ALL") == [
        ("inspect:toolbox", "mockllm/alpha", 0, 4, 0.75, 1),
        ("inspect:toolbox", "mockllm/alpha", 1, 4, 0.75, 1),
    ]
    assert sorted(p.name for p in cwd.iterdir()) == []  # no target/ or logs/ in the current folder
    assert (db.parent / ".dbt" / db.name / "logs" / "dbt.log").is_file()


def test_agenthop_dbt_from_another_folder_builds_incrementally(built, tmp_path: Path):
    db, _, first = built
    assert first.returncode == 0
    cwd = tmp_path / "somewhere"
    cwd.mkdir()
    proc = _run("agenthop-dbt", "--db", str(db), "build", "--log-level", "warn", cwd=cwd)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert list(cwd.iterdir()) == []
    # the warehouse's own record of the first build is found from here: unchanged views are not made again
    unchanged = [r["unique_id"] for r in _results(db) if r["message"] == "unchanged"]
    assert "model.agenthop.stg_harness__runs" in unchanged
    assert len(_rows(db, "SELECT * FROM run_summary")) == 2


def test_a_failed_build_names_the_node_and_keeps_the_ingest(built, inspect_logs, tmp_path: Path):  # noqa: F811
    """A warehouse whose raw.benchmarks holds a release twice (broken by hand): the ingest of beta's log
    commits, then the build fails at the uniqueness test of that table, named in one line."""
    db, _, first = built
    assert first.returncode == 0
    broken = tmp_path / "broken.duckdb"
    shutil.copyfile(db, broken)
    con = duckdb.connect(str(broken))
    con.execute("INSERT INTO raw.benchmarks SELECT * FROM raw.benchmarks")
    con.close()
    proc = _run("agenthop-ingest", "--db", str(broken), "--inspect-log", str(inspect_logs.eval_logs[1]), "--build",
                cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "runs 2 inserted" in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    failed = {r["unique_id"] for r in _results(broken) if r["status"] in ("fail", "error")}
    named = re.match(r"error: dbt build failed: (\S+) (?:fail|error)ed", lines[0])
    assert named and named.group(1) in failed, lines[0]
    assert "benchmark" in named.group(1)
    assert "the ingest is committed" in lines[0]
    assert lines[0].endswith(f"log: {tmp_path / '.dbt' / 'broken.duckdb' / 'logs' / 'dbt.log'}")
    assert _rows(broken, "SELECT count(*) FROM raw.runs") == [(4,)]  # beta's two epochs stayed loaded
    assert sorted(p.name for p in tmp_path.iterdir()) == [".dbt", "broken.duckdb"]
