"""The statistics the paper report adds to reports/stats.py, against scipy and numpy."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats as sps

from agenthop.reports import stats


def test_fisher_p_equals_scipy_on_random_and_tied_tables() -> None:
    rng = random.Random(13)
    tables = [(rng.randint(0, n1), n1, rng.randint(0, n2), n2)
              for n1, n2 in ((rng.randint(1, 120), rng.randint(1, 120)) for _ in range(400))]
    tables += [(k, n, k, n) for n in (2, 7, 40) for k in range(n + 1)]  # symmetric: exact ties of probabilities
    tables += [(3, 10, 7, 10), (0, 5, 5, 5), (1, 1, 0, 1), (500, 1011, 480, 1011)]
    for a, n1, c, n2 in tables:
        want = sps.fisher_exact([[a, n1 - a], [c, n2 - c]]).pvalue
        assert math.isclose(stats.fisher_p(a, n1, c, n2), want, rel_tol=1e-9, abs_tol=1e-15), (a, n1, c, n2)
    assert stats.fisher_p(0, 0, 3, 5) == 1.0
    with pytest.raises(ValueError):
        stats.fisher_p(4, 3, 0, 1)


def test_benjamini_hochberg_equals_scipy() -> None:
    rng = np.random.default_rng(3)
    for ps in ([0.01, 0.04, 0.03, 0.2], [0.5], [], [0.01, 0.01, 0.01, 1.0, 0.0], list(rng.uniform(size=60) ** 3)):
        got = stats.benjamini_hochberg(ps)
        want = sps.false_discovery_control(ps) if ps else []
        assert np.allclose(got, want, rtol=1e-12, atol=0)
    with pytest.raises(ValueError):
        stats.benjamini_hochberg([1.5])


def test_correlations_equal_scipy_and_guards() -> None:
    # 12 points: above rank_tests.EXACT_MAX_N, where Spearman keeps scipy's p and the Fisher-z interval
    x = [0.31, 0.52, 0.44, 0.9, 0.71, 0.2, 0.52, 0.05, 0.66, 0.38, 0.8, 0.12]
    y = [10, 30, 20, 55, 41, 40, 31, 12, 29, 33, 50, 4]
    pe, sp = stats.pearson_ci(x, y), stats.spearman_ci(x, y)
    ref = sps.pearsonr(x, y)
    assert math.isclose(pe.r, ref.statistic) and math.isclose(pe.p, ref.pvalue)
    assert math.isclose(pe.lo, ref.confidence_interval().low) and math.isclose(pe.hi, ref.confidence_interval().high)
    ref_s = sps.spearmanr(x, y)
    ranks = sps.pearsonr(sps.rankdata(x), sps.rankdata(y)).confidence_interval()
    assert math.isclose(sp.r, ref_s.statistic) and math.isclose(sp.p, ref_s.pvalue)
    assert math.isclose(sp.lo, ranks.low) and math.isclose(sp.hi, ranks.high)
    assert stats.pearson_ci([1, 2, 3], [1, 2, 4]).r is None  # n < 4
    assert stats.spearman_ci([1, 1, 1, 1], [1, 2, 3, 4]).r is None  # constant
    perfect = stats.pearson_ci([1, 2, 3, 4], [2, 4, 6, 8])
    assert math.isclose(perfect.r, 1.0) and perfect.lo == perfect.hi == perfect.r
    with pytest.raises(ValueError):
        stats.pearson_ci([1, 2], [1])


def test_discrimination_summary_equals_numpy() -> None:
    vals = [0.5, None, -0.1, 0.25, 0.19, 0.8, None, 0.2]
    s = stats.discrimination_summary(vals)
    xs = np.array([v for v in vals if v is not None])
    assert s.n_items == 6
    assert math.isclose(s.median, np.median(xs)) and math.isclose(s.q1, np.percentile(xs, 25))
    assert math.isclose(s.q3, np.percentile(xs, 75)) and math.isclose(s.share_above, 3 / 6)
    assert stats.discrimination_summary([None]).median is None


def test_bonferroni_significance_over_49_pairs() -> None:
    assert stats.bonferroni_significant(0.05 / 49 * 0.99)
    assert not stats.bonferroni_significant(0.05 / 49 * 1.01)
