"""reports/stats.py::paired_graded on hand-computed cases (graded scores: sign test, Wilcoxon, bootstrap)."""

from __future__ import annotations

import pytest

from agenthop.reports.stats import paired_graded


def test_every_item_worse_exact_tests() -> None:
    # b - a = -0.4, -0.1, -0.6, -0.3, -0.8: 5 of 5 worse; sign p = 2 / 2^5; W+ = 0 -> p = 2 * 1/32
    r = paired_graded([0.9, 0.6, 0.8, 0.3, 1.0], [0.5, 0.5, 0.2, 0.0, 0.2])
    assert (r.n, r.n_better, r.n_worse, r.n_ties) == (5, 0, 5, 0)
    assert r.mean_diff == pytest.approx(-0.44)
    assert r.sign_p == pytest.approx(0.0625)
    assert r.wilcoxon_p == pytest.approx(0.0625)
    assert r.ci_lo <= r.mean_diff <= r.ci_hi < 0


def test_mixed_signs() -> None:
    # b - a = +0.4, -0.1, +0.6, +0.3, -0.2; ranks of |d| 4, 1, 5, 3, 2: W- = 1 + 2 = 3.
    # Subsets of {1..5} summing to <= 3: {}, {1}, {2}, {3}, {1,2} -> p = 2 * 5/32; sign 3 vs 2 -> p = 1
    r = paired_graded([0.0, 0.1, 0.0, 0.0, 0.2], [0.4, 0.0, 0.6, 0.3, 0.0])
    assert (r.n_better, r.n_worse) == (3, 2)
    assert r.sign_p == 1.0
    assert r.wilcoxon_p == pytest.approx(10 / 32)
    assert r.mean_diff == pytest.approx(0.2)


def test_ties_and_zero_differences() -> None:
    # b - a = 0.5, 0, 0.5, 0.25, 0.5: the zero is dropped; mid-ranks 3, 3, 1, 3; all positive, so only
    # the all-positive sign pattern reaches W+ = 10: p = 2 * 1/16; sign 4 vs 0: 2 / 16
    r = paired_graded([0.5, 0.5, 0.25, 0.0, 0.5], [1.0, 0.5, 0.75, 0.25, 1.0])
    assert (r.n_better, r.n_worse, r.n_ties) == (4, 0, 1)
    assert r.sign_p == pytest.approx(0.125)
    assert r.wilcoxon_p == pytest.approx(0.125)
    assert r.mean_diff == pytest.approx(0.35)


def test_bootstrap_of_a_constant_difference_is_that_difference() -> None:
    r = paired_graded([0.0, 0.5, 0.25], [0.25, 0.75, 0.5])
    assert (r.ci_lo, r.ci_hi) == (pytest.approx(0.25), pytest.approx(0.25))
    assert paired_graded([0.1, 0.9, 0.4], [0.3, 0.2, 0.8], seed=3) == paired_graded([0.1, 0.9, 0.4], [0.3, 0.2, 0.8], seed=3)


def test_large_n_uses_the_normal_approximation_as_scipy() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    a = [0.0] * 60
    b = [i / 100 for i in range(1, 61)]  # 60 distinct positive differences
    b[::7] = [-x for x in b[::7]]  # some negative
    r = paired_graded(a, b, n_boot=200)
    expected = scipy_stats.wilcoxon([y - x for x, y in zip(a, b)], method="approx", correction=False).pvalue
    assert r.wilcoxon_p == pytest.approx(expected, rel=1e-9)


def test_no_shared_items() -> None:
    r = paired_graded([], [])
    assert (r.n, r.mean_diff, r.sign_p, r.wilcoxon_p, r.ci_lo) == (0, None, 1.0, 1.0, None)
    with pytest.raises(ValueError):
        paired_graded([1.0], [])
