"""The cost–quality frontier (reports.frontier) on hand-built data whose frontier is worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from agenthop.reports.frontier import ModelItems, cost_quality_frontier, pareto_mask


def test_pareto_mask_by_hand() -> None:
    cost = np.array([1.0, 2.0, 3.0, 2.0])
    metric = np.array([0.5, 0.7, 0.6, 0.7])
    # higher is better: A is the cheapest; B and D tie (neither dominates the other); C costs more than B
    # and scores less, so B dominates it
    assert pareto_mask(cost, metric).tolist() == [True, True, False, True]
    # lower is better: A is cheapest and has the lowest metric, so it dominates every other point
    assert pareto_mask(cost, metric, "lower_is_better").tolist() == [True, False, False, False]
    # leading axes are independent draws
    both = pareto_mask(np.stack([cost, cost]), np.stack([metric, -metric]))
    assert both.tolist() == [[True, True, False, True], [True, False, False, False]]


def test_constant_models_have_share_zero_or_one_and_point_intervals() -> None:
    pts = cost_quality_frontier([
        ModelItems("best", [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]),  # cheapest of the two and better: always on it
        ModelItems("worse", [0.0, 0.0], [2.0, 2.0]),  # dearer and worse: never
    ], n_boot=300)
    best, worse = pts
    assert (best.on_frontier, best.share, worse.on_frontier, worse.share) == (True, 1.0, False, 0.0)
    assert (best.metric, best.metric_lo, best.metric_hi, best.cost, best.cost_lo, best.cost_hi) == (1, 1, 1, 1, 1, 1)
    assert worse.n_items == 2


def test_share_of_draws_worked_by_hand() -> None:
    # "steady" scores 0.75 on every item at cost 1. "gamble" costs 3 and scores 0 or 1 on its two items:
    # a draw of its two items has mean 1 (both draws the 1) with probability 1/4, and only then beats 0.75,
    # so gamble is on the frontier in 1/4 of the draws; steady is the cheapest, always on it.
    pts = cost_quality_frontier([ModelItems("steady", [0.75] * 4, [1.0] * 4),
                                 ModelItems("gamble", [0.0, 1.0], [3.0, 3.0])], n_boot=20_000, seed=3)
    steady, gamble = pts
    assert steady.share == 1.0
    assert abs(gamble.share - 0.25) < 0.015  # Monte-Carlo SE 0.003
    assert gamble.on_frontier is False  # the observed mean 0.5 is below 0.75
    assert (gamble.metric_lo, gamble.metric_hi) == (0.0, 1.0)
    # lower is better: gamble is on it whenever its draw averages below 0.75, i.e. 0 or 0.5 (probability 3/4),
    # and its observed mean 0.5 is below 0.75
    low = cost_quality_frontier([ModelItems("steady", [0.75] * 4, [1.0] * 4),
                                 ModelItems("gamble", [0.0, 1.0], [3.0, 3.0])], "lower_is_better",
                                n_boot=20_000, seed=3)
    assert abs(low[1].share - 0.75) < 0.015 and low[1].on_frontier is True
    # seeded: the same inputs give the same shares
    again = cost_quality_frontier([ModelItems("steady", [0.75] * 4, [1.0] * 4),
                                   ModelItems("gamble", [0.0, 1.0], [3.0, 3.0])], n_boot=20_000, seed=3)
    assert again == pts


def test_bad_input_names_the_model() -> None:
    with pytest.raises(ValueError, match="'m' has 2 metric values but 1 costs"):
        cost_quality_frontier([ModelItems("m", [1.0, 0.0], [1.0])])
    with pytest.raises(ValueError, match="direction is 'none'"):
        cost_quality_frontier([ModelItems("m", [1.0], [1.0])], "none")  # type: ignore[arg-type]
    assert cost_quality_frontier([]) == []


def test_threaded_means_are_the_same_numbers() -> None:
    # the means of each block of draws taken on a second thread: the same draws, the same sums, bit for bit
    rng = np.random.default_rng(7)
    models = [ModelItems(f"m{j}", rng.random(n).tolist(), (rng.random(n) * 3).tolist())
              for j, n in enumerate([50, 1, 333, 120])]
    one = cost_quality_frontier(models, n_boot=1000, chunk=64, threaded=False)
    two = cost_quality_frontier(models, n_boot=1000, chunk=64, threaded=True)
    assert one == two
    assert cost_quality_frontier(models, n_boot=1000, chunk=64) == one  # small: one thread by default
