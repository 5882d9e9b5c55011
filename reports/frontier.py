"""Cost against quality: each model's mean cost and mean metric with bootstrap intervals on both axes, and
its share of bootstrap draws on the Pareto frontier (docs/reports.md#cost-frontier).

A model is on the frontier when no other model is at least as good on both axes and better on one: cost no
higher and metric no worse (higher when higher is better, lower when lower is better), one of the two
strictly. Each bootstrap draw resamples every model's items with replacement (its metric and cost move
together, item by item), recomputes the two means and the frontier; a model's share is the fraction of
draws in which it is on it. Models are resampled independently of each other. Pure and seeded.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Literal

import numpy as np

Direction = Literal["higher_is_better", "lower_is_better"]
N_BOOT = 2000
LEVEL = 0.95
#: From this many resampled values (draws x items over the models) the means are taken on a second thread
#: beside the draws: the same numbers, sooner on a second core.
THREADED_MIN = 4_000_000


@dataclass(frozen=True)
class ModelItems:
    """One model's per-item values of the metric and of the cost (same order, one entry per item)."""

    label: str
    metric: Sequence[float]
    cost: Sequence[float]


@dataclass(frozen=True)
class FrontierPoint:
    label: str
    n_items: int
    metric: float
    metric_lo: float
    metric_hi: float
    cost: float
    cost_lo: float
    cost_hi: float
    on_frontier: bool  # on the frontier of the observed means
    share: float  # share of bootstrap draws on the frontier


def pareto_mask(cost: np.ndarray, metric: np.ndarray, direction: Direction = "higher_is_better") -> np.ndarray:
    """Which points (last axis) are on the Pareto frontier of low cost and good metric; leading axes are
    independent sets (bootstrap draws). Equal points do not dominate each other: both stay on it."""
    q = metric if direction == "higher_is_better" else -metric
    c_j, c_i = cost[..., None, :], cost[..., :, None]
    q_j, q_i = q[..., None, :], q[..., :, None]
    dominated_by = (c_j <= c_i) & (q_j >= q_i) & ((c_j < c_i) | (q_j > q_i))  # [..., i, j]: j dominates i
    return ~dominated_by.any(axis=-1)


def _check(m: ModelItems) -> tuple[np.ndarray, np.ndarray]:
    x, c = np.asarray(m.metric, dtype=float), np.asarray(m.cost, dtype=float)
    if len(x) != len(c):
        raise ValueError(f"frontier: {m.label!r} has {len(x)} metric values but {len(c)} costs")
    if len(x) == 0:
        raise ValueError(f"frontier: {m.label!r} has no items")
    if not (np.isfinite(x).all() and np.isfinite(c).all()):
        raise ValueError(f"frontier: {m.label!r} has a missing or infinite value")
    return x, c


def cost_quality_frontier(models: Sequence[ModelItems], direction: Direction = "higher_is_better", *,
                          n_boot: int = N_BOOT, seed: int = 0, level: float = LEVEL,
                          chunk: int = 200, threaded: bool | None = None) -> list[FrontierPoint]:
    """Means with percentile bootstrap intervals on both axes and each model's frontier share, in input order.
    `threaded`: the means of each block of draws taken on a second thread (None: from :data:`THREADED_MIN`
    resampled values); the numbers are the same either way."""
    if direction not in ("higher_is_better", "lower_is_better"):
        raise ValueError(f"frontier: the metric's direction is {direction!r}; a frontier needs higher_is_better "
                         "or lower_is_better")
    data = [_check(m) for m in models]
    if not data:
        return []
    rng = np.random.default_rng(seed)
    k = len(data)
    boot_q = np.empty((n_boot, k))
    boot_c = np.empty((n_boot, k))

    def means(j: int, start: int, stop: int, idx: np.ndarray) -> None:
        x, c = data[j]
        boot_q[start:stop, j] = x[idx].mean(axis=1)
        boot_c[start:stop, j] = c[idx].mean(axis=1)

    # the draws come from one generator, in order; each block's means are taken beside the next block's draws
    # (numpy lets go of the GIL for both), on a second thread when the draws are many
    if threaded is None:
        threaded = n_boot * sum(len(x) for x, _ in data) >= THREADED_MIN
    with ThreadPoolExecutor(1) if threaded else nullcontext() as pool:
        pending: deque[Future[None]] = deque()
        for j, (x, _) in enumerate(data):
            n = len(x)
            for start in range(0, n_boot, chunk):
                stop = min(n_boot, start + chunk)
                idx = rng.integers(0, n, size=(stop - start, n))
                if pool is None:
                    means(j, start, stop, idx)
                    continue
                pending.append(pool.submit(means, j, start, stop, idx))
                while len(pending) > 2:  # at most three blocks of draws held at once
                    pending.popleft().result()
        for fut in pending:
            fut.result()
    share = pareto_mask(boot_c, boot_q, direction).mean(axis=0)
    means_q = np.array([x.mean() for x, _ in data])
    means_c = np.array([c.mean() for _, c in data])
    observed = pareto_mask(means_c, means_q, direction)
    tail = (1 - level) / 2
    q_lo, q_hi = np.quantile(boot_q, [tail, 1 - tail], axis=0)
    c_lo, c_hi = np.quantile(boot_c, [tail, 1 - tail], axis=0)
    return [FrontierPoint(m.label, len(data[j][0]), float(means_q[j]), float(q_lo[j]), float(q_hi[j]),
                          float(means_c[j]), float(c_lo[j]), float(c_hi[j]), bool(observed[j]), float(share[j]))
            for j, m in enumerate(models)]


__all__ = ["Direction", "FrontierPoint", "ModelItems", "cost_quality_frontier", "pareto_mask"]
