"""Standard error and 95% interval of a mean when the scores come in clusters (docs/reports.md#clustered).

Items that share a source paper, a domain or a task family, and the repeats of one item, are not
independent: counting them as such makes intervals too narrow. The cluster-robust standard error of
the mean of n scores x_i in G clusters is

    SE = sqrt(G/(G − 1)) · sqrt( Σ_g ( Σ_{i∈g} (x_i − x̄) )² ) / n

(the sum of the residuals within each cluster, squared and added; G/(G − 1) is the small-sample
factor), and the interval is x̄ ± t_{0.975, G−1} · SE. With one score per cluster it is the ordinary
standard error s/sqrt(n) and the t interval on n − 1 degrees of freedom. A clustered bootstrap
(resampling whole clusters) is the alternative for skewed scores.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ClusteredMean:
    """A mean with its cluster-robust standard error and interval."""

    n: int  # scores
    n_clusters: int  # G
    mean: float
    se: float | None  # None with fewer than two clusters
    lo: float | None
    hi: float | None
    method: str  # "t" (cluster-robust SE, t with G − 1 df) or "bootstrap" (clusters resampled)


def _codes(clusters: Sequence[Hashable], n: int) -> tuple[np.ndarray, int]:
    if len(clusters) != n:
        raise ValueError(f"clustered: {n} scores but {len(clusters)} cluster labels")
    index: dict[Hashable, int] = {}
    codes = np.fromiter((index.setdefault(c, len(index)) for c in clusters), dtype=np.int64, count=n)
    return codes, len(index)


def clustered_se(values: Sequence[float], clusters: Sequence[Hashable]) -> float | None:
    """Cluster-robust SE of the mean with the G/(G − 1) factor; None with fewer than two clusters.

    Example: 0/1 scores (1, 1, 0, 0) in clusters (a, a, b, b): residuals ±0.5 sum to +1 and −1 per cluster,
    so SE = sqrt(2/1) · sqrt(1 + 1) / 4 = 0.5 (the naive s/sqrt(n) is 0.289).
    """
    x = np.asarray(values, dtype=float)
    codes, g = _codes(clusters, len(x))
    if g < 2:
        return None
    sums = np.bincount(codes, weights=x - x.mean(), minlength=g)
    return float(np.sqrt(g / (g - 1) * np.sum(sums**2)) / len(x))


def _t_quantile(df: int, level: float) -> float:
    from scipy.special import stdtrit

    return float(stdtrit(df, (1 + level) / 2))


def clustered_interval(values: Sequence[float], clusters: Sequence[Hashable], level: float = 0.95) -> ClusteredMean:
    """Mean ± t_{(1+level)/2, G−1} · clustered SE; interval None with fewer than two clusters or no scores."""
    x = np.asarray(values, dtype=float)
    _, g = _codes(clusters, len(x))
    if len(x) == 0:
        raise ValueError("clustered_interval: no scores")
    m = float(x.mean())
    se = clustered_se(values, clusters)
    if se is None:
        return ClusteredMean(len(x), g, m, None, None, None, "t")
    half = _t_quantile(g - 1, level) * se
    return ClusteredMean(len(x), g, m, se, m - half, m + half, "t")


def clustered_bootstrap(values: Sequence[float], clusters: Sequence[Hashable], *, n_boot: int = 2000, seed: int = 0,
                        level: float = 0.95) -> ClusteredMean:
    """Percentile interval of the mean with whole clusters resampled (G draws with replacement, each
    bringing all its scores; the mean of a draw is its score total over its score count). Seeded."""
    x = np.asarray(values, dtype=float)
    codes, g = _codes(clusters, len(x))
    if len(x) == 0:
        raise ValueError("clustered_bootstrap: no scores")
    m = float(x.mean())
    if g < 2:
        return ClusteredMean(len(x), g, m, None, None, None, "bootstrap")
    totals = np.bincount(codes, weights=x, minlength=g)
    sizes = np.bincount(codes, minlength=g).astype(float)
    draws = np.random.default_rng(seed).integers(0, g, size=(n_boot, g))
    means = totals[draws].sum(axis=1) / sizes[draws].sum(axis=1)
    tail = (1 - level) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail])
    return ClusteredMean(len(x), g, m, float(means.std(ddof=1)), float(lo), float(hi), "bootstrap")


__all__ = ["ClusteredMean", "clustered_bootstrap", "clustered_interval", "clustered_se"]
