"""Exact permutation p-values of rank correlations at small n, on hand-worked cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from agenthop.reports import rank_tests, stats


def test_four_points_in_perfect_order_give_one_twelfth() -> None:
    # only the identity and the reversal of 4! = 24 pairings reach |rho| = 1: p = 2/24
    x, y = [0.1, 0.2, 0.3, 0.4], [3.0, 5.0, 8.0, 9.0]
    assert rank_tests.exact_p(x, y, "spearman") == pytest.approx(2 / 24, abs=1e-15)
    assert rank_tests.exact_p(x, y, "kendall") == pytest.approx(2 / 24, abs=1e-15)
    c = stats.spearman_ci(x, y)
    assert c.r == pytest.approx(1.0) and c.p == pytest.approx(1 / 12, abs=1e-15)
    assert c.lo is None and c.hi is None  # no interval collapsing to [1, 1]


def test_five_points_with_one_adjacent_swap() -> None:
    # rho = 1 - 6·Σd²/(n(n²-1)) = 1 - Σd²/20 = 0.9 with Σd² = 2. |rho| >= 0.9 needs Σd² <= 2 (the identity and the
    # four adjacent swaps) or Σd² >= 38 (their reversals): 10 of 120 pairings. Kendall: tau = (9 - 1)/10 = 0.8,
    # reached with at most 1 or at least 9 inversions: again 1 + 4 + 4 + 1 = 10 of 120.
    x, y = [1, 2, 3, 4, 5], [1, 2, 3, 5, 4]
    c = stats.spearman_ci(x, y)
    assert c.r == pytest.approx(0.9) and c.p == pytest.approx(10 / 120, abs=1e-15)
    assert rank_tests.kendall_tau_b(x, y) == pytest.approx(0.8)
    assert rank_tests.exact_p(x, y, "kendall") == pytest.approx(10 / 120, abs=1e-15)


def test_ties_permute_the_observed_midranks() -> None:
    # ry = (1, 2.5, 2.5, 4): deviations (-1.5, 0, 0, 1.5) against x's (-1.5, -0.5, 0.5, 1.5); Sxy = 1.5·(dx_a - dx_b)
    # for the positions a, b of +1.5 and -1.5, which reaches the observed 4.5 in absolute value only for
    # (a, b) = (4, 1) or (1, 4), each with 2 placements of the tied zeros: 4 of 24 pairings.
    x, y = [1, 2, 3, 4], [1, 2, 2, 3]
    assert list(rank_tests.doubled_midranks(y)) == [2, 5, 5, 8]
    assert rank_tests.exact_p(x, y) == pytest.approx(4 / 24, abs=1e-15)
    assert stats.spearman_ci(x, y).r == pytest.approx(4.5 / math.sqrt(22.5))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_exact_p_equals_scipy_full_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 4 + seed
    x, y = rng.integers(0, 4, n).astype(float), rng.integers(0, 5, n).astype(float)  # many ties
    rx = sps.rankdata(x)

    def rho(yy: np.ndarray, axis: int = -1) -> np.ndarray:  # Pearson of mid-ranks, vectorised over pairings
        ry = sps.rankdata(yy, axis=axis)
        dx, dy = rx - rx.mean(), ry - ry.mean(axis=axis, keepdims=True)
        return np.abs((dy * dx).sum(axis=axis) / np.sqrt((dx**2).sum() * (dy**2).sum(axis=axis)))

    def tau(yy: np.ndarray) -> float:
        return abs(sps.kendalltau(x, yy).statistic)

    # two-sided here is |stat*| >= |stat| (scipy's "two-sided" doubles the smaller tail instead): |stat|, "greater"

    for stat, name, vec in ((rho, "spearman", True), (tau, "kendall", False)):
        ref = sps.permutation_test((y,), stat, permutation_type="pairings", n_resamples=np.inf, vectorized=vec,
                                   alternative="greater").pvalue
        assert rank_tests.exact_p(list(x), list(y), name) == pytest.approx(ref, rel=1e-9)
    assert rank_tests.kendall_tau_b(list(x), list(y)) == pytest.approx(sps.kendalltau(x, y).statistic)


def test_ten_points_enumerate_all_pairings_and_larger_n_keeps_scipy() -> None:
    x = list(range(10))
    y = [0, 2, 1, 3, 4, 6, 5, 7, 9, 8]
    p = stats.spearman_ci(x, y).p
    assert p is not None and 0 < p < 1e-3  # the exact p at n = 10 can be far below 0.001
    assert p * math.factorial(10) == pytest.approx(round(p * math.factorial(10)))  # a count of pairings / 10!
    x11, y11 = list(range(11)), [0, 2, 1, 3, 4, 6, 5, 7, 9, 8, 10]
    c = stats.spearman_ci(x11, y11)
    assert c.p == pytest.approx(sps.spearmanr(x11, y11).pvalue) and c.lo is not None
    with pytest.raises(ValueError, match="at most 10 points"):
        rank_tests.exact_p(x11, y11)
    assert rank_tests.exact_p([1, 1, 1], [1, 2, 3]) is None  # constant side
