"""Metric names (docs/metrics.md#metric-names): how a score becomes a metric name, and how a name a
user types resolves to one of a benchmark's metrics. Pure functions, shared by ingest and reports.

A score of an imported Inspect log is named ``scorer.key`` as ``raw.scores`` stores it (``key`` is
``value`` for a scorer with a single value); a benchmark's own metrics have plain names
(``correct``) or ``judge.metric`` names (SciExplore). A name resolves when it is a metric's full name,
or else when exactly one metric of the candidates has it as its part after the first dot
(``security`` -> ``injection_task_scorer.security``) or before it (``exact`` -> ``exact.value``).
"""

from __future__ import annotations

from collections.abc import Sequence


class MetricNameError(ValueError):
    """A metric name that is unknown, or that matches several metrics (the message lists them)."""


def metric_name(scorer: str, key: str) -> str:
    """The metric name of ``raw.scores`` row (scorer, key)."""
    return f"{scorer}.{key}"


def _parts(metric: str) -> tuple[str, str]:
    head, _, tail = metric.partition(".")
    return head, tail


def resolve_metric(candidates: Sequence[str], name: str) -> str:
    """The metric of ``candidates`` that ``name`` names (module docstring); MetricNameError otherwise."""
    known = sorted(dict.fromkeys(candidates))
    if not name:
        raise MetricNameError("an empty metric name")
    if name in known:
        return name
    matches = [m for m in known if name in _parts(m)]
    if len(matches) == 1:
        return matches[0]
    listed = ", ".join(known) if known else "none"
    if matches:
        raise MetricNameError(f"metric {name!r} is ambiguous: it matches {', '.join(matches)}; give the full name")
    raise MetricNameError(f"unknown metric {name!r}; the metrics are: {listed}")
