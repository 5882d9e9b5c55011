"""Statistics of the reports (reports/stats.py), checked against the paper and hand computations."""

from __future__ import annotations

import math

import pytest

from agenthop.reports import stats


@pytest.mark.parametrize(
    ("b", "c", "paper", "printed"),
    [(20, 3, "0.0005", "<0.001"), (24, 16, "0.27", "0.268"), (36, 22, "0.09", "0.0869"), (35, 21, "0.08", "0.0814"),
     (42, 12, "0.0001", "<0.001")],
)
def test_mcnemar_reproduces_paper_table_12(b: int, c: int, paper: str, printed: str) -> None:
    p = stats.mcnemar_exact(b, c)
    decimals = len(paper.split(".")[1])
    assert round(p, decimals) == pytest.approx(float(paper))  # the paper's value at the paper's precision
    assert stats.format_p(p) == printed  # our one style: three significant digits
    # symmetric in the two runs
    assert stats.mcnemar_exact(c, b) == pytest.approx(p)


def test_mcnemar_exact_values_and_edge_cases() -> None:
    # b=20, c=3: 2 * P(X <= 3 | n=23) = 2 * (1 + 23 + 253 + 1771) / 2^23 = 4096 / 2^23
    assert stats.mcnemar_exact(20, 3) == pytest.approx(4096 / 2**23, rel=1e-12)
    # b=12, c=3: 2 * (1 + 15 + 105 + 455) / 2^15 = 0.03515625
    assert stats.mcnemar_exact(12, 3) == pytest.approx(0.03515625, rel=1e-12)
    assert stats.mcnemar_exact(0, 0) == 1.0  # no discordant pairs
    assert stats.mcnemar_exact(3, 3) == 1.0
    with pytest.raises(ValueError):
        stats.mcnemar_exact(-1, 2)


def test_format_p_three_significant_digits() -> None:
    assert stats.format_p(0.5) == "0.500"
    assert stats.format_p(1.0) == "1.00"
    assert stats.format_p(0.0123) == "0.0123"
    assert stats.format_p(0.048) == "0.0480"
    assert stats.format_p(0.00349) == "0.00349"
    assert stats.format_p(0.001) == "0.00100"
    assert stats.format_p(0.000999) == "<0.001"
    assert stats.format_p(0.00004) == "<0.001"
    assert stats.format_p(None) == "n/a"


def test_significance_badge_agrees_with_the_printed_p() -> None:
    assert stats.significant(0.048) and stats.format_p(0.048) == "0.0480"
    assert not stats.significant(0.04996) and stats.format_p(0.04996) == "0.0500"  # printed 0.0500: no badge
    assert stats.significant(0.0004) and not stats.significant(None) and not stats.significant(0.27)


@pytest.mark.parametrize(
    ("k", "n", "printed"),
    [(85, 90, "94.4 ± 3.2"), (373, 478, "78.0 ± 3.5"), (338, 396, "85.4 ± 3.1"), (38, 47, "80.9 ± 8.7")],
)
def test_wilson_formatting_reproduces_paper(k: int, n: int, printed: str) -> None:
    assert stats.format_acc_pm(k, n) == printed


def test_acc_pm_lopsided_intervals_print_in_full() -> None:
    """"acc ± h" keeps the paper's numbers, but h is the distance to the upper bound: at 0% and 100% (and
    near them) the printed form hides one side of the interval, so the cell adds the whole interval."""
    from agenthop.reports import render

    assert stats.wilson_text(90, 90) == "[95.9, 100.0]" and stats.wilson_text(0, 90) == "[0.0, 4.1]"
    assert stats.wilson_text(0, 0) == "n/a"
    assert stats.acc_pm_lopsided(90, 90) and stats.acc_pm_lopsided(0, 90) and stats.acc_pm_lopsided(85, 90)
    assert not stats.acc_pm_lopsided(37, 50) and not stats.acc_pm_lopsided(338, 396) and not stats.acc_pm_lopsided(0, 0)
    env = render.environment()
    html = env.from_string("{{ acc_pm(90, 90) }}|{{ acc_pm(37, 50) }}|{{ acc_pm(none, none) }}|{{ acc_title(90, 90) }}").render()
    full, plain, na, title = html.split("|")
    assert full.startswith("100.0 ± 0.0 <span") and full.endswith(">[95.9, 100.0]</span>")
    assert plain == "74.0 ± 10.1" and na == "n/a"  # the paper's format, untouched
    assert title == "90/90 correct; Wilson 95% interval [95.9, 100.0] %"
    assert "half-width" not in stats.ACC_PM_MEANING and "upper bound" in stats.ACC_PM_MEANING


