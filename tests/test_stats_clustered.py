"""Cluster-robust standard errors and intervals of a mean on small designed examples."""

from __future__ import annotations

import math

import pytest

from agenthop.reports import clustered


def test_binary_scores_in_four_clusters_by_hand() -> None:
    # mean 4/8 = 0.5; residual sums per cluster: a +1, b -1, c 0, d 0 -> Σ = 2; G = 4:
    # SE = sqrt(4/3 · 2) / 8 = 0.204124; the naive s/sqrt(n) = sqrt(2/7)/sqrt(8) = 0.188982
    x = [1, 1, 0, 0, 1, 0, 1, 0]
    g = ["a", "a", "b", "b", "c", "c", "d", "d"]
    assert clustered.clustered_se(x, g) == pytest.approx(math.sqrt(8 / 3) / 8, rel=1e-12)
    ci = clustered.clustered_interval(x, g)
    half = 3.182446305284263 * math.sqrt(8 / 3) / 8  # t(0.975, 3 df)
    assert (ci.mean, ci.n, ci.n_clusters) == (0.5, 8, 4)
    assert ci.lo == pytest.approx(0.5 - half, rel=1e-9) and ci.hi == pytest.approx(0.5 + half, rel=1e-9)


def test_continuous_scores_in_three_unequal_clusters_by_hand() -> None:
    # mean 24/6 = 4; residual sums: a (2, 4) -> -2, b (6) -> +2, c (1, 3, 8) -> 0; Σ = 8; G = 3:
    # SE = sqrt(3/2 · 8) / 6 = sqrt(12)/6 = 0.577350; half-width t(0.975, 2) · SE = 4.302653 · 0.577350 = 2.484138
    ci = clustered.clustered_interval([2, 4, 6, 1, 3, 8], [1, 1, 2, 3, 3, 3])
    assert ci.se == pytest.approx(math.sqrt(12) / 6, rel=1e-12)
    assert ci.hi - ci.mean == pytest.approx(2.484138, abs=1e-6)


def test_singleton_clusters_give_the_ordinary_standard_error() -> None:
    # x = (1, 2, 3, 6): s² = 14/3, s/sqrt(4) = 1.080123; clustered: sqrt(4/3 · 14)/4, the same
    assert clustered.clustered_se([1, 2, 3, 6], [0, 1, 2, 3]) == pytest.approx(math.sqrt(14 / 3) / 2, rel=1e-12)
    assert clustered.clustered_se([1, 2, 3], ["x"] * 3) is None  # one cluster: no interval
    assert clustered.clustered_interval([1, 2, 3], ["x"] * 3).lo is None
    with pytest.raises(ValueError, match="cluster labels"):
        clustered.clustered_se([1, 2], ["a"])


def test_clustered_bootstrap_resamples_whole_clusters() -> None:
    # every cluster has mean 0.5 and two scores: every draw's mean is 0.5, so the interval is [0.5, 0.5]
    b = clustered.clustered_bootstrap([0, 1, 1, 0, 0, 1], ["a", "a", "b", "b", "c", "c"], n_boot=200)
    assert (b.lo, b.hi, b.method) == (0.5, 0.5, "bootstrap")
    # clusters a = (1, 1), b = (0, 0): draws are aa, ab, ba, bb, so draw means are 1, 0.5, 0.5, 0 only
    b2 = clustered.clustered_bootstrap([1, 1, 0, 0], ["a", "a", "b", "b"], n_boot=4000, seed=1)
    assert b2.lo == 0.0 and b2.hi == 1.0
    assert b2 == clustered.clustered_bootstrap([1, 1, 0, 0], ["a", "a", "b", "b"], n_boot=4000, seed=1)
