"""Impossible data: refused by default with file, row and column named (warehouse byte-identical);
loaded with --accept-dq into raw.dq_issues and the dq marts, where `dbt build` fails on it."""

from __future__ import annotations

import hashlib
import math
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from agenthop.ingest.cli import main
from agenthop.schemas import quality as qschema
from agenthop.schemas import trajectory as tschema
from ingest_fixtures import ref_trajectory, ref_turn, run_rows, write_json, write_release, write_run

Rows = dict[str, list[dict[str, Any]]]


def ingest(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def file_sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _set(table: str, row: int, **values: Any) -> Callable[[Rows], None]:
    def edit(rows: Rows) -> None:
        rows[table][row].update(values)
    return edit


def _two_finals(rows: Rows) -> None:
    extra = dict(rows["trajectories"][1], attempt=1, budget_used=0)
    rows["trajectories"].append(extra)


def _drop_trajectory(rows: Rows) -> None:
    del rows["trajectories"][1]


def _orphan_call(rows: Rows) -> None:
    rows["tool_calls"].append(dict(rows["tool_calls"][0], attempt=3, seq=99, cost=0))


#: case -> (edit of the run rows, table, row, column, rule); rows are 0-based within the one part file.
#: run_rows: 3 samples, one trajectory each, 2 turns and 3 calls (costs 1, 5, 0) per sample.
CASES: dict[str, tuple[Callable[[Rows], None], str, int, str, str]] = {
    "negative_budget_used": (_set("trajectories", 1, budget_used=-1), "trajectories", 1, "budget_used", "out_of_range"),
    "negative_total_tokens": (_set("trajectories", 0, total_tokens=-5), "trajectories", 0, "total_tokens",
                              "out_of_range"),
    "negative_cost": (_set("tool_calls", 4, cost=-5), "tool_calls", 4, "cost", "out_of_range"),
    "negative_attempt": (_set("trajectories", 2, attempt=-1), "trajectories", 2, "attempt", "out_of_range"),
    "negative_replicate": (_set("runs", 0, replicate=-1), "runs", 0, "replicate", "out_of_range"),
    "negative_turn_tokens": (_set("turns", 3, prompt_tokens=-1), "turns", 3, "prompt_tokens", "out_of_range"),
    "predicted_index_7": (_set("trajectories", 1, predicted_index=7), "trajectories", 1, "predicted_index",
                          "out_of_range"),
    "nan_wall_time": (_set("trajectories", 0, wall_time_s=math.nan), "trajectories", 0, "wall_time_s", "not_finite"),
    "infinite_offset": (_set("turns", 1, t_offset_s=math.inf), "turns", 1, "t_offset_s", "not_finite"),
    "unknown_condition": (_set("runs", 0, condition="open_book"), "runs", 0, "condition", "unknown_value"),
    "unknown_termination": (_set("trajectories", 2, terminated_by="gave_up"), "trajectories", 2, "terminated_by",
                            "unknown_value"),
    "unknown_role": (_set("turns", 5, role="user"), "turns", 5, "role", "unknown_value"),
    "total_tokens_disagree": (_set("trajectories", 2, total_tokens=999), "trajectories", 2, "total_tokens",
                              "total_tokens_vs_components"),
    "budget_disagrees_with_costs": (_set("trajectories", 0, budget_used=7), "trajectories", 0, "budget_used",
                                    "budget_used_vs_call_costs"),
    "two_final_attempts": (_two_finals, "trajectories", 3, "is_final", "final_attempt_count"),
    "no_final_attempt": (_set("trajectories", 1, is_final=False), "trajectories", 1, "is_final",
                         "final_attempt_count"),
    "turns_without_trajectory": (_drop_trajectory, "turns", 2, "attempt", "turn_without_trajectory"),
    "calls_without_trajectory": (_orphan_call, "tool_calls", 9, "attempt", "call_without_trajectory"),
    "ok_status_on_unknown_tool": (_set("tool_calls", 0, tool="teleport"), "tool_calls", 0, "status",
                                  "unknown_tool_status"),
}


def test_every_rule_has_a_case() -> None:
    assert {c[4] for c in CASES.values()} == {r.name for r in qschema.RULES}


def test_known_tools_are_the_sandbox_tools() -> None:
    from agenthop.harness.benchmarks.agenthop.tools import TOOL_NAMES

    assert qschema.TOOL_NAMES == TOOL_NAMES


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("quality")
    root = work / "bench"
    sha = write_release(root)
    db = work / "w.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(root), "--runs", str(write_run(work / "good", run_rows("good", sha))))
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(db))
    con.execute("CHECKPOINT")
    con.close()
    return {"db": db, "sha": sha, "bench": root, "work": work}


