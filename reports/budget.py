"""The interval of one point of a budget curve (docs/metrics.md#budget-curves): the metric had a run been cut
at a cap, as the budget_curves mart gives it (n items, the sum of the counted values and of their squares;
an item not answered by the cap counts 0).

A 0/1 metric gets the Wilson interval of value_sum right out of n; a graded one the t interval
mean ± t_{0.975, n − 1} · s / sqrt(n), s² = (Σv² − n·mean²) / (n − 1) over all n items (the zeros included).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import stats


@dataclass(frozen=True)
class CurvePoint:
    mean: float
    lo: float | None
    hi: float | None
    method: str  # "Wilson" or "t"


def budget_interval(n: int, value_sum: float, value_sq_sum: float, binary: bool, level: float = 0.95) -> CurvePoint:
    """Mean and 95% interval of one cap's value; None bounds for no items (Wilson) or one item (t)."""
    if n <= 0:
        raise ValueError(f"budget_interval: {n} items")
    mean = value_sum / n
    if binary:
        ci = stats.wilson_interval(int(round(value_sum)), n)
        return CurvePoint(mean, ci[0] if ci else None, ci[1] if ci else None, "Wilson")
    if n < 2:
        return CurvePoint(mean, None, None, "t")
    from scipy.special import stdtrit

    var = max(0.0, (value_sq_sum - n * mean * mean) / (n - 1))
    half = float(stdtrit(n - 1, (1 + level) / 2)) * math.sqrt(var / n)
    return CurvePoint(mean, mean - half, mean + half, "t")


__all__ = ["CurvePoint", "budget_interval"]