def test_no_report_calls_acc_pm_a_half_width() -> None:
    """h of "acc ± h" is upper bound − accuracy; no template, report module or doc may call it a half-width."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    files = [*(root / "reports").rglob("*.j2"), *(root / "reports").rglob("*.py"), *(root / "docs").glob("*.md")]
    wrong = re.compile(r"(Wilson[^.\n]{0,40}|upper |acc ± |\(\")half-width", re.IGNORECASE)
    bad = [f"{f.relative_to(root)}:{i}" for f in files for i, line in enumerate(f.read_text().splitlines(), 1)
           if wrong.search(line) and "not a half-width" not in line]
    assert not bad, bad


def test_wilson_interval_values_and_guards() -> None:
    lo, hi = stats.wilson_interval(37, 50)  # type: ignore[misc]
    assert lo == pytest.approx(0.604468, abs=1e-6)
    assert hi == pytest.approx(0.841285, abs=1e-6)
    # k = 0 and k = n: bounds at the edges. n=4, k=0: hi = z^2/(n+z^2) = 3.8415/7.8415
    assert stats.wilson_interval(0, 4) == pytest.approx((0.0, 3.8414588 / 7.8414588), abs=1e-6)
    assert stats.wilson_interval(4, 4)[1] == 1.0  # type: ignore[index]
    assert stats.wilson_interval(0, 0) is None
    assert stats.format_acc_pm(0, 0) == "n/a"
    with pytest.raises(ValueError):
        stats.wilson_interval(5, 4)


def test_minimum_detectable_effect_by_hand() -> None:
    # d=6: (6,0) gives p = 2/64 = 0.03125 < .05, (5,1) gives 2*7/64 = 0.21875 -> imbalance 6
    assert stats.min_detectable_imbalance(6) == 6
    assert stats.min_detectable_effect(100, 6) == pytest.approx(0.06)
    # d=5: the most extreme split (5,0) gives 2/32 = 0.0625 -> nothing is detectable
    assert stats.min_detectable_imbalance(5) is None
    assert stats.min_detectable_effect(100, 5) is None
    # d=10: (9,1) p = 2*11/1024 = 0.0215; (8,2) p = 2*56/1024 = 0.109 -> imbalance 8
    assert stats.min_detectable_imbalance(10) == 8
    assert stats.min_detectable_effect(50, 10) == pytest.approx(0.16)
    assert stats.min_detectable_effect(0, 0) is None


def test_paired_test_from_vectors() -> None:
    a = [True, True, True, False, True, False]
    b = [True, False, False, False, True, True]
    t = stats.paired_test(a, b)
    assert (t.n, t.a_only, t.b_only) == (6, 2, 1)
    assert t.p == pytest.approx(1.0)  # binomtest(2, 3): every outcome is as likely or less
    assert t.diff == pytest.approx(1 / 6)
    assert t.mde is None  # 3 discordant pairs can never reach p < 0.05


def test_fisher_and_bonferroni_by_hand() -> None:
    # [[3,0],[0,3]]: P(table) = 1/C(6,3) = 1/20; the mirror table is as extreme -> 0.1
    assert stats.fisher_p(3, 3, 0, 3) == pytest.approx(0.1)
    # [[1,0],[0,1]]: both tables have probability 1/2 -> 1.0
    assert stats.fisher_p(1, 1, 0, 1) == pytest.approx(1.0)
    # [[2,0],[0,2]]: P = 1/C(4,2) = 1/6, the mirror table likewise -> 1/3
    assert stats.fisher_p(2, 2, 0, 2) == pytest.approx(1 / 3)
    assert stats.fisher_p(0, 0, 3, 5) == 1.0  # empty row
    assert stats.bonferroni(0.1) == 1.0
    assert stats.bonferroni(0.001) == pytest.approx(0.049)
    assert stats.bonferroni(0.01, m=3) == pytest.approx(0.03)


def test_cronbach_alpha_by_hand() -> None:
    m = [[1, 1, 1], [1, 1, 0], [0, 0, 0]]
    # item variances (ddof=1) are 1/3 each; totals 3,2,0 have variance 7/3
    # alpha = 3/2 * (1 - 1 / (7/3)) = 6/7
    assert stats.cronbach_alpha(m) == pytest.approx(6 / 7)
    # 2x2 perfectly consistent: items [1,0],[1,0]: item var 1/2 each, totals 2,0 var 2 -> 2*(1-1/2)=1
    assert stats.cronbach_alpha([[1, 1], [0, 0]]) == pytest.approx(1.0)


def test_cronbach_alpha_guards() -> None:
    assert stats.cronbach_alpha([[1, 0, 1]]) is None  # one model
    assert stats.cronbach_alpha([[1], [0]]) is None  # one item
    assert stats.cronbach_alpha([[1, 1], [1, 1]]) is None  # totals do not vary
    with pytest.raises(ValueError):
        stats.cronbach_alpha([[1, 0], [1]])


def test_corrected_item_total_by_hand() -> None:
    m = [[1, 1, 1], [1, 1, 0], [0, 0, 0]]
    r = stats.corrected_item_total(m)
    # item 1 = [1,1,0] vs rest [2,1,0]: r = 1 / sqrt(2/3 * 2) = sqrt(3)/2
    assert r[0] == pytest.approx(math.sqrt(3) / 2)
    assert r[1] == pytest.approx(math.sqrt(3) / 2)
    # item 3 = [1,0,0] vs rest [2,2,0]: r = (2/3) / sqrt(2/3 * 8/3) = 0.5
    assert r[2] == pytest.approx(0.5)
    # an item everybody got right has no discrimination
    assert stats.corrected_item_total([[1, 1, 0], [1, 0, 0], [1, 1, 1]])[0] is None
    assert stats.corrected_item_total([[1, 0], [0, 1]]) == [None, None]  # < 3 models


def test_noise_floor_by_hand() -> None:
    nf = stats.noise_floor([0, 1, 2, 2], n_runs=2)
    assert nf is not None
    # p = 0, .5, 1, 1; unbiased var .25 * 2/1 = .5 for the one unstable item
    assert nf.sd_run == pytest.approx(math.sqrt(0.5) / 4)
    assert nf.sd_diff == pytest.approx(0.25)
    assert nf.floor == pytest.approx(1.959964 * 0.25)
    assert nf.unstable_items == 1
    assert stats.noise_floor([1, 0], n_runs=1) is None
    assert stats.noise_floor([0, 0, 3, 3], n_runs=3).floor == 0.0  # type: ignore[union-attr]


def test_std_pop() -> None:
    assert stats.std_pop([0.5, 0.7]) == pytest.approx(0.1)
    assert stats.std_pop([]) is None


def test_accuracy_decomposition_by_hand() -> None:
    a = stats.RunRates(n=10, recalled=6, correct_recalled=5, correct_unrecalled=1)
    b = stats.RunRates(n=10, recalled=4, correct_recalled=2, correct_unrecalled=2)
    d = stats.decompose_accuracy(a, b)
    assert d is not None
    assert d.delta_acc == pytest.approx(0.2)
    # dR = .2, C = 5/6 vs 1/2 (avg 2/3), G = 1/4 vs 1/3 (avg 7/24)
    assert d.recall_driven == pytest.approx(0.2 * (16 / 24 - 7 / 24))  # 0.075
    assert d.conversion_driven == pytest.approx(0.5 * (1 / 3))
    assert d.norecall_driven == pytest.approx(0.5 * (1 / 4 - 1 / 3))
    assert d.recall_driven + d.conversion_driven + d.norecall_driven == pytest.approx(d.delta_acc)


def test_accuracy_decomposition_undefined_rates_keep_identity() -> None:
    # A recalled everything (G undefined), B recalled nothing (C undefined)
    a = stats.RunRates(n=4, recalled=4, correct_recalled=3, correct_unrecalled=0)
    b = stats.RunRates(n=4, recalled=0, correct_recalled=0, correct_unrecalled=1)
    d = stats.decompose_accuracy(a, b)
    assert d is not None
    assert d.delta_acc == pytest.approx(0.5)
    # C: 3/4 both; G: 1/4 both -> everything is recall-driven: 1 * (3/4 - 1/4)
    assert d.recall_driven == pytest.approx(0.5)
    assert d.conversion_driven == 0.0 and d.norecall_driven == 0.0
    assert stats.decompose_accuracy(stats.RunRates(0, 0, 0, 0), b) is None


def test_exact_tests_agree_with_scipy() -> None:
    """mcnemar_exact and fisher_p are computed without scipy on the report's path; scipy is the yardstick."""
    import random

    from scipy.stats import binomtest, fisher_exact

    rng = random.Random(7)
    for _ in range(400):
        b, c = rng.randint(0, 150), rng.randint(0, 150)
        want = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5).pvalue
        assert stats.mcnemar_exact(b, c) == pytest.approx(want, rel=1e-9, abs=1e-300)
        n1, n2 = rng.randint(1, 200), rng.randint(1, 200)
        k1, k2 = rng.randint(0, n1), rng.randint(0, n2)
        want = fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue
        assert stats.fisher_p(k1, n1, k2, n2) == pytest.approx(want, rel=1e-9, abs=1e-300)
