"""Every statistic the reports print, as pure functions (docs/reports.md#statistics).

Nothing here touches the warehouse; callers pass counts or matrices that DuckDB has aggregated.
scipy is the only dependency. Undefined results are ``None`` (never NaN), so templates can print
"n/a" and tests can compare exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


#: z of the two-sided 95% normal interval used for Wilson intervals (docs/metrics.md#wilson).
Z95 = 1.959964

#: Number of ordered pairs of the seven tools: the Bonferroni family of bigram effects (docs/reports.md#bigram-tests).
BIGRAM_FAMILY = 49


# --------------------------------------------------------------------------------------------------
# Proportions
# --------------------------------------------------------------------------------------------------


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval of k successes in n trials; None when n == 0.

    lo/hi = (p + z²/2n ∓ z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n), clipped to [0, 1].
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"wilson_interval: need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return None
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = p + z2 / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    lo = max(0.0, (centre - half) / denom)
    hi = min(1.0, (centre + half) / denom)
    if k == 0:
        lo = 0.0
    if k == n:
        hi = 1.0
    return lo, hi


def format_acc_pm(k: int, n: int, z: float = Z95) -> str:
    """The paper's "acc ± (hi − acc)" in percent with one decimal, e.g. 85/90 -> "94.4 ± 3.2"."""
    ci = wilson_interval(k, n, z)
    if ci is None:
        return "n/a"
    acc = k / n
    return f"{100 * acc:.1f} ± {100 * (ci[1] - acc):.1f}"


#: What the "±" of format_acc_pm is, for every label of it: not a half-width (docs/metrics.md#wilson).
ACC_PM_MEANING = "± distance to the Wilson 95% upper bound, as in the AgentHop paper"
#: The same label on the shared pages (every benchmark's runs), where the AgentHop paper is not the reference.
ACC_PM_MEANING_SHARED = "± distance to the Wilson 95% upper bound"


def wilson_text(k: int, n: int, z: float = Z95) -> str:
    """The full Wilson 95% interval in percent with one decimal, e.g. 90/90 -> "[95.9, 100.0]"; "n/a" when n == 0."""
    ci = wilson_interval(k, n, z)
    return "n/a" if ci is None else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def acc_pm_lopsided(k: int, n: int, z: float = Z95) -> bool:
    """Whether "acc ± (hi − acc)" misleads about the interval: one side of it is less than half the other.

    Always at 0/n and n/n ("100.0 ± 0.0" for an interval reaching down to 95.9 at 90/90); also near the
    edges, e.g. 85/90 (94.4 − 6.8 / + 3.2). False when n == 0.
    """
    ci = wilson_interval(k, n, z)
    if ci is None:
        return False
    below, above = k / n - ci[0], ci[1] - k / n
    return min(below, above) < 0.5 * max(below, above)


