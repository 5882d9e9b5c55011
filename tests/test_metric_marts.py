"""The shared metric marts on the session's AgentHop + SciExplore warehouse (tests/conftest.py::built_warehouse):
AgentHop's `correct` agrees with the accuracy it always had, coverage counts every run, pass@1 is the mean
accuracy of a run group's replicates, and all_tokens adds the cache reads to total_tokens."""

from __future__ import annotations

import duckdb
import pytest
from conftest import BuiltWarehouse


@pytest.fixture(scope="module")
def con(built_warehouse: BuiltWarehouse):
    c = duckdb.connect(str(built_warehouse.db), read_only=True)
    yield c
    c.close()


def test_agenthop_metric_is_correct_binary_higher_and_primary(con) -> None:
    assert con.execute("SELECT metric, kind, direction, is_primary, label, source, min_value, max_value "
                       "FROM metric_defs WHERE benchmark = 'agenthop'").fetchall() == [
        ("correct", "binary", "higher_is_better", True, "correct", "agenthop", 0.0, 1.0)]
    assert con.execute("SELECT count(*) FROM metric_defs WHERE is_primary AND benchmark = 'sciexplore' "
                       "AND metric = 'normalized-match.task_score'").fetchall() == [(1,)]
    mismatched = con.execute("""
        SELECT s.run_id FROM run_summary s
        JOIN (SELECT run_id, avg(value) AS mean, count(*) AS n FROM item_metric_values
              WHERE metric = 'correct' GROUP BY run_id) v USING (run_id)
        WHERE s.benchmark = 'agenthop' AND (abs(v.mean - s.accuracy) > 1e-12 OR v.n <> s.n)""").fetchall()
    assert mismatched == []
    assert con.execute("SELECT count(DISTINCT run_id) FROM item_metric_values WHERE metric = 'correct'").fetchall() \
        == con.execute("SELECT count(*) FROM run_summary WHERE benchmark = 'agenthop'").fetchall()


def test_harness_runs_keep_their_conditions(con) -> None:
    assert con.execute("SELECT DISTINCT condition FROM item_metric_values WHERE benchmark = 'agenthop' ORDER BY 1"
                       ).fetchall() == con.execute("SELECT DISTINCT condition FROM raw.runs "
                                                   "WHERE benchmark = 'agenthop' ORDER BY 1").fetchall()
    assert con.execute("SELECT count(*) FROM raw.runs WHERE condition = ''").fetchall() == [(0,)]
    # SciExplore's responses-file runs: their paradigm is their condition
    assert {c for (c,) in con.execute("SELECT DISTINCT condition FROM item_metric_values "
                                       "WHERE benchmark = 'sciexplore'").fetchall()} <= {"foundation", "search",
                                                                                         "deep_research"}


def test_coverage_of_every_run(con) -> None:
    rows = con.execute("""
        SELECT c.benchmark, count(*), bool_and(c.n_scope = b.n_items), bool_and(c.n_final = c.n_scope)
        FROM run_coverage c JOIN raw.benchmarks b USING (benchmark) GROUP BY 1 ORDER BY 1""").fetchall()
    n_agenthop = con.execute("SELECT count(*) FROM raw.runs WHERE benchmark = 'agenthop'").fetchall()[0][0]
    n_sciexplore = con.execute("SELECT count(*) FROM raw.sciexplore_runs").fetchall()[0][0]
    assert rows == [("agenthop", n_agenthop, True, True), ("sciexplore", n_sciexplore, True, True)]
    assert con.execute("SELECT count(*) FROM run_coverage c JOIN run_summary s USING (run_id) "
                       "WHERE c.n_final <> s.n OR c.n_error <> s.n_error").fetchall() == [(0,)]


def test_pass_at_1_is_the_mean_accuracy_of_the_replicates(con) -> None:
    rows = con.execute("""
        SELECT p.model, p.pass_at_k, avg(s.accuracy), p.n_items
        FROM pass_k p JOIN run_summary s ON s.model = p.model AND s.condition = p.condition AND s.benchmark = p.benchmark
        WHERE p.metric = 'correct' AND p.k = 1 GROUP BY ALL""").fetchall()
    assert rows and all(abs(at - acc) < 1e-9 and n == 48 for _, at, acc, n in rows)
    # verifier has two replicates: k = 2 exists for it alone
    assert con.execute("SELECT DISTINCT model FROM pass_k WHERE metric = 'correct' AND k = 2").fetchall() == \
        [("verifier",)]


def test_all_tokens_add_cache_reads(con) -> None:
    assert con.execute("""
        SELECT count(*) FROM fct_trajectory
        WHERE all_tokens <> prompt_tokens + cache_read_tokens + cache_creation_tokens + completion_tokens
           OR all_tokens - total_tokens <> cache_read_tokens""").fetchall() == [(0,)]
    assert con.execute("""
        SELECT count(*) FROM run_summary s
        JOIN (SELECT run_id, sum(all_tokens) AS a FROM fct_trajectory GROUP BY run_id) f USING (run_id)
        WHERE s.all_tokens <> f.a""").fetchall() == [(0,)]
