"""The metric a shared page shows (docs/reports.md#metric-and-direction): resolved from the warehouse's
metric catalogue (mart ``metric_defs``), named with its label and direction on the page, and the per-item
values the page reads.

``--metric NAME`` picks one of the benchmark's metrics (a full name, or a bare name unique within the
benchmark: ``security`` -> ``grade.security``); without it the page shows the benchmark's primary metric.
While a page is built for a metric (:func:`scoped`), the shared queries read the final trajectories with
the metric's value as their score (and "value 1" as their binary outcome) from a temporary view over
``item_metric_values``, so every section of the page, and the item pages it writes, speaks of that
metric without a re-import. A warehouse without the catalogue (built by an older version), or a
benchmark none of whose runs carries a score, keeps the trajectories' own outcome.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from agenthop.harness.errors import AgentHopError
from agenthop.ingest.metric_names import MetricNameError, resolve_metric

from ..warehouse import Warehouse
from . import marts
from .registry import Outcomes, outcomes_of

HIGHER, LOWER, NONE = "higher_is_better", "lower_is_better", "none"
DIRECTION_TEXT = {HIGHER: "higher is better", LOWER: "lower is better", NONE: "no better direction"}
_VIEW = "metric_trajectories_final"


@dataclass(frozen=True)
class Metric:
    """One row of ``metric_defs``."""

    benchmark: str
    name: str
    kind: str = "binary"
    direction: str = HIGHER
    label: str = ""
    is_primary: bool = False
    min_value: float | None = None
    max_value: float | None = None

    @property
    def title(self) -> str:
        """``utility (grade.utility)``, or the name alone when the label is the name."""
        label = self.label or self.name
        return label if label == self.name else f"{label} ({self.name})"

    @property
    def short(self) -> str:
        return self.label or self.name

    @property
    def direction_text(self) -> str:
        return DIRECTION_TEXT.get(self.direction, DIRECTION_TEXT[NONE])

    @property
    def caption(self) -> str:
        """``utility (grade.utility), higher is better``: how headlines and captions name the metric."""
        return f"{self.title}, {self.direction_text}"

    @property
    def binary(self) -> bool:
        return self.kind == "binary"

    @property
    def sign(self) -> int:
        """+1 when higher is better, −1 when lower is, 0 without a direction."""
        return {HIGHER: 1, LOWER: -1}.get(self.direction, 0)

    @property
    def better_word(self) -> str:
        """``higher`` or ``lower`` (the better value's side), empty without a direction."""
        return {HIGHER: "higher", LOWER: "lower"}.get(self.direction, "")


def better_side(metric: Metric | None, a: float | None, b: float | None) -> str:
    """``"A"`` or ``"B"``, the side whose value is the better one by the metric's direction; ``""`` on a tie,
    a missing value, or a metric without a direction. Without a metric, higher is better."""
    sign = metric.sign if metric is not None else 1
    if a is None or b is None or a == b or sign == 0:
        return ""
    return "A" if (a - b) * sign > 0 else "B"


def named_outcomes(metric: Metric) -> Outcomes:
    """An item's binary outcome named by the metric (``security = 1``), never right or wrong."""
    one, zero = f"{metric.short} = 1", f"{metric.short} = 0"
    good, bad = {HIGHER: ("ok", "bad"), LOWER: ("bad", "ok")}.get(metric.direction, ("", ""))
    return Outcomes(right=one, got_right=f"had {one}", wrong=zero, correct=one, correctness=f"{metric.short} (1 or 0)",
                    judged=f"with {one}", accuracy=f"share with {one}",
                    percent=f"% with {one}", one_class=good, zero_class=bad)


def outcomes_for(benchmark: str | None, metric: Metric | None) -> Outcomes:
    """How the page names an item's binary outcome: the benchmark's own words (right/wrong) for its primary
    metric when higher is better and the benchmark has right answers; else the metric's name and value."""
    base = outcomes_of(benchmark)
    if metric is None:
        return base
    if base == Outcomes() and metric.is_primary and metric.direction == HIGHER:
        return base
    return named_outcomes(metric)


# -- the catalogue ---------------------------------------------------------------------------------------------


def catalogue(wh: Warehouse, benchmark: str) -> list[Metric]:
    """The benchmark's metrics in ``metric_defs`` (none on a warehouse built without the mart)."""
    if not marts.has(wh, marts.METRIC_DEFS):
        return []
    rows = wh.rows(
        f"""SELECT benchmark, metric, kind, direction, label, is_primary, min_value, max_value
            FROM {marts.METRIC_DEFS} WHERE benchmark = ? ORDER BY metric""", [benchmark])
    return [Metric(benchmark=str(r["benchmark"]), name=str(r["metric"]), kind=str(r["kind"] or "binary"),
                   direction=str(r["direction"] or HIGHER), label=str(r["label"] or r["metric"]),
                   is_primary=bool(r["is_primary"]), min_value=r["min_value"], max_value=r["max_value"])
            for r in rows]


def resolve(wh: Warehouse, benchmark: str, name: str | None) -> Metric | None:
    """The metric `name` names among the benchmark's (a user error listing the candidates when it names
    none or several); without a name the primary metric, None when the benchmark has no catalogue."""
    known = catalogue(wh, benchmark)
    if name is None:
        return next((m for m in known if m.is_primary), None)
    try:
        chosen = resolve_metric([m.name for m in known], name.strip())
    except MetricNameError as e:
        raise AgentHopError(f"--metric: {e} (benchmark {benchmark})") from None
    return next(m for m in known if m.name == chosen)


# -- the page's values -------------------------------------------------------------------------------------------


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _binary_outcome(metric: Metric) -> str:
    """SQL of the trajectory's binary outcome under `metric`: value 1 (binary); for the primary graded metric
    the trajectory's own outcome (its benchmark's judgement); else the top of the metric's scale, if known."""
    if metric.binary:
        return "v.value = 1"
    if metric.is_primary:
        return "t.is_correct"
    if metric.max_value is not None:
        return f"v.value >= {float(metric.max_value)!r}"
    return "NULL::boolean"


def _trajectories_view(metric: Metric) -> str:
    return f"""CREATE OR REPLACE TEMP VIEW {_VIEW} AS
        SELECT t.* REPLACE (v.value AS score, {_binary_outcome(metric)} AS is_correct)
        FROM {marts.TRAJECTORIES} AS t
        LEFT JOIN {marts.ITEM_METRIC_VALUES} AS v
            ON v.run_id = t.run_id AND v.sample_id = t.sample_id AND v.metric = {_literal(metric.name)}
            AND v.benchmark = {_literal(metric.benchmark)}"""


@contextmanager
def scoped(wh: Warehouse, metric: Metric | None) -> Iterator[Metric | None]:
    """Within the block the shared queries read `metric`'s values as the trajectories' score and outcome
    (module docstring); with None they read the trajectories as they are."""
    if metric is None:
        yield None
        return
    previous = (marts.trajectories(wh), current(wh))
    wh.con.execute(_trajectories_view(metric))
    wh._trajectories, wh._metric = f"temp.main.{_VIEW}", metric  # type: ignore[attr-defined]
    try:
        yield metric
    finally:
        wh._trajectories, wh._metric = previous  # type: ignore[attr-defined]
        if previous[1] is not None:
            wh.con.execute(_trajectories_view(previous[1]))
        else:
            wh.con.execute(f"DROP VIEW IF EXISTS {_VIEW}")


def current(wh: Warehouse) -> Metric | None:
    """The metric the page being built shows (None outside :func:`scoped`)."""
    return getattr(wh, "_metric", None)
