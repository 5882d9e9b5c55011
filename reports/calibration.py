"""Calibration of the reports' paired tests and intervals by simulation (docs/reports.md#calibration).

For every cell of a grid (items n, success rate, binary or graded scores, design) the script draws
null comparisons: two arms with the same per-item success probabilities, so every rejection is a type-I
error, and counts how often each interval of one arm's mean misses the true mean. Designs:

- ``independent``: one score per item and arm, item difficulties p_i ~ Beta drawn per item;
- ``pooled``: three repeats per item and arm, pooled into the item's mean (repeats of an item share
  its difficulty: intra-item correlation 0.1);
- ``clustered``: items in G = max(30, n // 10) clusters (an item's difficulty is its cluster's),
  intra-cluster correlation 0.1.

Difficulties are Beta with mean = the rate and the dispersion that gives an intra-cluster correlation
of 0.1 on the score scale: Beta(9p, 9(1 − p)) for 0/1 scores (var(μ) = 0.1·p(1 − p)), Beta(36p, 36(1 − p))
for graded scores, which are Binomial(4, μ)/4 (then var(μ) / var(score) = 0.1 too).

A simulation is held as its table of item counts by (A's units, B's units): every test and interval is a
function of it (and, in the clustered design, of the clusters' totals). Items are independent in the
independent and pooled designs, so their table is drawn at once from the multinomial of the items' joint
distribution (beta-binomial, joint_pmf); the clustered design draws every item. A cell of 10,000 items
then costs about what a cell of 30 does, except in the clustered design.

The sign-flip permutation test (stats.sign_flip_test, the pooled compare's test) is measured by its exact
permutation p (the null distribution of the sum of the flipped integer differences, by FFT), which the
reports count exactly up to 16 non-zero differences and estimate from 20,000 random sign vectors above; the
check against the reports allows for that Monte-Carlo error. With many differences the FFT covers a window of
±12 standard deviations around the centre of the distribution (the mass outside is below 1e-31). The tests and intervals are vectorised
restatements of reports.stats / reports.clustered, and each
cell checks them against those functions on its first simulations (a mismatch raises), so what is
measured is what the reports compute. Run ``python -m agenthop.reports.calibration --grid full --write
docs/reports.md``; the Markdown table goes between the calibration marker comments.
"""

from __future__ import annotations

import json
import math
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import click
import numpy as np
from scipy import special, stats as sps

from . import clustered, stats

Kind = Literal["binary", "graded"]
Design = Literal["independent", "pooled", "clustered"]

ICC = 0.1
REPEATS = 3  # pooled design
GRADED_STEPS = 4  # graded scores are multiples of 1/4
ALPHA = 0.05
LEVEL = 0.95
N_BOOT = 2000  # as reports.stats.bootstrap_mean_interval
#: simulations per cell checked against the reports' own functions
CHECK_SIMS = 12
#: of those, the ones whose Monte-Carlo sign-flip p (more than 16 differences) is checked too
CHECK_SIMS_MONTE_CARLO = 3
#: the clustered t interval is claimed to cover (>= 94%) when G·min(p, 1 − p) reaches this
MIN_CLUSTER_EVENTS = 10
START, END = "<!-- calibration:start -->", "<!-- calibration:end -->"

GRIDS: dict[str, dict[str, Sequence]] = {
    "full": {"n": (30, 100, 1000, 10000), "rate": (0.1, 0.3, 0.5, 0.7, 0.9)},
    "medium": {"n": (30, 100, 1000), "rate": (0.1, 0.5, 0.9)},
    "reduced": {"n": (30, 100), "rate": (0.1, 0.5)},
}
KINDS: tuple[Kind, ...] = ("binary", "graded")
DESIGNS: tuple[Design, ...] = ("independent", "pooled", "clustered")

#: what each measured rate is, with its criterion; the column order of the table
TESTS = ("mcnemar", "sign", "wilcoxon", "signflip")
INTERVALS = ("wilson", "bootstrap", "clustered_t", "wilson_naive")
HEADERS = {"mcnemar": "McNemar exact", "sign": "sign exact", "wilcoxon": "Wilcoxon", "signflip": "sign-flip",
           "wilson": "Wilson", "bootstrap": "bootstrap", "clustered_t": "clustered t",
           "wilson_naive": "Wilson ignoring clusters"}


