"""The SciExplore marts end to end: ingest the hand-built release, responses and a second judge, dbt build.

Expected values, worked by hand from sx_fixtures.GOOD under normalized-match: T1 a1 correct -> F_em 1;
T2 b1 abstains -> 0; T3 c1: CITE_1 1 of 2 predictions correct with 2 references -> F 0.5, CITE_2 no
prediction -> 0, F_cite 0.25; T4 d1: Kalo fully right, Mira's key right and gap wrong -> cells 3/4,
rows 1/2, keys 2/2, format ok; overall 0.2 * 1 + 0.3 * 0.25 + 0.3 * 0.75 = 0.5.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from conftest import run_dbt_build
from sx_fixtures import GOOD, ingest, release, write_jsonl  # noqa: F401 (fixtures)

SELECT = ("--select", "path:models_sql/staging/sciexplore", "path:models_sql/intermediate/sciexplore",
          "path:models_sql/marts/sciexplore")


@pytest.fixture
def built(tmp_path: Path, release: Path, ingest) -> Path:
    db = tmp_path / "w.duckdb"
    resp = write_jsonl(tmp_path / "r.jsonl", GOOD + [r | {"replicate": 1, "answer": "nothing"} for r in GOOD[:1]])
    judg = write_jsonl(tmp_path / "j.jsonl", [
        {"model": "m", "paradigm": "search", "replicate": 0, "task_id": "a1", "unit": "answer",
         "verdict": "incorrect", "judge": "human", "judge_version": "1", "rationale": "strict"}])
    assert ingest("--db", db, "--benchmark", release, "--responses", resp).exit_code == 0
    assert ingest("--db", db, "--judgments", judg).exit_code == 0
    proc = run_dbt_build(db, tmp_path, *SELECT)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return db


def test_marts_from_ingested_data(built: Path) -> None:
    with duckdb.connect(str(built), read_only=True) as con:
        rows = con.execute(
            "SELECT replicate, judge, t1_fem, t2_fem, t3_fcite, t4_item_recall, t4_row_recall, pk_recall, format_acc,"
            " overall, n_tasks FROM main.sciexplore_summary ORDER BY replicate, judge").fetchall()
        assert rows == [
            (0, "human", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 4),
            (0, "normalized-match", 1.0, 0.0, 0.25, 0.75, 0.5, 1.0, 1.0, 0.5, 4),
            # replicate 1 answered only a1, wrongly: the other tasks count as not attempted, zeros
            (1, "normalized-match", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 4),
        ]
        outcome = con.execute(
            "SELECT task_id, status, has_response, verdict, n_search_calls FROM main.sciexplore_task_outcome "
            "JOIN main.sciexplore_summary USING (run_id, judge) WHERE replicate = 1 ORDER BY task_id").fetchall()
        assert outcome == [("a1", "answered", True, "incorrect", 1), ("b1", "not_attempted", False, "not_attempted", 0),
                           ("c1", "not_attempted", False, None, 0), ("d1", "not_attempted", False, None, 0)]
        assert con.execute("SELECT unit, n_units, n_agree, kappa FROM main.sciexplore_judge_agreement").fetchall() == \
            [("answer", 1, 0, 0.0)]
        assert con.execute("SELECT task_id, judge_a, verdict_a, judge_b, verdict_b "
                           "FROM main.sciexplore_judge_disagreements").fetchall() == \
            [("a1", "human", "incorrect", "normalized-match", "correct")]
        variance = dict(con.execute("SELECT metric, variance FROM main.sciexplore_rerun_variance "
                                    "WHERE judge = 'normalized-match'").fetchall())
        assert variance["t1"] == 2500.0  # 100 and 0 percent: ((100 - 50)^2 + (0 - 50)^2) / 2
        assert variance["overall"] == 625.0  # 50 and 0 percent
        effort = con.execute("SELECT type, search_calls, mean_search_calls FROM main.sciexplore_search_effort "
                             "JOIN main.sciexplore_summary USING (run_id, judge) "
                             "WHERE replicate = 0 AND judge = 'normalized-match' ORDER BY type").fetchall()
        assert effort == [("T1", 1, 1.0), ("T2", 0, 0.0), ("T3", 0, 0.0), ("T4", 0, 0.0)]
        assert con.execute("SELECT hops, n, correct, f_em FROM main.sciexplore_hop_accuracy "
                           "JOIN main.sciexplore_summary USING (run_id, judge) "
                           "WHERE replicate = 0 AND judge = 'normalized-match'").fetchall() == [(2, 1, 1, 1.0)]


def test_raw_column_macro_matches_the_schemas() -> None:
    """dbt's stand-in for missing raw tables has exactly the columns and types ingest creates."""
    import re

    from conftest import REPO

    from agenthop.ingest import ddl
    from agenthop.schemas import sciexplore as sx

    text = (REPO / "dbt_support" / "macros" / "sciexplore_sources.sql").read_text()
    found = {m.group(1): re.findall(r"\('([^']+)', '([^']+)'\)", m.group(2))
             for m in re.finditer(r"'(\w+)': \[(.*?)\],", text)}
    expected = {name: [(f.name, ddl.duckdb_type(f.type)) for f in schema]
                for name, schema in {**sx.TABLES, "ingest_log": ddl.INGEST_LOG}.items()}
    assert found == expected


