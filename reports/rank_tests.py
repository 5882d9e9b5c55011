"""Exact permutation p-values of rank correlations at small n (docs/reports.md#rank-correlations).

With a handful of systems the t approximation behind ``scipy.stats.spearmanr`` is far off: four
systems in perfect order get p < 0.001 from it, while only 2 of the 4! = 24 equally likely pairings
under independence are as extreme, so the exact two-sided p is 1/12. Up to :data:`EXACT_MAX_N` points
every pairing is enumerated. Ties are kept as the statistic treats them (mid-ranks for Spearman, the
tau-b tie terms for Kendall); both denominators do not change when one side is permuted, so the
comparison runs on exact integers (doubled mid-ranks, signed pair counts) and never on rounded floats.

Callers pass one point per system (its mean over replicates): replicates are not independent points.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

import numpy as np

#: up to this many points the p-value is exact (all n! pairings; 10! = 3,628,800)
EXACT_MAX_N = 10

Method = Literal["spearman", "kendall"]


@lru_cache(maxsize=2)
def _permutations(n: int) -> np.ndarray:
    """All n! permutations of range(n) as an (n!, n) int8 array (built by inserting k at every position)."""
    perms = np.zeros((1, 0), dtype=np.int8)
    for k in range(n):
        rows = perms.shape[0]
        out = np.empty((rows * (k + 1), k + 1), dtype=np.int8)
        for pos in range(k + 1):
            block = out[pos * rows:(pos + 1) * rows]
            block[:, :pos] = perms[:, :pos]
            block[:, pos] = k
            block[:, pos + 1:] = perms[:, pos:]
        perms = out
    return perms


def doubled_midranks(values: Sequence[float]) -> np.ndarray:
    """Twice the average ranks (1-based), as integers: [10, 30, 20, 30] -> [2, 7, 4, 7]."""
    v = np.asarray(values, dtype=float)
    order = np.argsort(v, kind="stable")
    ranks2 = np.empty(len(v), dtype=np.int64)
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        ranks2[order[i:j + 1]] = i + j + 2  # 2 * mean of positions i+1 .. j+1
        i = j + 1
    return ranks2


def _check(x: Sequence[float], y: Sequence[float]) -> int:
    if len(x) != len(y):
        raise ValueError(f"rank correlation: {len(x)} x values but {len(y)} y values")
    n = len(x)
    if n > EXACT_MAX_N:
        raise ValueError(f"rank correlation: exact enumeration is for at most {EXACT_MAX_N} points, got {n}")
    return n


def _spearman_numerators(x: Sequence[float], y: Sequence[float], perms: np.ndarray) -> tuple[int, np.ndarray]:
    """n·Σ rx·ry − Σrx·Σry on doubled mid-ranks: observed, and for y permuted by each row of perms."""
    rx, ry = doubled_midranks(x), doubled_midranks(y)
    n = len(rx)
    offset = int(rx.sum()) * int(ry.sum())
    observed = n * int(rx @ ry) - offset
    acc = np.zeros(perms.shape[0], dtype=np.int64)
    for i in range(n):
        acc += rx[i] * ry[perms[:, i]]
    return observed, n * acc - offset


def _kendall_numerators(x: Sequence[float], y: Sequence[float], perms: np.ndarray) -> tuple[int, np.ndarray]:
    """Concordant minus discordant pairs (ties count 0): observed, and for y permuted by each row of perms."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(xs)
    observed = 0
    acc = np.zeros(perms.shape[0], dtype=np.int64)
    for i in range(n):
        for j in range(i + 1, n):
            sx = int(np.sign(xs[i] - xs[j]))
            if sx == 0:
                continue
            observed += sx * int(np.sign(ys[i] - ys[j]))
            acc += sx * np.sign(ys[perms[:, i]] - ys[perms[:, j]]).astype(np.int64)
    return observed, acc


def exact_p(x: Sequence[float], y: Sequence[float], method: Method = "spearman") -> float | None:
    """Two-sided exact permutation p of Spearman's rho or Kendall's tau-b, n <= EXACT_MAX_N.

    p = #{pairings π of y with |stat(x, y∘π)| >= |stat(x, y)|} / n!. None when a side is constant
    (the coefficient is undefined) or n < 2. Four points in perfect order: 2/24 = 1/12.
    """
    n = _check(x, y)
    if n < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None
    perms = _permutations(n)
    numer = _spearman_numerators if method == "spearman" else _kendall_numerators
    observed, permuted = numer(x, y, perms)
    return float(np.count_nonzero(np.abs(permuted) >= abs(observed)) / perms.shape[0])


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b, (C − D)/sqrt((P − Tx)(P − Ty)) with P = n(n−1)/2 pairs and Tx, Ty the pairs tied in
    x, y; None when a side is constant (scipy.stats.kendalltau's statistic)."""
    if len(x) != len(y):
        raise ValueError(f"kendall_tau_b: {len(x)} x values but {len(y)} y values")
    n = len(x)
    s = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
            s += int(dx * dy)
            tx += dx == 0
            ty += dy == 0
    pairs = n * (n - 1) // 2
    if pairs - tx == 0 or pairs - ty == 0:
        return None
    return float(s / np.sqrt((pairs - tx) * (pairs - ty)))


__all__ = ["EXACT_MAX_N", "doubled_midranks", "exact_p", "kendall_tau_b"]