@dataclass(frozen=True)
class Cell:
    n: int
    rate: float
    kind: Kind
    design: Design

    @property
    def clusters(self) -> int:
        if self.design == "clustered":
            return min(self.n, max(30, self.n // 10))
        return self.n

    @property
    def repeats(self) -> int:
        return REPEATS if self.design == "pooled" else 1

    @property
    def steps(self) -> int:
        """Units of one score: the score is units / steps."""
        return 1 if self.kind == "binary" else GRADED_STEPS

    @property
    def seed(self) -> int:
        return zlib.crc32(f"{self.n}|{self.rate}|{self.kind}|{self.design}".encode())


@dataclass
class Result:
    cell: Cell
    sims: int = 0
    rejections: dict[str, int] = field(default_factory=dict)
    covered: dict[str, int] = field(default_factory=dict)
    wilcoxon_exact: int = 0  # simulations whose Wilcoxon p was exact (at most 50 non-zero differences)

    def rate(self, name: str) -> float | None:
        if name in self.rejections:
            return self.rejections[name] / self.sims
        if name in self.covered:
            return self.covered[name] / self.sims
        return None

    def claimed(self, name: str) -> bool:
        """Whether the docs claim coverage >= 94% for this interval in this cell: the clustered t interval only
        with at least MIN_CLUSTER_EVENTS expected successes and failures counted in clusters (G·min(p, 1 − p));
        rarer outcomes in few clusters make the t interval of a skewed mean too short."""
        if name == "clustered_t":
            c = self.cell
            return round(c.clusters * min(c.rate, 1 - c.rate), 9) >= MIN_CLUSTER_EVENTS  # 100·(1 − 0.9) is 9.99…
        return True

    def passes(self, name: str) -> bool | None:
        """Whether the measured rate meets its criterion; None for a rate without one (or not measured)."""
        r = self.rate(name)
        if r is None or name == "wilson_naive":
            return None
        if name in INTERVALS:
            return r >= 0.94
        if name == "wilcoxon" and self.wilcoxon_exact == 0:  # normal approximation throughout
            return 0.04 <= r <= 0.06
        return r <= 0.06  # exact discrete tests (and Wilcoxon where it is exact)


def cells(grid: str) -> list[Cell]:
    g = GRIDS[grid]
    return [Cell(n, rate, kind, design) for n in g["n"] for rate in g["rate"] for kind in KINDS for design in DESIGNS]


# --------------------------------------------------------------------------------------------------
# Data: per simulation, the table of item counts by (A's units, B's units)
# --------------------------------------------------------------------------------------------------


def _concentration(cell: Cell) -> float:
    return (1 / ICC - 1) if cell.kind == "binary" else (1 / ICC - 1) * GRADED_STEPS  # 9 or 36


def joint_pmf(cell: Cell) -> np.ndarray:
    """P(A's units = i, B's units = j) of one item, (t + 1, t + 1) with t = steps · repeats: both arms
    Binomial(t, μ) given the item's μ ~ Beta(c·p, c·(1 − p)), integrated over μ (beta-binomial):
    C(t, i)·C(t, j)·B(c·p + i + j, c·(1 − p) + 2t − i − j) / B(c·p, c·(1 − p))."""
    conc = _concentration(cell)
    al, be = conc * cell.rate, conc * (1 - cell.rate)
    t = cell.steps * cell.repeats
    i = np.arange(t + 1)
    logc = special.gammaln(t + 1) - special.gammaln(i + 1) - special.gammaln(t - i + 1)
    logp = (logc[:, None] + logc[None, :] + special.betaln(al + i[:, None] + i[None, :], be + 2 * t - i[:, None] - i[None, :])
            - special.betaln(al, be))
    p = np.exp(logp)
    return p / p.sum()


def draw(cell: Cell, rng: np.random.Generator, sims: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per arm the items' score units summed over the repeats, shape (sims, n), and the items' cluster codes
    (item i is in cluster i mod G; its difficulty is its cluster's)."""
    conc = _concentration(cell)
    g = cell.clusters
    codes = np.arange(cell.n) % g
    mu = rng.beta(conc * cell.rate, conc * (1 - cell.rate), size=(sims, g))[:, codes]
    trials = cell.steps * cell.repeats
    return rng.binomial(trials, mu), rng.binomial(trials, mu), codes


def tables_of(a: np.ndarray, b: np.ndarray, units: int) -> np.ndarray:
    """Item counts by (A's units, B's units) per simulation, (sims, units + 1, units + 1)."""
    k = units + 1
    sims = a.shape[0]
    flat = (np.arange(sims)[:, None] * (k * k) + a * k + b).ravel()
    return np.bincount(flat, minlength=sims * k * k).reshape(sims, k, k)


def items_of(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One simulation's items back from its count table: A's and B's units per item (in table order)."""
    k = table.shape[0]
    cells = np.repeat(np.arange(k * k), table.ravel())
    return cells // k, cells % k


@dataclass(frozen=True)
class Chunk:
    """What the tests and intervals need of a batch of simulations."""

    tables: np.ndarray  # (sims, t + 1, t + 1) item counts by (A's units, B's units)
    cluster_totals: np.ndarray | None  # clustered design: (sims, G) A's score totals per cluster
    a: np.ndarray | None = None  # clustered design: the item arrays (for the check against the reports)
    b: np.ndarray | None = None


def draw_chunk(cell: Cell, rng: np.random.Generator, sims: int) -> Chunk:
    """A batch of null comparisons. Items are independent in the independent and pooled designs, so the
    table of a simulation is Multinomial(n, joint_pmf): the same distribution as drawing every item, at a cost
    that does not grow with n. The clustered design draws every item (items share their cluster's μ)."""
    units = cell.steps * cell.repeats
    if cell.design != "clustered":
        tables = rng.multinomial(cell.n, joint_pmf(cell).ravel(), size=sims).reshape(sims, units + 1, units + 1)
        return Chunk(tables, None)
    a, b, codes = draw(cell, rng, sims)
    g = cell.clusters
    totals = np.zeros((sims, g))  # score totals of each cluster's observations; item i is in cluster i % g
    for start in range(0, cell.n, g):
        block = a[:, start:start + g] / cell.steps
        totals[:, :block.shape[1]] += block
    return Chunk(tables_of(a, b, units), totals, a, b)


def difference_counts(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per simulation and magnitude k = 1..t: items with |B − A| = k, and those of them with B − A = +k."""
    k = tables.shape[1]
    i, j = np.divmod(np.arange(k * k), k)
    d = j - i
    mags = np.arange(1, k)
    flat = tables.reshape(tables.shape[0], -1)
    pos = flat @ (d[:, None] == mags[None, :]).astype(np.int64)
    neg = flat @ (-d[:, None] == mags[None, :]).astype(np.int64)
    return pos + neg, pos


def _counts_of_diffs(diff_units: np.ndarray, max_units: int) -> tuple[np.ndarray, np.ndarray]:
    mags = np.arange(1, max_units + 1)
    absd = np.abs(diff_units)
    counts = (absd[..., None] == mags).sum(axis=1)  # (sims, L)
    pos = ((diff_units > 0)[..., None] & (absd[..., None] == mags)).sum(axis=1)
    return counts, pos


# --------------------------------------------------------------------------------------------------
# Vectorised restatements of the reports' tests
# --------------------------------------------------------------------------------------------------


def binomial_half_p(k_small: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Two-sided exact binomial test at 1/2 of min(b, c) against b + c (stats.mcnemar_exact)."""
    p = np.minimum(1.0, 2 * sps.binom.cdf(k_small, total, 0.5))
    return np.where(2 * k_small >= total, 1.0, p)


def _midranks2(counts: np.ndarray) -> np.ndarray:
    """Doubled mid-ranks of the magnitudes 1..L given their counts (..., L): 2·(before) + count + 1."""
    before = np.cumsum(counts, axis=-1) - counts
    return 2 * before + counts + 1


_WILCOXON_NULL: dict[tuple[int, ...], np.ndarray] = {}


def _wilcoxon_null(counts: tuple[int, ...]) -> np.ndarray:
    """Cumulative number of sign patterns per doubled positive rank sum, for these tie groups."""
    got = _WILCOXON_NULL.get(counts)
    if got is None:
        r2 = _midranks2(np.asarray(counts))
        total2 = int(np.dot(r2, counts))
        ways = np.zeros(total2 + 1, dtype=np.int64)
        ways[0] = 1
        for r, c in zip(r2.tolist(), counts):
            for _ in range(c):  # each rank joins the positive sum or not (the right side is computed first)
                ways[r:] = ways[r:] + ways[:-r]
        got = _WILCOXON_NULL[counts] = np.cumsum(ways)
    return got


def wilcoxon_p(diff_units: np.ndarray, max_units: int) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Wilcoxon signed-rank p per row of integer differences (see wilcoxon_p_counts)."""
    return wilcoxon_p_counts(*_counts_of_diffs(diff_units, max_units))


def wilcoxon_p_counts(counts: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Wilcoxon signed-rank p per simulation from its differences' magnitude counts (sims, L) and
    the positive ones among them, as stats.paired_graded computes it (exact up to stats.WILCOXON_EXACT_MAX
    non-zero differences, else normal with the tie correction); also whether each p was exact."""
    r2 = _midranks2(counts)
    w2 = (pos * r2).sum(axis=1)
    total2 = (counts * r2).sum(axis=1)
    m = counts.sum(axis=1)
    ties = (counts**3 - counts).sum(axis=1)
    var = (m * (m + 1) * (2 * m + 1) / 24 - ties / 48) * 4
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, (w2 - total2 / 2) / np.sqrt(np.where(var > 0, var, 1)), 0.0)
    p = np.minimum(1.0, special.erfc(np.abs(z) / math.sqrt(2)))
    exact = (m <= stats.WILCOXON_EXACT_MAX) & (m > 0)
    for i in np.flatnonzero(exact):
        cum = _wilcoxon_null(tuple(int(c) for c in counts[i]))
        low = min(int(w2[i]), int(total2[i] - w2[i]))
        p[i] = min(1.0, 2 * int(cum[low]) / 2 ** int(m[i]))
    p[m == 0] = 1.0
    return p, exact


def _fft_size_at_least(k: int) -> int:
    """The smallest odd 3^a·5^b·7^c >= k (odd: no factor of the characteristic function is 0; smooth: a
    fast FFT)."""
    best = None
    p3 = 1
    while p3 < 3 * k:
        p5 = p3
        while p5 < 3 * k:
            p7 = p5
            while p7 < k:
                p7 *= 7
            if best is None or p7 < best:
                best = p7
            p5 *= 5
        p3 *= 3
    return max(1, int(best or 1))


#: half-width of the window of the sign-flip null distribution, in standard deviations (beyond: < 1e-31)
WINDOW_SD = 12


def signflip_p(diff_units: np.ndarray, max_units: int, chunk_elems: int = 4_000_000) -> np.ndarray:
    """Two-sided sign-flip permutation p per row of integer differences (see signflip_p_counts)."""
    counts, pos = _counts_of_diffs(diff_units, max_units)
    return signflip_p_counts(counts, pos @ np.arange(1, max_units + 1), chunk_elems)


def signflip_p_counts(counts: np.ndarray, pos_sum: np.ndarray, chunk_elems: int = 4_000_000) -> np.ndarray:
    """Two-sided sign-flip permutation p per simulation: the exact share of the 2^m sign vectors of its m
    non-zero differences with |Σ s·d| ≥ |Σ d| (what stats.sign_flip_test counts up to SIGN_FLIP_EXACT_MAX
    differences and estimates by random vectors above), from the counts c_k of differences of magnitude
    k = 1..L (sims, L) and the sum of the positive differences.

    The positive part P = Σ_k k·X_k, X_k ~ Binomial(c_k, 1/2), and Σ s·d = 2P − T (T = Σ_k k·c_k). P's
    distribution is the inverse FFT of Π_k ((1 + ω^k)/2)^{c_k} over N points (N odd, so no factor is 0),
    which gives P(P ≡ r mod N). With N > T nothing wraps round. Otherwise the window of N values centred on
    T/2 holds all but Hoeffding's 2·exp(−h²/(2σ²)) of the mass (h: the window's half-width, σ² = Σ_k k²c_k/4
    P's variance), which is below 1e-31 with h ≥ WINDOW_SD·σ: the residues are then the probabilities of the
    values in the window. The distribution is symmetric, so p = min(1, 2·P(P ≤ min(P_obs, T − P_obs)))."""
    mags = np.arange(1, counts.shape[1] + 1)
    total = counts @ mags
    low = np.minimum(pos_sum, total - pos_sum)
    p = np.ones(len(counts))
    todo = np.flatnonzero(2 * low < total)
    if not len(todo):
        return p
    sd = np.sqrt(counts[todo] @ (mags**2)) / 2
    need = np.minimum(total[todo] + 1, 2 * np.ceil(WINDOW_SD * sd + 2).astype(np.int64) + 1)
    size = _fft_size_at_least(int(need.max()))
    phase = -2j * np.pi * np.arange(size) / size
    logs = np.log((1 + np.exp(mags[:, None] * phase[None, :])) / 2)  # (L, N), finite as N is odd
    step = max(1, chunk_elems // size)
    offsets = np.arange(size)
    for s0 in range(0, len(todo), step):
        rows = todo[s0:s0 + step]
        pmf = np.fft.ifft(np.exp(counts[rows].astype(float) @ logs), axis=1).real
        start = np.where(total[rows] + 1 <= size, 0, total[rows] // 2 - (size - 1) // 2)
        window = np.take_along_axis(pmf, (start[:, None] + offsets[None, :]) % size, axis=1)
        cdf = np.cumsum(window, axis=1)
        at = low[rows] - start
        got = np.where(at >= 0, cdf[np.arange(len(rows)), np.clip(at, 0, size - 1)], 0.0)
        p[rows] = np.minimum(1.0, 2 * got)
    return p


# --------------------------------------------------------------------------------------------------
# Vectorised restatements of the intervals
# --------------------------------------------------------------------------------------------------


def wilson(k: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """stats.wilson_interval over arrays of k (same n)."""
    z = stats.Z95
    p = k / n
    denom = 1 + z * z / n
    centre = p + z * z / (2 * n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    lo = np.where(k == 0, 0.0, np.maximum(0.0, (centre - half) / denom))
    hi = np.where(k == n, 1.0, np.minimum(1.0, (centre + half) / denom))
    return lo, hi


def _t_interval(mean: np.ndarray, resid_sq: np.ndarray, g: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    se = np.sqrt(g / (g - 1) * resid_sq) / n
    half = float(special.stdtrit(g - 1, (1 + LEVEL) / 2)) * se
    return mean - half, mean + half


def clustered_t(totals: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """clustered.clustered_interval from per-cluster score totals (sims, G) and sizes (G)."""
    n = sizes.sum()
    mean = totals.sum(axis=1) / n
    resid = totals - sizes * mean[:, None]
    return _t_interval(mean, (resid**2).sum(axis=1), totals.shape[1], n)


def clustered_t_levels(level_counts: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """clustered.clustered_interval when every cluster has `size` scores and its total is one of `values`:
    level_counts (sims, L) counts the clusters per total (the pooled design: items of `size` repeats)."""
    g = int(level_counts[0].sum())
    n = g * size
    mean = (level_counts @ values) / n
    resid_sq = (level_counts * (values[None, :] - size * mean[:, None]) ** 2).sum(axis=1)
    return _t_interval(mean, resid_sq, g, n)


def _quantile_linear(sorted_x: np.ndarray, q: float) -> np.ndarray:
    pos = (sorted_x.shape[1] - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, sorted_x.shape[1] - 1)
    return sorted_x[:, lo] + (sorted_x[:, hi] - sorted_x[:, lo]) * (pos - lo)


def bootstrap(units: np.ndarray, steps: int, rng: np.random.Generator, n_boot: int = N_BOOT) -> tuple[np.ndarray, np.ndarray]:
    """stats.bootstrap_mean_interval's percentile interval of rows of item units (see bootstrap_counts)."""
    counts = (units[..., None] == np.arange(steps + 1)).sum(axis=1)
    return bootstrap_counts(counts, steps, rng, n_boot)


def bootstrap_counts(counts: np.ndarray, steps: int, rng: np.random.Generator,
                     n_boot: int = N_BOOT) -> tuple[np.ndarray, np.ndarray]:
    """stats.bootstrap_mean_interval's percentile interval from the items' counts per score level (sims, L).
    Resampling n items with replacement draws the counts of each score level from Multinomial(n, observed
    shares); they are drawn level by level as conditional binomials, which gives the same distribution of
    the resampled mean at a fraction of the cost."""
    sims = counts.shape[0]
    n = int(counts[0].sum())
    levels = np.arange(steps + 1)
    left = np.full((sims, n_boot), n, dtype=np.int64)
    mass = np.ones(sims)
    total = np.zeros((sims, n_boot))
    for lv in levels[:-1]:
        share = counts[:, lv] / n
        with np.errstate(divide="ignore", invalid="ignore"):
            cond = np.where(mass > 1e-12, np.clip(share / mass, 0, 1), 0.0)
        got = rng.binomial(left, cond[:, None])
        total += got * lv
        left -= got
        mass = mass - share
    total += left * steps
    means = np.sort(total / (n * steps), axis=1)
    tail = (1 - LEVEL) / 2
    return _quantile_linear(means, tail), _quantile_linear(means, 1 - tail)


# --------------------------------------------------------------------------------------------------
# One cell
# --------------------------------------------------------------------------------------------------


def _count(res: Result, key: str, value: int, table: str) -> None:
    d = res.rejections if table == "rej" else res.covered
    d[key] = d.get(key, 0) + int(value)


def _check_against_reports(cell: Cell, chunk: Chunk, got: dict[str, Any]) -> None:
    """The vectorised values equal the reports' own functions on the first CHECK_SIMS simulations (the
    Monte-Carlo sign-flip test on the first CHECK_SIMS_MONTE_CARLO: it costs seconds at n = 10,000)."""
    scale = cell.steps * cell.repeats
    g = cell.clusters
    for i in range(min(CHECK_SIMS, chunk.tables.shape[0])):
        if chunk.a is not None and chunk.b is not None:
            a, b = chunk.a[i], chunk.b[i]
        else:
            a, b = items_of(chunk.tables[i])
        codes = np.arange(len(a)) % g
        if "mcnemar" in got:
            bb, cc = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
            _same(cell, "mcnemar", got["mcnemar"][i], stats.mcnemar_exact(bb, cc))
        if "wilcoxon" in got:
            # the tests are scale-free: integer units keep the ties exact (thirds are not exact floats)
            pg = stats.paired_graded([float(v) for v in a], [float(v) for v in b], n_boot=1)
            _same(cell, "wilcoxon", got["wilcoxon"][i], pg.wilcoxon_p)
            _same(cell, "sign", got["sign"][i], pg.sign_p)
        nonzero = int((a != b).sum())
        if "signflip" in got and (nonzero <= stats.SIGN_FLIP_EXACT_MAX or i < CHECK_SIMS_MONTE_CARLO):
            _same_signflip(cell, got["signflip"][i], stats.sign_flip_test([float(v) for v in a - b]))
        if "wilson" in got:
            lo, hi = stats.wilson_interval(int(a.sum()), cell.n)  # type: ignore[misc]
            _same(cell, "wilson", got["wilson"][0][i], lo)
            _same(cell, "wilson", got["wilson"][1][i], hi)
        if "clustered_t" in got:
            obs = np.repeat(a / scale, cell.repeats) if cell.design == "pooled" else a / scale
            labels = np.repeat(np.arange(cell.n), cell.repeats) if cell.design == "pooled" else codes
            ci = clustered.clustered_interval(list(obs), list(labels))
            _same(cell, "clustered_t", got["clustered_t"][0][i], ci.lo)
            _same(cell, "clustered_t", got["clustered_t"][1][i], ci.hi)


def _same_signflip(cell: Cell, exact_p: float, reports: stats.SignFlip) -> None:
    """Up to stats.SIGN_FLIP_EXACT_MAX non-zero differences the reports count every sign vector: the same p.
    Above they estimate it from random vectors: within four Monte-Carlo standard errors (plus the 1/(B + 1)
    of Phipson and Smyth's p)."""
    if reports.exact:
        _same(cell, "sign-flip", exact_p, reports.p)
        return
    b = reports.n_resamples
    tol = 4 * math.sqrt(max(exact_p * (1 - exact_p), 1 / b) / b) + 2 / (b + 1)
    if abs(reports.p - exact_p) > tol:
        raise AssertionError(f"calibration {cell}: exact sign-flip p {exact_p} is not within {tol:.4f} of the "
                             f"reports' Monte-Carlo estimate {reports.p}")


def _same(cell: Cell, what: str, vectorised: float, reports: float | None) -> None:
    if reports is None or not math.isclose(float(vectorised), reports, rel_tol=1e-7, abs_tol=1e-12):
        raise AssertionError(f"calibration {cell}: vectorised {what} {vectorised} differs from the reports' {reports}")


def evaluate(cell: Cell, chunk: Chunk, rng: np.random.Generator) -> dict[str, Any]:
    """Every test's p (sims) and every interval's (lo, hi) of one batch, from its count tables."""
    tables = chunk.tables
    units = cell.steps * cell.repeats
    got: dict[str, Any] = {}
    if cell.kind == "binary" and cell.repeats == 1:
        bb, cc = tables[:, 1, 0], tables[:, 0, 1]
        got["mcnemar"] = binomial_half_p(np.minimum(bb, cc), bb + cc)
    else:
        counts, pos = difference_counts(tables)
        better, worse = pos.sum(axis=1), (counts - pos).sum(axis=1)
        got["sign"] = binomial_half_p(np.minimum(better, worse), better + worse)
        got["wilcoxon"], got["_exact"] = wilcoxon_p_counts(counts, pos)
        got["signflip"] = signflip_p_counts(counts, pos @ np.arange(1, units + 1))
    a_levels = tables.sum(axis=2)  # (sims, units + 1): items per A's units
    a_sum = a_levels @ np.arange(units + 1)
    if cell.kind == "binary" and cell.design != "pooled":
        # clustered design: the naive Wilson interval, ignoring the clusters, for contrast
        got["wilson" if cell.design == "independent" else "wilson_naive"] = wilson(a_sum, cell.n)
    if cell.kind == "binary" and cell.design == "pooled":
        got["wilson_naive"] = wilson(a_sum, cell.n * cell.repeats)
    if cell.kind == "graded" and cell.design == "independent":
        got["bootstrap"] = bootstrap_counts(a_levels, cell.steps, rng)
    if cell.design == "pooled":
        got["clustered_t"] = clustered_t_levels(a_levels, np.arange(units + 1) / cell.steps, cell.repeats)
    if cell.design == "clustered":
        assert chunk.cluster_totals is not None
        g = cell.clusters
        got["clustered_t"] = clustered_t(chunk.cluster_totals, np.bincount(np.arange(cell.n) % g, minlength=g))
    return got


def run_cell(cell: Cell, sims: int, chunk_elems: int = 2_000_000) -> Result:
    """Simulate `sims` null comparisons of one cell (deterministic: the seed comes from the cell)."""
    rng = np.random.default_rng(cell.seed)
    res = Result(cell)
    scale = cell.steps * cell.repeats
    per_sim = cell.n * scale if cell.design == "clustered" else (scale + 1) ** 2
    chunk_size = max(1, min(chunk_elems // per_sim, chunk_elems // N_BOOT))
    done = 0
    while done < sims:
        k = min(chunk_size, sims - done)
        chunk = draw_chunk(cell, rng, k)
        got = evaluate(cell, chunk, rng)
        if done == 0:
            _check_against_reports(cell, chunk, got)
        res.wilcoxon_exact += int(got.pop("_exact", np.zeros(0)).sum())
        for name, v in got.items():
            if name in TESTS:
                _count(res, name, (v < ALPHA).sum(), "rej")
            else:
                lo, hi = v
                _count(res, name, ((lo <= cell.rate) & (cell.rate <= hi)).sum(), "cov")
        done += k
    res.sims = sims
    return res


# --------------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------------


def _fmt(res: Result, name: str) -> str:
    r = res.rate(name)
    if r is None:
        return "–"
    text = f"{100 * r:.1f}"
    if not res.claimed(name):
        return f"{text} †"
    return f"**{100 * r:.2f}** ✗" if res.passes(name) is False else text  # two decimals: 93.97 is not 94.0


def markdown(results: Iterable[Result], grid: str, sims: int, seconds: float) -> str:
    results = list(results)
    failing = [(r.cell, n) for r in results for n in (*TESTS, *INTERVALS) if r.claimed(n) and r.passes(n) is False]
    lines = [
        f"Measured by `python -m agenthop.reports.calibration --grid {grid} --sims {sims}` "
        f"(grid {grid}: {len(results)} cells, {sims:,} null comparisons each, every cell seeded by the CRC-32 of its "
        f"n, rate, scores and design, so the table is the same on every run; {seconds / 60:.1f} min of CPU). "
        "Type-I error of the "
        "paired tests at α = 0.05 and coverage of the 95% intervals, in %. G: clusters (items when each is its "
        "own). ✗: misses its criterion (type-I error ≤ 6% for the exact tests: McNemar, sign, the sign-flip "
        "permutation test and Wilcoxon up to 50 differences; 5% ± 1% for the Wilcoxon normal "
        "approximation; coverage ≥ 94%); †: outside the range where the clustered t interval is claimed to cover "
        f"(G·min(p, 1 − p) < {MIN_CLUSTER_EVENTS}); Wilson ignoring clusters has no criterion: it shows what "
        "ignoring the clusters costs.",
        "",
        "| n | rate | scores | design | G | " + " | ".join(HEADERS[n] for n in (*TESTS, *INTERVALS)) + " |",
        "|---:|---:|---|---|---:|" + "---:|" * (len(TESTS) + len(INTERVALS)),
    ]
    for r in results:
        c = r.cell
        lines.append(f"| {c.n:,} | {c.rate:g} | {c.kind} | {c.design} | {c.clusters:,} | "
                     + " | ".join(_fmt(r, n) for n in (*TESTS, *INTERVALS)) + " |")
    lines.append("")
    lines.append(f"Cells missing a criterion: {len(failing)}" + (
        ": " + "; ".join(f"{HEADERS[n]} at n = {c.n}, rate {c.rate:g}, {c.kind}, {c.design}" for c, n in failing)
        if failing else "."))
    return "\n".join(lines)


def write_between_markers(path: Path, table: str) -> None:
    text = path.read_text()
    if START not in text or END not in text:
        raise click.ClickException(f"{path}: no '{START}' ... '{END}' markers to write the table between")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{START}\n{table}\n{END}{tail}")


def to_json(results: Sequence[Result]) -> list[dict]:
    return [{"cell": [r.cell.n, r.cell.rate, r.cell.kind, r.cell.design], "sims": r.sims, "rejections": r.rejections,
             "covered": r.covered, "wilcoxon_exact": r.wilcoxon_exact} for r in results]


def from_json(rows: Sequence[dict]) -> list[Result]:
    return [Result(Cell(*r["cell"]), r["sims"], r["rejections"], r["covered"], r["wilcoxon_exact"]) for r in rows]


def run_grid(grid: str, sims: int) -> list[Result]:
    return [run_cell(c, sims) for c in cells(grid)]


@click.command()
@click.option("--grid", type=click.Choice(sorted(GRIDS)), default="reduced", show_default=True)
@click.option("--sims", type=click.IntRange(min=100), default=10_000, show_default=True,
              help="Null comparisons per cell.")
@click.option("--write", "write_to", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
              help="Markdown file to write the table into, between the calibration markers.")
@click.option("--save", "save_to", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Also save the raw counts as JSON (the table can be written again from them with --load).")
@click.option("--load", "load_from", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
              help="Write the table from counts saved by --save instead of simulating.")
def main(grid: str, sims: int, write_to: Path | None, save_to: Path | None, load_from: Path | None) -> None:
    """Simulate null comparisons over a grid and print (or write) the calibration table."""
    if load_from is not None:
        saved = json.loads(load_from.read_text())
        grid, sims, seconds, results = saved["grid"], saved["sims"], saved["cpu_seconds"], from_json(saved["results"])
    else:
        t0 = time.process_time()
        results = []
        for c in cells(grid):
            results.append(run_cell(c, sims))
            click.echo(f"{c} done", err=True)
        seconds = time.process_time() - t0
        if save_to is not None:
            save_to.write_text(json.dumps({"grid": grid, "sims": sims, "cpu_seconds": seconds,
                                           "results": to_json(results)}))
    table = markdown(results, grid, sims, seconds)
    if write_to is None:
        click.echo(table)
    else:
        write_between_markers(write_to, table)
        click.echo(f"wrote the calibration table into {write_to}")


if __name__ == "__main__":
    main()
