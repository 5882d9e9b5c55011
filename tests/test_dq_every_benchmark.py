"""The data-quality marts cover every benchmark: a SciExplore run whose trajectory spent more budget than
its calls cost (data that reached the warehouse around ingest's rules) is listed in
``dq_trajectory_accounting`` and ``dq_issues`` (they once looked at AgentHop's runs only). AgentHop's own
rules (an option index, the submit_answer tool) do not apply to it."""

from __future__ import annotations

from pathlib import Path

import duckdb
from click.testing import CliRunner
from conftest import run_dbt_build

from agenthop.harness.benchmarks.sciexplore.generator import write_release
from agenthop.harness.cli import main as harness_main
from agenthop.ingest.cli import main as ingest_main


def test_a_sciexplore_runs_accounting_problem_reaches_the_dq_marts(tmp_path: Path) -> None:
    rel, runs, db = tmp_path / "release", tmp_path / "runs", tmp_path / "w.duckdb"
    write_release(rel, 0)
    r = CliRunner().invoke(harness_main, ["run", "--model", "skim-search", "--condition", "search", "--limit", "2",
                                          "--data", str(rel), "--out", str(runs), "--no-progress", "--processes", "1"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--benchmark", str(rel), "--runs", str(runs)],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    with duckdb.connect(str(db)) as con:
        run_id, sample_id, used = con.execute(
            "SELECT run_id, sample_id, budget_used FROM raw.trajectories WHERE is_final ORDER BY sample_id LIMIT 1"
        ).fetchone()
        (cost,) = con.execute("SELECT coalesce(sum(cost), 0) FROM raw.tool_calls WHERE run_id = ? AND sample_id = ? "
                              "AND attempt = 0", [run_id, sample_id]).fetchone()
        assert used == cost
        con.execute("UPDATE raw.trajectories SET budget_used = budget_used + 5 WHERE run_id = ? AND sample_id = ?",
                    [run_id, sample_id])
    proc = run_dbt_build(db, tmp_path, "--select", "+dq_issues", "--exclude", "tag:dq_error")
    assert proc.returncode == 0, proc.stdout[-3000:]
    with duckdb.connect(str(db), read_only=True) as con:
        acc = con.execute("SELECT run_id, sample_id, check_name, column_name, expected_value, observed_value, severity "
                          "FROM main.dq_trajectory_accounting").fetchall()
        issues = con.execute("SELECT detected_by, run_id, column_name, rule, severity, value FROM main.dq_issues").fetchall()
    assert acc == [(run_id, sample_id, "budget_used_vs_call_costs", "budget_used", cost, cost + 5, "error")]
    assert issues == [("dbt", run_id, "budget_used", "budget_used_vs_call_costs", "error", str(cost + 5))]
