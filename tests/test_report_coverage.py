"""Honest denominators (reports/core/coverage.py) on hand-built values, expected values worked out by hand:
the coverage line, the intention-to-treat mean, the items a paired test leaves out and why."""

from __future__ import annotations

import pytest

from agenthop.reports.core import coverage
from agenthop.reports.core.coverage import Coverage, Exclusion, RunCoverage


def test_coverage_text_states_n_of_the_scope_and_why() -> None:
    assert Coverage(n=3, n_scope=103, n_missing=100, noun="tasks").text == "answered 3 of 103 tasks (100 missing)"
    assert Coverage(n=97, n_scope=100, n_missing=1, n_error=2).text == \
        "answered 97 of 100 items (1 missing, 2 ended in an error)"
    full = Coverage(n=4, n_scope=4, noun="samples")
    assert (full.partial, full.text, full.n_of) == (False, "answered all 4 samples", "4 of 4")
    gap = Coverage(n=4, n_scope=4, noun="samples", gaps=1, runs_short=1, n_runs=2, runs_noun="epochs")
    assert gap.partial and gap.text == "answered all 4 samples (1 missing in 1 of 2 epochs)"


def test_a_group_counts_items_with_a_value_in_any_run_of_the_largest_scope() -> None:
    # r1 has a, b; r2 has a only; the release has 5 items; r1 ended b in an error
    values = {("r1", "a"): 1.0, ("r1", "b"): 0.0, ("r2", "a"): 1.0, ("r3", "z"): 1.0}
    rows = {"r1": RunCoverage("r1", 5, 2, 2, 1, 3), "r2": RunCoverage("r2", 5, 1, 1, 0, 4)}
    c = coverage.of_group(values, ["r1", "r2"], rows, "tasks")
    assert (c.n, c.n_scope, c.n_missing, c.n_error, c.gaps, c.partial) == (2, 5, 3, 1, 0, True)
    assert c.text == "answered 2 of 5 tasks (3 missing, 1 ended in an error)"
    # every item has a value somewhere, but r2 lacks b: one gap in one of two runs
    c = coverage.of_group(values, ["r1", "r2"], {}, "items")
    assert (c.n, c.n_scope, c.gaps, c.runs_short) == (2, 2, 1, 1)
    assert c.text == "answered all 2 items (1 missing in 1 of 2 runs)"


def test_intention_to_treat_counts_missing_items_as_the_worst_value() -> None:
    # scope 4; r1 scored a = 1, b = 0.5; r2 scored a = 1, b = 1, c = 0, d = 1
    values = {("r1", "a"): 1.0, ("r1", "b"): 0.5, ("r2", "a"): 1.0, ("r2", "b"): 1.0, ("r2", "c"): 0.0,
              ("r2", "d"): 1.0}
    # higher is better, worst 0: r1 (1 + 0.5 + 0 + 0) / 4 = 0.375, r2 3 / 4 = 0.75; mean 0.5625
    assert coverage.itt_mean(values, ["r1", "r2"], 4, 0.0) == pytest.approx(0.5625)
    # lower is better, worst 1: r1 (1.5 + 2) / 4 = 0.875, r2 0.75: mean 0.8125
    assert coverage.itt_mean(values, ["r1", "r2"], 4, 1.0) == pytest.approx(0.8125)
    assert coverage.itt_mean(values, ["r1"], 4, None) is None
    assert coverage.worst_value("higher_is_better", 0.0, 1.0) == 0.0
    assert coverage.worst_value("lower_is_better", 0.0, 1.0) == 1.0
    assert coverage.worst_value("none", 0.0, 1.0) is None
    assert coverage.worst_value("higher_is_better", None, 1.0) is None


def test_paired_exclusions_say_which_side_lacks_the_item_and_why() -> None:
    a = {"s1": 1, "s2": 0, "s4": 1}
    b = {"s1": 1, "s3": 1}
    got = coverage.exclusions(a, b, scope=["s1", "s2", "s3", "s4", "s5"], errors_a=["s3"], errors_b=["s4"])
    assert got == [Exclusion("s2", "missing on B"), Exclusion("s3", "error on A"), Exclusion("s4", "error on B"),
                   Exclusion("s5", "missing on both")]


def test_one_runs_coverage_against_its_row() -> None:
    row = RunCoverage("r", n_scope=103, n_final=3, n_scored=3, n_error=0, n_missing=100)
    assert coverage.of_run(3, row, "tasks").text == "answered 3 of 103 tasks (100 missing)"
    assert coverage.of_run(4, None).text == "answered all 4 items"
