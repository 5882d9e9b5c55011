"""Metric name resolution (ingest/metric_names.py): full names, bare unique parts, errors listing candidates."""

from __future__ import annotations

import pytest

from agenthop.ingest.metric_names import MetricNameError, metric_name, resolve_metric

CANDIDATES = ["injection_task_scorer.security", "injection_task_scorer.utility", "exact.value", "correct"]


@pytest.mark.parametrize(("name", "metric"), [
    ("injection_task_scorer.security", "injection_task_scorer.security"),
    ("security", "injection_task_scorer.security"),
    ("utility", "injection_task_scorer.utility"),
    ("exact", "exact.value"),
    ("value", "exact.value"),
    ("correct", "correct"),
])
def test_names_resolve(name: str, metric: str) -> None:
    assert resolve_metric(CANDIDATES, name) == metric


def test_an_ambiguous_name_lists_what_it_matches() -> None:
    with pytest.raises(MetricNameError) as err:
        resolve_metric(CANDIDATES, "injection_task_scorer")
    assert str(err.value) == ("metric 'injection_task_scorer' is ambiguous: it matches "
                              "injection_task_scorer.security, injection_task_scorer.utility; give the full name")


def test_an_unknown_name_lists_the_metrics() -> None:
    with pytest.raises(MetricNameError) as err:
        resolve_metric(CANDIDATES, "safety")
    assert str(err.value) == ("unknown metric 'safety'; the metrics are: correct, exact.value, "
                              "injection_task_scorer.security, injection_task_scorer.utility")
    with pytest.raises(MetricNameError):
        resolve_metric(CANDIDATES, "")
    with pytest.raises(MetricNameError, match="the metrics are: none"):
        resolve_metric([], "x")


def test_score_rows_are_named_scorer_dot_key() -> None:
    assert metric_name("grade", "utility") == "grade.utility"
    assert metric_name("exact", "value") == "exact.value"
