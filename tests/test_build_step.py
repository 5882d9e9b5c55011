"""`agenthop-ingest --build` and `agenthop-dbt`, without running dbt: the command line, the progress read
from dbt's JSON events, the summary and the failure line from run_results.json (hand-built).
The builds themselves: tests/inspect/test_inspect_build.py."""

from __future__ import annotations

import io
import json
from pathlib import Path

from agenthop.ingest.build_step import NodeProgress, failure_line, read_outcome
from agenthop.ingest.dbt_command import dbt_command, dbt_workdir


def _event(name: str, level: str = "info", msg: str = "", **data: object) -> str:
    return json.dumps({"info": {"name": name, "level": level, "msg": msg}, "data": data})


def test_dbt_writes_its_target_and_logs_beside_the_warehouse(tmp_path: Path) -> None:
    db = tmp_path / "data" / "w.duckdb"
    assert dbt_workdir(db) == tmp_path / "data" / ".dbt" / "w.duckdb"
    cmd = dbt_command(["build", "--log-level", "warn"], db)
    assert cmd[1:4] == ["build", "--log-level", "warn"]
    opts = dict(zip(cmd[4::2], cmd[5::2]))
    assert opts["--target-path"] == str(dbt_workdir(db) / "target")
    assert opts["--log-path"] == str(dbt_workdir(db) / "logs")
    assert (Path(opts["--project-dir"]) / "dbt_project.yml").is_file()
    assert opts["--profiles-dir"] == opts["--project-dir"]
    # the user's own paths win; a command that reads no project gets no project options
    mine = dbt_command(["build", "--target-path=/elsewhere/t"], db)
    assert "--target-path" not in mine and "--log-path" in mine
    assert dbt_command(["--version"], db)[1:] == ["--version"]


def test_progress_counts_finished_nodes_and_keeps_errors() -> None:
    out = io.StringIO()
    progress = NodeProgress(out, show=True)
    for line in ["not json", _event("MainReportVersion", msg="Running with dbt=1.11"),
                 _event("LogStartLine", index=1, total=3), _event("LogModelResult", index=1, total=3),
                 _event("LogTestResult", level="error", msg="Failure in test t\nmore", index=2, num_models=3),
                 _event("SkippingDetails", index=3, total=3)]:
        progress.feed(line)
    progress.close()
    assert (progress.done, progress.total) == (3, 3)
    assert progress.errors == ["Failure in test t\nmore"]
    text = out.getvalue()
    assert "dbt build: preparing" in text and "dbt build: 1/3 nodes" in text and "dbt build: 3/3 nodes" in text
    quiet = io.StringIO()
    NodeProgress(quiet, show=False).feed(_event("LogModelResult", index=1, total=3))
    assert quiet.getvalue() == ""


def _results(tmp_path: Path, rows: list[tuple[str, str, str]]) -> Path:
    path = tmp_path / "run_results.json"
    path.write_text(json.dumps({"results": [{"unique_id": u, "status": s, "message": m} for u, s, m in rows]}))
    return path


def test_summary_and_failure_from_run_results(tmp_path: Path) -> None:
    outcome = read_outcome(_results(tmp_path, [
        ("model.agenthop.a", "success", "OK"), ("model.agenthop.b", "success", "unchanged"),
        ("seed.agenthop.s", "success", "INSERT 3"), ("operation.agenthop.hook", "success", ""),
        ("test.agenthop.t1", "pass", ""), ("test.agenthop.t2", "pass", "unchanged"),
        ("unit_test.agenthop.a.u", "pass", ""), ("test.agenthop.w1", "warn", "Got 2 results"),
    ]))
    assert outcome is not None and not outcome.failed
    assert outcome.summary(2.6, Path("/x/w.duckdb")) == (
        "built 2 models, 1 seed, 3 tests passed, 1 warned (w1) in 3 s; warehouse: /x/w.duckdb")

    failed = read_outcome(_results(tmp_path, [
        ("model.agenthop.a", "error", "Runtime Error in model a\n  Binder Error: x"),
        ("test.agenthop.t1", "fail", "Got 1 result, configured to fail if != 0"),
        ("model.agenthop.c", "skipped", ""),
    ]))
    log = Path("/x/.dbt/w.duckdb/logs/dbt.log")
    assert failure_line(failed, [], log) == (
        "dbt build failed: model.agenthop.a errored (and 1 more): Runtime Error in model a; the ingest is "
        "committed (rerun the build with agenthop-dbt build); log: /x/.dbt/w.duckdb/logs/dbt.log")
    # dbt stopped before any node (no run_results.json): its last error, first line
    assert read_outcome(tmp_path / "missing.json") is None
    assert failure_line(None, ["Encountered an error:\nCompilation Error", "Parsing Error in x.yml\n  detail"], log) \
        .startswith("dbt build failed: Parsing Error in x.yml; the ingest is committed")
