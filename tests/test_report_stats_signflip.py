"""The sign-flip permutation test of paired per-item differences (reports.stats.sign_flip_test), on
cases whose p was worked out by hand, by enumerating every sign vector."""

from __future__ import annotations

import itertools

import pytest

from agenthop.reports.stats import sign_flip_test


def test_three_items_one_zero_by_hand():
    # d = (1, 0.5, 0): the zero does not move the sum; the four sign vectors of (1, 0.5) give sums
    # 1.5, 0.5, -0.5, -1.5, and two of them reach |1.5|: p = 2/4
    r = sign_flip_test([1.0, 0.5, 0.0])
    assert (r.n, r.n_nonzero, r.exact, r.n_resamples) == (3, 2, True, 4)
    assert r.mean_diff == pytest.approx(0.5)
    assert r.p == 0.5


def test_six_items_by_hand():
    # sum 0.9; flipping a subset S gives 0.9 - 2·sum(S), at least 0.9 in size when sum(S) <= 0 or >= 0.9:
    # S = {}, {-0.1}, {0.1, -0.1} and their three complements: 6 of 64 sign vectors
    r = sign_flip_test([0.2, 0.1, 0.3, -0.1, 0.25, 0.15])
    assert r.exact and r.n_resamples == 64
    assert r.p == 6 / 64


def test_all_zero_and_empty():
    assert sign_flip_test([0.0, 0.0]).p == 1.0
    assert sign_flip_test([]).mean_diff is None and sign_flip_test([]).p == 1.0


def test_exact_matches_brute_force_enumeration():
    d = [0.5, -0.5, 1.0, 0.25, -0.75, 0.5, 1.0, 0.0]
    t = abs(sum(d))
    hits = sum(1 for s in itertools.product((1, -1), repeat=len(d)) if abs(sum(x * y for x, y in zip(s, d))) >= t - 1e-12)
    assert sign_flip_test(d).p == hits / 2 ** len(d)


def test_monte_carlo_above_the_exact_limit_is_seeded_and_never_zero():
    d = [1.0] * 20  # exact p = 2 / 2**20: no random vector but the two extremes reaches it
    a = sign_flip_test(d, exact_max=16, n_resamples=2000, seed=1)
    assert not a.exact and a.n_resamples == 2000
    assert 0 < a.p <= 3 / 2001
    assert sign_flip_test(d, exact_max=16, n_resamples=2000, seed=1) == a
    # a null-looking case: about half the draws exceed
    b = sign_flip_test([1.0, -1.0] * 10, exact_max=16, n_resamples=4000, seed=0)
    assert b.p == 1.0  # sum 0: every vector reaches |0|