def test_dbt_build_works_on_a_warehouse_without_sciexplore_tables(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    with duckdb.connect(str(db)) as con:  # only the tables of the layout before SciExplore
        con.execute("CREATE SCHEMA raw")
        con.execute("CREATE TABLE raw.runs (run_id VARCHAR)")
    proc = run_dbt_build(db, tmp_path, *SELECT)
    assert proc.returncode == 0, proc.stdout[-3000:]
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM main.sciexplore_summary").fetchall() == [(0,)]
        assert con.execute("SELECT n_runs, last_load_id FROM main.sciexplore_build_info").fetchall() == [(0, 0)]


def test_a_partial_responses_file_has_its_coverage_and_per_task_metrics(tmp_path: Path, release: Path, ingest) -> None:
    """3 of the release's 4 tasks answered (d1 missing), a second judge on a1. By hand, normalized-match:
    a1 correct (1), b1 abstains (0), c1 F_cite (0.5 + 0) / 2 = 0.25; the human judge calls a1 incorrect."""
    db = tmp_path / "w.duckdb"
    resp = write_jsonl(tmp_path / "r.jsonl", GOOD[:3])
    judg = write_jsonl(tmp_path / "j.jsonl", [
        {"model": "m", "paradigm": "search", "replicate": 0, "task_id": "a1", "unit": "answer",
         "verdict": "incorrect", "judge": "human", "judge_version": "1", "rationale": "strict"}])
    assert ingest("--db", db, "--benchmark", release, "--responses", resp, "--judgments", judg).exit_code == 0
    proc = run_dbt_build(db, tmp_path, "--select", "+run_coverage", "+pass_k", "+item_metric_values", "+metric_defs")
    assert proc.returncode == 0, proc.stdout[-3000:]
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT benchmark, model, n_scope, n_final, n_scored, n_error, n_missing "
                           "FROM main.run_coverage").fetchall() == [("sciexplore", "m", 4, 3, 3, 0, 1)]
        values = con.execute("SELECT sample_id, metric, value, condition, epoch FROM main.item_metric_values "
                             "ORDER BY metric, sample_id").fetchall()
        # the human judge covers the run: a unit it gave no verdict is not correct, as in every SciExplore mart
        assert values == [
            ("a1", "human.answer_correct", 0.0, "search", 1),
            ("b1", "human.answer_correct", 0.0, "search", 1),
            ("c1", "human.t3_f", 0.0, "search", 1),
            ("a1", "human.task_score", 0.0, "search", 1),
            ("b1", "human.task_score", 0.0, "search", 1),
            ("c1", "human.task_score", 0.0, "search", 1),
            ("a1", "normalized-match.answer_correct", 1.0, "search", 1),
            ("b1", "normalized-match.answer_correct", 0.0, "search", 1),
            ("c1", "normalized-match.t3_f", 0.25, "search", 1),
            ("a1", "normalized-match.task_score", 1.0, "search", 1),
            ("b1", "normalized-match.task_score", 0.0, "search", 1),
            ("c1", "normalized-match.task_score", 0.25, "search", 1),
        ]
        defs = con.execute("SELECT metric, kind, direction, is_primary, source FROM main.metric_defs "
                           "ORDER BY metric").fetchall()
        assert defs == [
            ("human.answer_correct", "binary", "higher_is_better", False, "sciexplore"),
            ("human.t3_f", "continuous", "higher_is_better", False, "sciexplore"),
            ("human.task_score", "continuous", "higher_is_better", False, "sciexplore"),
            ("normalized-match.answer_correct", "binary", "higher_is_better", False, "sciexplore"),
            ("normalized-match.t3_f", "continuous", "higher_is_better", False, "sciexplore"),
            ("normalized-match.task_score", "continuous", "higher_is_better", True, "sciexplore"),
        ]
        # one repeat: pass@1 of the binary metrics over the T1/T2 items answered
        assert con.execute("SELECT metric, k, n_items, pass_at_k FROM main.pass_k ORDER BY metric").fetchall() == [
            ("human.answer_correct", 1, 2, 0.0), ("normalized-match.answer_correct", 1, 2, 0.5)]