# --------------------------------------------------------------------------------------------------
# Paired comparisons: exact McNemar and its minimum detectable effect
# --------------------------------------------------------------------------------------------------


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p on discordant pairs b (A right, B wrong) and c (A wrong, B right).

    binomtest(b, b + c, 0.5); with no discordant pairs there is no evidence of a difference: p = 1.
    """
    if b < 0 or c < 0:
        raise ValueError(f"mcnemar_exact: discordant counts must be >= 0, got b={b}, c={c}")
    if b + c == 0:
        return 1.0
    return _binomial_half_two_sided(min(b, c), b + c)


@lru_cache(maxsize=65536)
def _binomial_half_two_sided(k: int, n: int) -> float:
    """scipy.stats.binomtest(k, n, 0.5).pvalue in exact integer arithmetic (no scipy import on the
    report's path): the distribution is symmetric, so p = min(1, 2·P(X <= k)) for k < n/2."""
    if 2 * k >= n:
        return 1.0
    term, total = 1, 1  # C(n, 0); each next term from the last: C(n, i+1) = C(n, i)·(n−i)/(i+1), exact
    for i in range(k):
        term = term * (n - i) // (i + 1)
        total += term
    return min(1.0, 2 * total / 2**n)


def format_p(p: float | None) -> str:
    """A p-value with three significant digits; below 0.001 as "<0.001".

    0.27 -> "0.270", 0.048 -> "0.0480", 0.00349 -> "0.00349", 1.0 -> "1.00", 0.0004 -> "<0.001".
    """
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "n/a"
    if p < 0.001:
        return "<0.001"
    text = f"{p:.3g}"
    if "e" in text:  # not reached for p >= 0.001, kept for safety
        text = f"{p:.6f}"
    digits = text.replace(".", "").lstrip("0")
    if len(digits) < 3:  # keep trailing zeros: 0.27 -> 0.270, 1 -> 1.00
        text += ("" if "." in text else ".") + "0" * (3 - len(digits))
    return text


def significant(p: float | None, alpha: float = 0.05) -> bool:
    """Whether p counts as below alpha, decided on the printed value so the badge agrees with it."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return False
    printed = format_p(p)
    return printed == "<0.001" or float(printed) < alpha


@lru_cache(maxsize=4096)
def min_detectable_imbalance(n_discordant: int, alpha: float = 0.05) -> int | None:
    """Smallest |b − c| with b + c = n_discordant whose exact McNemar p is below alpha.

    None when even a one-sided split (b = d, c = 0) does not reach alpha (d <= 5 at 0.05).
    """
    d = n_discordant
    if d <= 0:
        return None
    # b - c has the parity of d; walk the imbalance up from the smallest value of that parity.
    for imbalance in range(d % 2, d + 1, 2):
        b = (d + imbalance) // 2
        if mcnemar_exact(b, d - b) < alpha:
            return imbalance
    return None


def min_detectable_effect(n: int, n_discordant: int, alpha: float = 0.05) -> float | None:
    """Minimum detectable effect (fraction) of a paired comparison of n items with d discordant pairs.

    The accuracy difference of two runs on the same n items is (b − c) / n. Holding the number of
    discordant pairs d = b + c fixed at the observed value, the MDE is the smallest |b − c| / n for
    which the exact McNemar test gives p < alpha. None when n == 0 or when no split of d pairs can
    reach alpha (fewer than six discordant pairs at alpha = 0.05).
    """
    if n <= 0:
        return None
    if n_discordant > n:
        raise ValueError(f"min_detectable_effect: {n_discordant} discordant pairs among {n} items")
    imbalance = min_detectable_imbalance(n_discordant, alpha)
    return None if imbalance is None else imbalance / n


@dataclass(frozen=True)
class PairedTest:
    """Result of an exact McNemar comparison of two runs on a shared item set."""

    n: int  # shared items in scope
    a_only: int  # b: A right, B wrong
    b_only: int  # c: A wrong, B right
    p: float
    mde: float | None  # fraction, see min_detectable_effect

    @property
    def diff(self) -> float | None:
        """(b − c) / n, the accuracy difference A − B on this item set."""
        return None if self.n == 0 else (self.a_only - self.b_only) / self.n


def paired_test(a: Sequence[bool], b: Sequence[bool], alpha: float = 0.05) -> PairedTest:
    """Exact McNemar on two aligned correctness vectors (same items, same order)."""
    if len(a) != len(b):
        raise ValueError(f"paired_test: vectors of different length {len(a)} and {len(b)}")
    a_only = sum(1 for x, y in zip(a, b) if x and not y)
    b_only = sum(1 for x, y in zip(a, b) if y and not x)
    return paired_test_from_counts(len(a), a_only, b_only, alpha)


def paired_test_from_counts(n: int, a_only: int, b_only: int, alpha: float = 0.05) -> PairedTest:
    """Exact McNemar from n and discordant counts."""
    return PairedTest(
        n=n,
        a_only=a_only,
        b_only=b_only,
        p=mcnemar_exact(a_only, b_only),
        mde=min_detectable_effect(n, a_only + b_only, alpha),
    )


# --------------------------------------------------------------------------------------------------
# Bigram effects: Fisher exact with Bonferroni over the 49 ordered tool pairs
# --------------------------------------------------------------------------------------------------


def fisher_p(correct_with: int, n_with: int, correct_without: int, n_without: int) -> float:
    """Two-sided Fisher exact p of the 2x2 table (with/without bigram) x (correct/wrong).

    The p-value scipy.stats.fisher_exact returns (tested against it): with the margins fixed, the
    hypergeometric probability of every table at most as likely as the observed one (relative tolerance
    1e-7 for ties), summed, from log-gamma (a panel report runs thousands of these tests). An empty row
    or column makes the table degenerate (no comparison possible): p = 1.
    """
    for name, k, n in (("with", correct_with, n_with), ("without", correct_without, n_without)):
        if n < 0 or k < 0 or k > n:
            raise ValueError(f"fisher_p: need 0 <= correct_{name} <= n_{name}, got {k}/{n}")
    total_correct = correct_with + correct_without
    if n_with == 0 or n_without == 0 or total_correct == 0 or total_correct == n_with + n_without:
        return 1.0
    return _fisher_two_sided(correct_with, n_with, n_without, total_correct)


@lru_cache(maxsize=8)
def _log_factorials(size: int) -> Any:
    """log(k!) for k = 0 .. size as a numpy array (cumulated logs; size is a power of two, so few tables)."""
    import numpy as np

    return np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, size + 1, dtype=np.float64)))))


@lru_cache(maxsize=65536)
def _fisher_two_sided(x: int, n1: int, n2: int, k: int) -> float:
    """What scipy.stats.fisher_exact returns: with the margins fixed, the hypergeometric probability of
    every table at most as likely as the observed one (relative tolerance 1e-7), summed. Vectorised over
    the support with numpy (a panel report runs thousands of these on ~1,000-item tables)."""
    import numpy as np

    lf = _log_factorials(1 << max(4, (n1 + n2).bit_length()))
    lo, hi = max(0, k - n2), min(k, n1)
    y = np.arange(lo, hi + 1)
    logp = lf[n1] - lf[y] - lf[n1 - y] + lf[n2] - lf[k - y] - lf[n2 - k + y]
    probs = np.exp(logp - logp.max())
    observed = probs[x - lo]
    return min(1.0, float(probs[probs <= observed * (1 + 1e-7)].sum() / probs.sum()))


def bonferroni(p: float, m: int = BIGRAM_FAMILY) -> float:
    """Bonferroni-adjusted p: min(1, p·m)."""
    if m < 1:
        raise ValueError(f"bonferroni: family size must be >= 1, got {m}")
    return min(1.0, p * m)


# --------------------------------------------------------------------------------------------------
# Reliability across a panel: Cronbach's alpha and corrected item-total correlations
# --------------------------------------------------------------------------------------------------


def _var(xs: Sequence[float]) -> float:
    """Sample variance (ddof = 1); caller guarantees len >= 2."""
    m = sum(xs) / len(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def _check_matrix(matrix: Sequence[Sequence[float]]) -> tuple[int, int]:
    n_rows = len(matrix)
    n_cols = len(matrix[0]) if n_rows else 0
    for i, row in enumerate(matrix):
        if len(row) != n_cols:
            raise ValueError(f"matrix row {i} has {len(row)} columns, expected {n_cols}")
    return n_rows, n_cols


def cronbach_alpha(matrix: Sequence[Sequence[float]]) -> float | None:
    """Cronbach's alpha of a models x items matrix (rows = models, columns = items; 1 = correct).

    alpha = k/(k−1) · (1 − Σ_j var(item_j) / var(total)), variances with ddof = 1 across models,
    total = row sum. The caller passes only items every model answered (listwise deletion).
    None when there are fewer than 2 models or 2 items, or when the totals do not vary.
    """
    n_models, k = _check_matrix(matrix)
    if n_models < 2 or k < 2:
        return None
    totals = [float(sum(row)) for row in matrix]
    var_total = _var(totals)
    if var_total == 0:
        return None
    sum_item_var = sum(_var([float(row[j]) for row in matrix]) for j in range(k))
    return k / (k - 1) * (1 - sum_item_var / var_total)


def _pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    mx = sum(x) / len(x)
    my = sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def corrected_item_total(matrix: Sequence[Sequence[float]]) -> list[float | None]:
    """Per item, Pearson correlation across models of the item with the total of the OTHER items.

    None for an item that does not vary across models (all right or all wrong), when the rest
    total does not vary, or when there are fewer than 3 models.
    """
    n_models, k = _check_matrix(matrix)
    if n_models < 3 or k < 2:
        return [None] * k
    totals = [float(sum(row)) for row in matrix]
    out: list[float | None] = []
    for j in range(k):
        item = [float(row[j]) for row in matrix]
        rest = [t - v for t, v in zip(totals, item)]
        out.append(_pearson(item, rest))
    return out


# --------------------------------------------------------------------------------------------------
# Reruns: noise floor
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoiseFloor:
    """How much two reruns of one configuration differ by chance alone."""

    n_items: int
    n_runs: int
    sd_run: float  # SD of one run's accuracy (fraction) from per-item instability
    sd_diff: float  # SD of the accuracy difference of two independent reruns
    floor: float  # 1.959964 · sd_diff: |Δacc| below this is within rerun noise (fraction)
    unstable_items: int  # items whose correctness differs across replicates


def noise_floor(n_correct: Sequence[int], n_runs: int) -> NoiseFloor | None:
    """Noise floor of accuracy from a per-item count of correct replicates.

    Each item i is right with probability p_i, estimated without bias by
    p_i(1−p_i)·m/(m−1) with p_i = n_correct_i / m over m replicates. A run's accuracy then has
    variance Σ_i var_i / N², two independent reruns differ with variance twice that, and the floor
    is the 95% half-width z·sqrt(2·Σ var_i)/N. None with fewer than 2 replicates or no items.
    """
    m = n_runs
    n = len(n_correct)
    if m < 2 or n == 0:
        return None
    total_var = 0.0
    unstable = 0
    for k in n_correct:
        if k < 0 or k > m:
            raise ValueError(f"noise_floor: n_correct {k} outside 0..{m}")
        p = k / m
        total_var += p * (1 - p) * m / (m - 1)
        if 0 < k < m:
            unstable += 1
    sd_run = math.sqrt(total_var) / n
    sd_diff = math.sqrt(2.0) * sd_run
    return NoiseFloor(n, m, sd_run, sd_diff, Z95 * sd_diff, unstable)


def std_pop(xs: Sequence[float]) -> float | None:
    """Standard deviation with ddof = 0 (docs/metrics.md#reruns); None for no values."""
    if not xs:
        return None
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


# --------------------------------------------------------------------------------------------------
# Accuracy difference: recall-driven vs conversion-driven
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunRates:
    """The three rates behind acc = recall·conv + (1 − recall)·acc_norecall for one run."""

    n: int
    recalled: int  # items with paper recall r_i = 1
    correct_recalled: int
    correct_unrecalled: int

    @property
    def accuracy(self) -> float | None:
        return None if self.n == 0 else (self.correct_recalled + self.correct_unrecalled) / self.n

    @property
    def recall(self) -> float | None:
        return None if self.n == 0 else self.recalled / self.n

    @property
    def conversion(self) -> float | None:
        return None if self.recalled == 0 else self.correct_recalled / self.recalled

    @property
    def acc_norecall(self) -> float | None:
        unrec = self.n - self.recalled
        return None if unrec == 0 else self.correct_unrecalled / unrec


@dataclass(frozen=True)
class Decomposition:
    """Δacc = recall_driven + conversion_driven + norecall_driven, exactly (fractions, A − B)."""

    delta_acc: float
    delta_recall: float
    delta_conversion: float
    delta_acc_norecall: float
    recall_driven: float  # Δrecall · (conv_avg − acc_norecall_avg)
    conversion_driven: float  # recall_avg · Δconv
    norecall_driven: float  # (1 − recall_avg) · Δacc_norecall


def decompose_accuracy(a: RunRates, b: RunRates) -> Decomposition | None:
    """Split acc(A) − acc(B) into a recall-driven and a conversion-driven part.

    Per run acc = G + R·(C − G) with R = paper recall, C = conversion (accuracy given recall) and
    G = accuracy without recall. With Δx = x_A − x_B and x̄ = (x_A + x_B)/2 the symmetric
    (Shapley) split is exact:

        Δacc = ΔR·(C̄ − Ḡ)  +  R̄·ΔC  +  (1 − R̄)·ΔG
               recall-driven  conversion-driven  no-recall (guessing) part

    The recall-driven part is what the extra recalled items are worth: each converts at C instead
    of being answered at the no-evidence rate G. A rate that is undefined in one run (C when a run
    recalled nothing, G when it recalled everything) has weight 0 in that run's identity, so it
    takes the other run's value (0 when undefined in both); the identity stays exact.
    None when either run has no items.
    """
    if a.n == 0 or b.n == 0:
        return None
    ra, rb = a.recall, b.recall
    assert ra is not None and rb is not None

    def pair(x: float | None, y: float | None) -> tuple[float, float]:
        if x is None and y is None:
            return 0.0, 0.0
        if x is None:
            return float(y), float(y)  # type: ignore[arg-type]
        if y is None:
            return x, x
        return x, y

    ca, cb = pair(a.conversion, b.conversion)
    ga, gb = pair(a.acc_norecall, b.acc_norecall)
    r_avg, c_avg, g_avg = (ra + rb) / 2, (ca + cb) / 2, (ga + gb) / 2
    d_r, d_c, d_g = ra - rb, ca - cb, ga - gb
    acc_a, acc_b = a.accuracy, b.accuracy
    assert acc_a is not None and acc_b is not None
    return Decomposition(
        delta_acc=acc_a - acc_b,
        delta_recall=d_r,
        delta_conversion=d_c,
        delta_acc_norecall=d_g,
        recall_driven=d_r * (c_avg - g_avg),
        conversion_driven=r_avg * d_c,
        norecall_driven=(1 - r_avg) * d_g,
    )


def cronbach_alpha_ci(alpha: float | None, n_subjects: int, k_items: int, level: float = 0.95) -> tuple[float, float] | None:
    """Feldt confidence interval of Cronbach's alpha: 1 − (1 − α)·F⁻¹(q; n−1, (n−1)(k−1)).

    n_subjects = rows of the matrix (models), k_items = columns; lower bound with q = 1 − a/2,
    upper with q = a/2. None when alpha is None or the degrees of freedom are not positive. The F
    quantile is scipy.special.fdtri (what scipy.stats.f.ppf computes, without importing scipy.stats).
    """
    from scipy.special import fdtri

    if alpha is None or n_subjects < 2 or k_items < 2:
        return None
    a = 1 - level
    df1, df2 = n_subjects - 1, (n_subjects - 1) * (k_items - 1)
    lo = 1 - (1 - alpha) * float(fdtri(df1, df2, 1 - a / 2))
    hi = 1 - (1 - alpha) * float(fdtri(df1, df2, a / 2))
    return lo, hi


# --------------------------------------------------------------------------------------------------
# Panel analyses: correlations with confidence intervals, multiple testing, discrimination summary
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient with its 95% interval (Fisher z) and two-sided p-value."""

    n: int
    r: float | None
    lo: float | None
    hi: float | None
    p: float | None


def _fisher_z_interval(r: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """tanh(atanh(r) ± z_(1+level)/2 / sqrt(n − 3)); the bounds are ±1 when |r| = 1."""
    from statistics import NormalDist

    if abs(r) >= 1.0:
        return (r, r)
    z = math.atanh(r)
    half = NormalDist().inv_cdf((1 + level) / 2) / math.sqrt(n - 3)
    return math.tanh(z - half), math.tanh(z + half)


def pearson_ci(x: Sequence[float], y: Sequence[float], level: float = 0.95) -> Correlation:
    """Pearson's r of paired values with scipy's p-value and the Fisher-z interval.

    The interval is the one scipy's ``pearsonr(...).confidence_interval()`` returns. r, p and the
    interval are None with fewer than 4 pairs (the interval needs n > 3) or when either side is constant.
    """
    from scipy.stats import pearsonr

    if len(x) != len(y):
        raise ValueError(f"pearson_ci: {len(x)} x values but {len(y)} y values")
    n = len(x)
    if n < 4 or len(set(x)) < 2 or len(set(y)) < 2:
        return Correlation(n, None, None, None, None)
    res = pearsonr(list(x), list(y))
    r = float(res.statistic)
    lo, hi = _fisher_z_interval(r, n, level)
    return Correlation(n, r, lo, hi, float(res.pvalue))


def spearman_ci(x: Sequence[float], y: Sequence[float], level: float = 0.95) -> Correlation:
    """Spearman's rho with scipy's p-value and a Fisher-z interval (1/sqrt(n − 3)) on rho.

    rho is Pearson's r of the average ranks (scipy.stats.spearmanr); None under the same conditions as
    pearson_ci. Up to rank_tests.EXACT_MAX_N points the p is the exact permutation p and there is no
    interval (docs/reports.md#rank-correlations).
    """
    from scipy.stats import spearmanr

    from . import rank_tests

    if len(x) != len(y):
        raise ValueError(f"spearman_ci: {len(x)} x values but {len(y)} y values")
    n = len(x)
    if n < 4 or len(set(x)) < 2 or len(set(y)) < 2:
        return Correlation(n, None, None, None, None)
    res = spearmanr(list(x), list(y))
    rho = float(res.statistic)
    if n <= rank_tests.EXACT_MAX_N:
        return Correlation(n, rho, None, None, rank_tests.exact_p(x, y, "spearman"))
    lo, hi = _fisher_z_interval(rho, n, level)
    return Correlation(n, rho, lo, hi, float(res.pvalue))


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values), in input order.

    q_(i) = min over j >= i of p_(j) · m / j on the ascending p-values, capped at 1 (what
    scipy.stats.false_discovery_control returns). An empty input gives an empty list.
    """
    m = len(pvalues)
    for p in pvalues:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"benjamini_hochberg: p-value {p} outside [0, 1]")
    order = sorted(range(m), key=lambda i: pvalues[i])
    q = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        q[i] = min(1.0, running)
    return q


def bonferroni_significant(p: float, alpha: float = 0.05, m: int = BIGRAM_FAMILY) -> bool:
    """True when the Bonferroni-adjusted p (family m) is below alpha."""
    return bonferroni(p, m) < alpha


@dataclass(frozen=True)
class DiscriminationSummary:
    """Distribution of corrected item-total correlations over the items where they are defined."""

    n_items: int  # items with a defined correlation
    median: float | None
    q1: float | None
    q3: float | None
    share_above: float | None  # share of those items with a correlation above the threshold
    threshold: float


def _quantile(sorted_xs: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default method) of sorted values."""
    pos = (len(sorted_xs) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def discrimination_summary(values: Sequence[float | None], threshold: float = 0.2) -> DiscriminationSummary:
    """Median, quartiles (linear interpolation) and share above `threshold` of the defined values."""
    xs = sorted(v for v in values if v is not None)
    if not xs:
        return DiscriminationSummary(0, None, None, None, None, threshold)
    return DiscriminationSummary(
        n_items=len(xs),
        median=_quantile(xs, 0.5),
        q1=_quantile(xs, 0.25),
        q3=_quantile(xs, 0.75),
        share_above=sum(1 for v in xs if v > threshold) / len(xs),
        threshold=threshold,
    )


# --------------------------------------------------------------------------------------------------
# Paired comparison of graded scores (scores that are not just right/wrong)
# --------------------------------------------------------------------------------------------------

#: up to this many non-zero differences the Wilcoxon p is exact; above, the normal approximation
WILCOXON_EXACT_MAX = 50


@dataclass(frozen=True, slots=True)
class GradedPaired:
    """Two runs' scores on their shared items (``b - a`` per item)."""

    n: int  # shared items
    mean_diff: float | None  # mean of b - a
    n_better: int  # items where b scored higher
    n_worse: int  # items where b scored lower
    n_ties: int
    sign_p: float  # exact two-sided sign test on the non-tied items
    wilcoxon_p: float  # two-sided Wilcoxon signed-rank test (zero differences dropped, mid-ranks for ties)
    ci_lo: float | None  # percentile bootstrap interval of mean_diff (items resampled)
    ci_hi: float | None


def paired_graded(
    a: Sequence[float], b: Sequence[float], *, n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> GradedPaired:
    """Paired comparison for graded scores (docs/reports.md#statistics): exact McNemar needs binary
    outcomes, so graded scores get the sign test, the Wilcoxon signed-rank test and a bootstrap
    interval of the mean difference. ``a[i]`` and ``b[i]`` are the two runs' scores on item i.

    Wilcoxon: ranks of |b - a| over the non-zero differences (mid-ranks for ties); the p is exact (the
    conditional distribution of the positive rank sum, ties included) up to
    :data:`WILCOXON_EXACT_MAX` differences, else the normal approximation with the tie correction.
    The bootstrap resamples items ``n_boot`` times with a seeded generator (same inputs, same interval):
    :func:`bootstrap_mean_interval` of the differences.
    """
    if len(a) != len(b):
        raise ValueError(f"paired_graded: {len(a)} scores against {len(b)}")
    d = [float(y) - float(x) for x, y in zip(a, b)]
    n = len(d)
    if n == 0:
        return GradedPaired(0, None, 0, 0, 0, 1.0, 1.0, None, None)
    better = sum(1 for v in d if v > 0)
    worse = sum(1 for v in d if v < 0)
    sign_p = mcnemar_exact(better, worse)  # the sign test is the binomial test McNemar runs
    nz = sorted((abs(v), v > 0) for v in d if v != 0)
    wilcoxon_p = 1.0
    if nz:
        # doubled mid-ranks stay integers: 2 * mean of positions i+1..j
        ranks2: list[int] = []
        i = 0
        while i < len(nz):
            j = i
            while j + 1 < len(nz) and nz[j + 1][0] == nz[i][0]:
                j += 1
            ranks2 += [i + j + 2] * (j - i + 1)
            i = j + 1
        w2 = sum(r for r, (_, pos) in zip(ranks2, nz) if pos)  # doubled positive rank sum
        total2 = sum(ranks2)
        m = len(nz)
        if m <= WILCOXON_EXACT_MAX:
            counts = [0] * (total2 + 1)  # ways to reach each doubled sum, each sign equally likely
            counts[0] = 1
            for r in ranks2:
                for s in range(total2, r - 1, -1):
                    counts[s] += counts[s - r]
            low = min(w2, total2 - w2)
            wilcoxon_p = min(1.0, 2 * sum(counts[: low + 1]) / 2**m)
        else:
            mean = total2 / 2  # E[W+] = m(m+1)/4; doubled
            ties = {}
            for r in ranks2:
                ties[r] = ties.get(r, 0) + 1
            var = (m * (m + 1) * (2 * m + 1) / 24 - sum(t**3 - t for t in ties.values()) / 48) * 4
            z = (w2 - mean) / math.sqrt(var) if var > 0 else 0.0
            wilcoxon_p = min(1.0, math.erfc(abs(z) / math.sqrt(2)))
    ci = bootstrap_mean_interval(d, n_boot=n_boot, seed=seed, level=level)
    return GradedPaired(
        n=n,
        mean_diff=sum(d) / n,
        n_better=better,
        n_worse=worse,
        n_ties=n - better - worse,
        sign_p=sign_p,
        wilcoxon_p=wilcoxon_p,
        ci_lo=ci[0] if ci else None,
        ci_hi=ci[1] if ci else None,
    )


#: at most this many distinct values, a bootstrap draws how often each is resampled (one multinomial per draw)
BOOTSTRAP_LEVELS_MAX = 64


def bootstrap_mean_interval(
    values: Sequence[float], *, n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float] | None:
    """95% percentile bootstrap interval of the mean of graded scores (docs/reports.md#score-interval):
    the items resampled ``n_boot`` times with a seeded generator (numpy's PCG64). Scores of a few levels
    (0/1, an item's mean over five epochs) are resampled as the counts of each level, Multinomial(n,
    observed shares), which is the same distribution of the resampled mean as drawing n items, at a cost
    that does not grow with n. None for no values."""
    import numpy as np

    xs = np.asarray([float(v) for v in values], dtype=float)
    n = len(xs)
    if n == 0:
        return None
    rng = np.random.default_rng(seed)
    levels, counts = np.unique(xs, return_counts=True)
    if len(levels) <= BOOTSTRAP_LEVELS_MAX:
        means = rng.multinomial(n, counts / n, size=n_boot) @ levels / n
    else:
        block = max(1, 2_000_000 // n)  # draws per block: about 16 MB of indices at a time
        means = np.concatenate([xs[rng.integers(0, n, size=(min(block, n_boot - i), n))].mean(axis=1)
                                for i in range(0, n_boot, block)])
    tail = (1 - level) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail])  # linear interpolation, as _quantile
    return float(lo), float(hi)


# --------------------------------------------------------------------------------------------------
# Sign-flip permutation test of paired per-item differences (pooled repeats)
# --------------------------------------------------------------------------------------------------

#: up to this many non-zero differences every sign vector is enumerated (2**16 = 65,536)
SIGN_FLIP_EXACT_MAX = 16
#: random sign vectors drawn above that (fixed seed: the same inputs give the same p)
SIGN_FLIP_RESAMPLES = 20_000


@dataclass(frozen=True, slots=True)
class SignFlip:
    """The sign-flip permutation test of per-item differences d_i (A − B)."""

    n: int  # items (differences), zeros included
    n_nonzero: int
    mean_diff: float | None  # mean of d over all n items
    p: float  # two-sided
    exact: bool  # every sign vector enumerated (else Monte-Carlo)
    n_resamples: int  # sign vectors counted: 2**n_nonzero when exact, else the random draws


def sign_flip_test(
    diffs: Sequence[float], *, exact_max: int = SIGN_FLIP_EXACT_MAX, n_resamples: int = SIGN_FLIP_RESAMPLES,
    seed: int = 0,
) -> SignFlip:
    """Two-sided sign-flip (paired randomization) test of H0: the two arms are exchangeable on each item
    (docs/reports.md#sign-flip). T = mean(d); under H0 every sign of every d_i is equally likely, so
    p = #{s ∈ {±1}^n : |mean(s·d)| ≥ |T|} / 2^n. Zero differences do not move the statistic, so only the
    m non-zero ones are flipped (the share is the same). Up to `exact_max` non-zero differences every
    one of the 2^m sign vectors is counted (exact); above, `n_resamples` random vectors with a seeded
    generator and p = (1 + #exceed) / (n_resamples + 1), which is never 0. Ties of |sum| with the observed
    value count as exceeding (a relative tolerance of 1e-9 absorbs float rounding)."""
    import numpy as np

    d_all = [float(x) for x in diffs]
    n = len(d_all)
    if n == 0:
        return SignFlip(0, 0, None, 1.0, True, 0)
    d = np.array([x for x in d_all if x != 0.0], dtype=float)
    m = len(d)
    mean = sum(d_all) / n
    if m == 0:
        return SignFlip(n, 0, mean, 1.0, True, 1)
    observed = abs(float(d.sum()))
    tol = 1e-9 * max(1.0, float(np.abs(d).sum()))
    if m <= exact_max:
        # row k of the sign matrix holds the bits of k: every vector in {±1}^m once
        bits = (np.arange(2**m, dtype=np.int64)[:, None] >> np.arange(m, dtype=np.int64)) & 1
        sums = np.abs((1 - 2 * bits) @ d)
        hits = int(np.count_nonzero(sums >= observed - tol))
        return SignFlip(n, m, mean, hits / 2**m, True, 2**m)
    rng = np.random.default_rng(seed)
    hits, left = 0, n_resamples
    while left:
        k = min(left, 4096)
        signs = rng.integers(0, 2, size=(k, m), dtype=np.int8) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ d) >= observed - tol))
        left -= k
    return SignFlip(n, m, mean, (1 + hits) / (n_resamples + 1), False, n_resamples)