def damaged_run(out: Path, sha: str, case: str) -> Path:
    rows = run_rows(f"dq-{case}", sha)
    CASES[case][0](rows)
    return write_run(out, rows)


@pytest.mark.parametrize("case", sorted(CASES))
def test_impossible_data_is_refused(template: dict, tmp_path: Path, case: str) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copyfile(template["db"], db)
    before = file_sha(db)
    d = damaged_run(tmp_path / "runs", template["sha"], case)
    _, table, row, column, rule = CASES[case]
    res = ingest("--db", str(db), "--runs", str(d))
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in res.output, res.output
    part = d / f"{table}-00000.parquet"
    assert lines[0].startswith(f"error: {part}: row {row}, column '{column}' ({table}): "), lines[0]
    assert re.search(rf"\b{rule} \d+", lines[0]), lines[0]
    assert "--accept-dq" in lines[0]
    assert file_sha(db) == before
    assert not Path(str(db) + ".wal").exists()


def test_messages_name_value_and_requirement(template: dict, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copyfile(template["db"], db)
    d = damaged_run(tmp_path / "runs", template["sha"], "predicted_index_7")
    res = ingest("--db", str(db), "--runs", str(d))
    assert "column 'predicted_index' (trajectories): is 7, must be between -1 and 3 " \
           "[1 data-quality violation: out_of_range 1]" in res.stderr
    d = damaged_run(tmp_path / "runs2", template["sha"], "total_tokens_disagree")
    res = ingest("--db", str(db), "--runs", str(d))
    assert "is 999 (parts sum to 1102); it must equal total_prompt_tokens + total_completion_tokens + " \
           "cache_creation_tokens" in res.stderr


def test_reference_json_violations_name_the_file_and_place(template: dict, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copyfile(template["db"], db)
    before = file_sha(db)
    folder = tmp_path / "ref-dq"
    turn = ref_turn(0, [("read_section", {"paper_id": "x", "section": "A"}), ("submit_answer", {"answer": "B"})],
                    [("Paper 'x' not found.", 5), ("Answer submitted: B", 0)], before=30, after=25)
    write_json(folder / "st_0001.json", ref_trajectory("st_0001", [turn], budget_used=5))
    write_json(folder / "st_0002.json", ref_trajectory("st_0002", [], budget_used=3, predicted_index=9))
    res = ingest("--db", str(db), "--reference-json", str(folder))
    assert res.exit_code == 2
    assert res.stderr.startswith(
        f"error: {folder / 'st_0002.json'}: row record, column 'predicted_index' (trajectories): is 9"), res.stderr
    assert "budget_used_vs_call_costs 1" in res.stderr
    assert file_sha(db) == before
    # a negative cost names the call inside the record
    write_json(folder / "st_0002.json", ref_trajectory("st_0002", []))
    bad = ref_turn(0, [("list_sections", {"paper_id": "x"})], [("Paper 'x' not found.", -1)], before=30, after=31)
    write_json(folder / "st_0001.json", ref_trajectory("st_0001", [bad], budget_used=0))
    res = ingest("--db", str(db), "--reference-json", str(folder))
    assert res.exit_code == 2
    assert f"{folder / 'st_0001.json'}: row turns[0].tool_calls[0], column 'cost' (tool_calls): is -1" in res.stderr
    assert file_sha(db) == before


@pytest.fixture(scope="module")
def accepted(template: dict) -> dict:
    """Every damaged run loaded in one invocation with --accept-dq, then one dbt build."""
    from conftest import run_dbt_build

    work = template["work"] / "accepted"
    work.mkdir()
    db = work / "w.duckdb"
    shutil.copyfile(template["db"], db)
    dirs = [damaged_run(work / "runs", template["sha"], case) for case in sorted(CASES)]
    args = [a for d in dirs for a in ("--runs", str(d))]
    res = ingest("--db", str(db), *args, "--accept-dq")
    assert res.exit_code == 0, res.output
    build = run_dbt_build(db, work)
    return {"db": db, "runs": work / "runs", "output": res.output, "build": build}


def test_accept_dq_records_every_violation(accepted: dict) -> None:
    con = duckdb.connect(str(accepted["db"]), read_only=True)
    try:
        issues = con.execute("SELECT run_id, table_name, file, \"row\", column_name, rule, severity, load_id "
                             "FROM raw.dq_issues").fetchall()
        loaded = con.execute("SELECT run_id FROM raw.runs WHERE run_id LIKE 'dq-%'").fetchall()
    finally:
        con.close()
    assert len(loaded) == len(CASES)
    assert "data-quality violation(s) accepted, listed in raw.dq_issues" in accepted["output"]
    for case, (_, table, row, column, rule) in CASES.items():
        run_id = f"dq-{case}"
        file = str(accepted["runs"] / run_id / f"{table}-00000.parquet")
        assert (run_id, table, file, str(row), column, rule, "error") in {i[:7] for i in issues}, case
    assert {i[7] for i in issues} == {2}  # the load that accepted them


def test_dq_marts_show_them_and_dbt_build_fails(accepted: dict) -> None:
    build = accepted["build"]
    assert build.returncode != 0
    # (unknown vocabulary values also fail the marts' accepted_values tests)
    assert "dq_issues_no_error_rows" in set(re.findall(r"Failure in test (\w+)", build.stdout)), build.stdout[-3000:]
    con = duckdb.connect(str(accepted["db"]), read_only=True)
    try:
        rules = con.execute("SELECT DISTINCT run_id, rule FROM main.dq_issues "
                            "WHERE detected_by = 'ingest' AND severity = 'error'").fetchall()
        dbt_checks = con.execute("SELECT DISTINCT run_id, rule FROM main.dq_issues WHERE detected_by = 'dbt'").fetchall()
    finally:
        con.close()
    for case, (*_, rule) in CASES.items():
        assert (f"dq-{case}", rule) in rules, case
    # what dq_trajectory_accounting checks independently of ingest is there too
    assert ("dq-budget_disagrees_with_costs", "budget_used_vs_call_costs") in dbt_checks
    assert ("dq-two_final_attempts", "final_attempt_count") in dbt_checks


def test_replacing_an_accepted_run_replaces_its_issues(accepted: dict, tmp_path: Path, template: dict) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copyfile(accepted["db"], db)
    fixed = write_run(tmp_path / "runs", run_rows("dq-negative_cost", template["sha"]))
    res = ingest("--db", str(db), "--runs", str(fixed))
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        n = con.execute("SELECT count(*) FROM raw.dq_issues WHERE run_id = 'dq-negative_cost'").fetchall()
        others = con.execute("SELECT count(*) FROM raw.dq_issues").fetchall()
    finally:
        con.close()
    assert n == [(0,)] and others[0][0] > 0


def test_partial_runs_need_no_final_attempt(template: dict, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copyfile(template["db"], db)
    rows = run_rows("partial-dq", template["sha"])
    rows["trajectories"][1]["is_final"] = False
    d = write_run(tmp_path / "runs", rows, success=False)
    res = ingest("--db", str(db), "--runs", str(d), "--partial")
    assert res.exit_code == 0, res.output


def test_allowed_values_come_from_the_schemas() -> None:
    assert qschema.ALLOWED_VALUES["tool_calls"]["status"] == tschema.TOOL_CALL_STATUSES
