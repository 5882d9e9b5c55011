"""The metric catalogue, tokens, coverage and pass@k on the project's own Inspect logs.

The toolbox logs (inspect_fixtures.py): two models, two epochs, a dict score ``grade`` (utility,
security) and a number ``exact``, cache reads and writes on alpha's answer to s1. Expected values worked
out by hand from the scripts: utility is 1 on s1-s3 and 0 on s4 (the token limit), except beta's s3 in
epoch 2 (it answers 3); security is 1 on s2 only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

import inspect_fixtures as fx
from conftest import run_dbt_build
from inspect_fixtures import inspect_logs, toolbox_warehouse  # noqa: F401  (the session's logs and warehouse)

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CATALOGUE = ("--select", "+metric_defs")


def _run(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, AGENTHOP_DB=str(db), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    return subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True, env=env, cwd=REPO)


def _ingest(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run("agenthop-ingest", "--db", str(db), *args, db=db)


def _build(db: Path, work: Path, select: tuple[str, ...] = CATALOGUE) -> None:
    proc = run_dbt_build(db, work, *select)
    assert proc.returncode == 0, proc.stdout[-3000:]


def _rows(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def built(toolbox_warehouse: Path) -> Path:  # noqa: F811
    """The toolbox .eval logs and the AgentDojo-shaped log, ingested and built (the session's warehouse;
    the tests below copy it before they change it)."""
    return toolbox_warehouse


def test_all_tokens_equal_the_logs_total_tokens_per_sample_and_per_model(inspect_logs, built):  # noqa: F811
    from inspect_ai.log import read_eval_log

    db = built
    per_model: dict[str, int] = {}
    for path in inspect_logs.eval_logs:
        log = read_eval_log(str(path))
        model = log.eval.model
        for sample in log.samples or []:
            run_id = f"inspect-{log.eval.eval_id}-e{sample.epoch}"
            expected = sum(u.total_tokens for u in sample.model_usage.values())
            got = _rows(db, "SELECT total_prompt_tokens + cache_read_tokens + cache_creation_tokens "
                            "+ total_completion_tokens FROM raw.trajectories WHERE run_id = ? AND sample_id = ?",
                        [run_id, str(sample.id)])
            assert got == [(expected,)], (model, sample.id, sample.epoch)
        per_model[model] = sum(u.total_tokens for u in log.stats.model_usage.values())
    marts = dict(_rows(db, "SELECT model, sum(all_tokens) FROM run_summary WHERE benchmark = 'inspect:toolbox' "
                           "GROUP BY model"))
    assert marts == per_model
    # alpha's cached answer to s1 (read 120, write 30, both epochs): total_tokens leaves the reads out
    assert dict(_rows(db, "SELECT model, sum(all_tokens) - sum(total_tokens) FROM run_summary "
                          "WHERE benchmark = 'inspect:toolbox' GROUP BY model")) == {
        "mockllm/alpha": 2 * 120, "mockllm/beta": 0}


def test_catalogue_names_kinds_and_primary(built):
    rows = _rows(built, "SELECT metric, kind, direction, is_primary, label, source, min_value, max_value "
                        "FROM metric_defs WHERE benchmark = 'inspect:toolbox' ORDER BY metric")
    assert rows == [
        ("exact.value", "binary", "higher_is_better", False, "exact", "inspect", 0.0, 1.0),
        ("grade.security", "binary", "higher_is_better", False, "security", "inspect", 0.0, 1.0),
        ("grade.utility", "binary", "higher_is_better", True, "utility", "inspect", 0.0, 1.0),
    ]
    # Inspect runs carry no AgentHop condition; epochs are 1-based and pooled in one group per model
    assert _rows(built, "SELECT DISTINCT condition FROM run_summary") == [("",)]
    groups = _rows(built, "SELECT model, count(DISTINCT run_group), list(DISTINCT epoch ORDER BY epoch) "
                          "FROM item_metric_values WHERE benchmark = 'inspect:toolbox' GROUP BY model ORDER BY model")
    assert groups == [("mockllm/alpha", 1, [1, 2]), ("mockllm/beta", 1, [1, 2])]


def test_pass_k_equals_a_hand_computation(built):
    rows = _rows(built, "SELECT model, k, n_items, pass_at_k, pass_hat_k, pass_at_k_lo, pass_at_k_hi FROM pass_k "
                        "WHERE metric = 'grade.utility' ORDER BY model, k")
    # per item (c of n = 2): alpha s1-s3 2/2, s4 0/2; beta s1, s2 2/2, s3 1/2, s4 0/2
    # beta pass@1 = (1 + 1 + 1/2 + 0) / 4; pass@2 = (1 + 1 + 1 + 0) / 4; pass^2 = (1 + 1 + 0 + 0) / 4
    assert [r[:5] for r in rows] == [
        ("mockllm/alpha", 1, 4, 0.75, 0.75),
        ("mockllm/alpha", 2, 4, 0.75, 0.75),
        ("mockllm/beta", 1, 4, 0.625, 0.625),
        ("mockllm/beta", 2, 4, 0.75, 0.5),
    ]
    assert all(0 <= lo <= hi <= 1 for *_, lo, hi in rows)


def test_run_coverage_of_complete_logs(built):
    rows = _rows(built, "SELECT benchmark, n_scope, n_final, n_scored, n_error, n_missing FROM run_coverage "
                        "ORDER BY benchmark, run_id")
    assert rows == [("inspect:inspect_evals/agentdojo", 2, 2, 2, 0, 0)] + [("inspect:toolbox", 4, 4, 4, 0, 0)] * 4


def test_metric_direction_alone_on_an_existing_warehouse_and_kept_through_a_reimport(inspect_logs, built,  # noqa: F811
                                                                                        tmp_path):
    db = tmp_path / "w.duckdb"
    shutil.copy(built, db)
    proc = _ingest(db, "--metric-direction", "security=lower")
    assert proc.returncode == 0, proc.stderr
    assert "grade.security: lower_is_better" in proc.stdout
    assert "injection_task_scorer.security: lower_is_better" in proc.stdout
    _build(db, tmp_path, CATALOGUE)
    assert _rows(db, "SELECT benchmark, metric, direction, source FROM metric_defs WHERE direction <> "
                     "'higher_is_better' ORDER BY 1") == [
        ("inspect:inspect_evals/agentdojo", "injection_task_scorer.security", "lower_is_better", "user"),
        ("inspect:toolbox", "grade.security", "lower_is_better", "user"),
    ]
    # the toolbox logs again with another primary score: their runs are replaced, the direction stays
    again = _ingest(db, "--inspect-log", str(inspect_logs.eval_logs[0].parent), "--score", "exact")
    assert again.returncode == 0 and "4 replaced" in again.stdout, again.stderr
    _build(db, tmp_path, CATALOGUE)
    assert _rows(db, "SELECT metric, direction, is_primary FROM metric_defs WHERE benchmark = 'inspect:toolbox' "
                     "ORDER BY metric") == [
        ("exact.value", "higher_is_better", True),
        ("grade.security", "lower_is_better", False),
        ("grade.utility", "higher_is_better", False),
    ]
    # the user's primary metric wins over the import's
    assert _ingest(db, "--primary-metric", "utility").returncode == 0
    _build(db, tmp_path, CATALOGUE)
    assert _rows(db, "SELECT benchmark, metric FROM metric_defs WHERE is_primary ORDER BY 1") == [
        ("inspect:inspect_evals/agentdojo", "injection_task_scorer.utility"), ("inspect:toolbox", "grade.utility")]


@pytest.mark.parametrize(("flag", "name", "says"), [
    ("--metric-direction", "grade=lower", "is ambiguous: it matches grade.security, grade.utility"),
    ("--primary-metric", "nope", "no benchmark has this metric (inspect:inspect_evals/agentdojo: "
                                 "injection_task_scorer.security;"),
    ("--metric-direction", "security=sideways", "the direction must be lower, higher or none"),
])
def test_bad_metric_names_are_one_line_errors_and_change_nothing(built, tmp_path, flag, name, says):
    db = tmp_path / "w.duckdb"
    shutil.copy(built, db)
    before = _rows(db, "SELECT * FROM raw.metric_defs ORDER BY ALL")
    proc = _ingest(db, flag, name)
    assert proc.returncode == 2
    assert says in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert _rows(db, "SELECT * FROM raw.metric_defs ORDER BY ALL") == before


def test_metric_settings_need_a_warehouse(tmp_path):
    proc = _ingest(tmp_path / "none.duckdb", "--primary-metric", "utility")
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    assert not (tmp_path / "none.duckdb").exists()


def test_the_agentdojo_shapes_catalogue(built):
    assert _rows(built, "SELECT metric, label, is_primary FROM metric_defs "
                        "WHERE benchmark = 'inspect:inspect_evals/agentdojo' ORDER BY metric") == [
        ("injection_task_scorer.security", "security", False), ("injection_task_scorer.utility", "utility", True)]
    assert fx.AGENTDOJO_MODEL in {m for (m,) in _rows(built, "SELECT model FROM run_coverage")}


def test_a_warehouse_from_before_the_catalogue_gains_it_with_the_setting(built, tmp_path):
    db = tmp_path / "w.duckdb"
    shutil.copy(built, db)
    con = duckdb.connect(str(db))
    con.execute("DROP TABLE raw.metric_defs")
    con.close()
    proc = _ingest(db, "--metric-direction", "grade.security=lower")
    assert proc.returncode == 0, proc.stderr
    # the row is made from the loaded scores, by the rule of an imported log's rows
    assert _rows(db, "SELECT * FROM raw.metric_defs") == [
        ("inspect:toolbox", "grade.security", "binary", "lower_is_better", False, "security", "user",
         "Inspect scorer grade, key security of its value", 0.0, 1.0)]
