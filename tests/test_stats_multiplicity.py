"""Holm and Benjamini-Hochberg adjusted p-values on a list worked out by hand."""

from __future__ import annotations

import pytest

from agenthop.reports import multiplicity

# p = (0.01, 0.04, 0.03, 0.005), m = 4; ascending 0.005, 0.01, 0.03, 0.04.
# Holm: 4·0.005 = 0.02, 3·0.01 = 0.03, 2·0.03 = 0.06, 1·0.04 = 0.04 -> running max 0.02, 0.03, 0.06, 0.06.
# BH: 0.005·4/1 = 0.02, 0.01·4/2 = 0.02, 0.03·4/3 = 0.04, 0.04·4/4 = 0.04 -> running min from the top: the same.
P = [0.01, 0.04, 0.03, 0.005]


def test_holm_by_hand() -> None:
    assert multiplicity.holm(P) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert multiplicity.holm([0.5, 0.3]) == pytest.approx([0.6, 0.6])  # 2·0.3, then max(0.6, 1·0.5)
    assert multiplicity.holm([0.7, 0.9]) == [1.0, 1.0]  # capped at 1
    assert multiplicity.holm([]) == []


def test_benjamini_hochberg_by_hand() -> None:
    assert multiplicity.adjust(P, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    # 0.02·3/1 = 0.06, 0.03·3/2 = 0.045, 0.5·3/3 = 0.5 -> running min from the top: 0.045, 0.045, 0.5
    assert multiplicity.adjust([0.02, 0.5, 0.03], "bh") == pytest.approx([0.045, 0.5, 0.045])


def test_adjust_skips_tests_that_could_not_run_and_names_the_method() -> None:
    assert multiplicity.adjust([0.01, None, 0.04], "holm") == pytest.approx([0.02, None, 0.04])
    assert multiplicity.adjust([0.01, None, 0.04], "bonferroni") == pytest.approx([0.02, None, 0.08])
    assert multiplicity.caption("holm", 5) == "Adjusted p: Holm (family-wise error) over the 5 tests in this table."
    assert multiplicity.caption("bh", 1, "pair", "shown") == \
        "Adjusted p: Benjamini–Hochberg (false discovery rate) over the 1 pair shown."
    with pytest.raises(ValueError, match="unknown multiplicity method"):
        multiplicity.adjust([0.1], "sidak")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="outside"):
        multiplicity.holm([1.2])



def test_paper_tables_keep_the_unadjusted_p_and_add_holm() -> None:
    # Tables 4 and 12 keep the paper's p of each test alone and add p_holm over the table's tests: three p-values
    # (the row without one is not in the family): 0.01·3 = 0.03; 0.03·2 = 0.06; 0.04·1, raised to 0.06 (step-down)
    from agenthop.reports.paper.analyses import holm_note, with_holm

    rows = [{"p_value": 0.01}, {"p_value": 0.04}, {"p_value": None}, {"p_value": 0.03}]
    with_holm(rows)
    assert [r["p_value"] for r in rows] == [0.01, 0.04, None, 0.03]
    got = [r["p_holm"] for r in rows]
    assert got[2] is None and [got[0], got[1], got[3]] == pytest.approx([0.03, 0.06, 0.06])
    assert holm_note(rows) == ("Adjusted p: Holm (family-wise error) over the 3 tests of this table (CSV column "
                               "p_holm).")
