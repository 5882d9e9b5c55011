"""The scanner marts end to end: an older warehouse without scanner tables builds them empty; after a scan of
the shipped scanners and a labels file they hold what the fixture (scanner_fixtures.py) gives by hand.
The formulas themselves are unit-tested in models_sql/marts/core/_scanners__unit_tests.yml."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import scanner_fixtures as fx
from click.testing import CliRunner
from conftest import run_dbt_build

from agenthop.ingest.cli import main as ingest_main
from agenthop.ingest.scanners.cli import main as scan_main

MARTS = ("scanner_agreement", "scanner_prevalence", "behaviour_outcomes", "behaviour_paired")


def _build(db: Path, work: Path) -> None:
    proc = run_dbt_build(db, work, "--select", *(f"+{m}" for m in MARTS), "--exclude-resource-type", "unit_test")
    assert proc.returncode == 0, proc.stdout[-3000:]


def _rows(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_scanner_marts_empty_then_by_hand(tmp_path: Path) -> None:
    db = fx.build(tmp_path / "w.duckdb", with_scanner_tables=False)
    _build(db, tmp_path)
    for mart in MARTS:
        assert _rows(db, f"SELECT count(*) FROM main.{mart}") == [(0,)]
    assert CliRunner().invoke(scan_main, ["--scanners", "shipped:common", "--db", str(db)]).exit_code == 0
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(x) + "\n" for x in [
        {"run_id": "r1", "sample_id": "s1", "scanner": "give_up_or_hedge", "value": True, "labeler": "ann"},
        {"run_id": "r1", "sample_id": "s2", "scanner": "give_up_or_hedge", "value": False, "labeler": "ann"},
        {"model": "m2", "epoch": 1, "sample_id": "s1", "scanner": "give_up_or_hedge", "value": True, "labeler": "ann"},
    ]))
    assert CliRunner().invoke(ingest_main, ["--db", str(db), "--labels", str(labels)]).exit_code == 0
    _build(db, tmp_path)
    # tp = r1/s1, tn = r1/s2, fn = r2/s1: p_o = 2/3, p_e = 1/3 x 2/3 + 2/3 x 1/3 = 4/9, kappa = (2/9) / (5/9)
    assert _rows(db, "SELECT n, tp, fp, fn, tn, round(raw_agreement, 6), round(kappa, 6), sensitivity, specificity "
                     "FROM main.scanner_agreement") == [(3, 1, 0, 1, 1, 0.666667, 0.4, 0.5, 1.0)]
    # r1's final attempts: s1 hedges, s2 and s3 (attempt 1) do not: 1/3; Se 0.5, Sp 1: (1/3 + 0) / 0.5 = 2/3
    assert _rows(db, "SELECT run_id, n, n_found, round(prevalence, 6), round(corrected_prevalence, 6) "
                     "FROM main.scanner_prevalence WHERE scanner = 'give_up_or_hedge' ORDER BY run_id") == [
        ("r1", 3, 1, 0.333333, 0.666667), ("r2", 2, 0, 0.0, 0.0)]
    # limit_reached in r1: s3 ended at max_turns (wrong) against s1 (right) and s2 (wrong); Fisher for
    # margins 1 flagged / 1 right out of 3: P(observed x = 0) = 2/3, P(x = 1) = 1/3, so p = 1
    assert _rows(db, "SELECT n_with, n_without, mean_with, mean_without, difference, round(fisher_p, 6) "
                     "FROM main.behaviour_outcomes WHERE run_id = 'r1' AND scanner = 'limit_reached' "
                     "AND metric = 'correct'") == [(1, 2, 0.0, 0.5, -0.5, 1.0)]
    # give_up_or_hedge in r1: the hedging item is the one right answer: x = 1 has P = 1/3, the only table no
    # more probable
    assert _rows(db, "SELECT difference, round(fisher_p, 6) FROM main.behaviour_outcomes WHERE run_id = 'r1' "
                     "AND scanner = 'give_up_or_hedge'") == [(1.0, 0.333333)]
    # r1 against r2 on their shared items s1 and s2: limit_reached flags s2 in r2 only
    assert _rows(db, "SELECT run_a, run_b, n_shared, a_only, b_only, difference, mcnemar_p FROM main.behaviour_paired "
                     "WHERE scanner = 'limit_reached'") == [("r1", "r2", 2, 0, 1, -0.5, 1.0)]

