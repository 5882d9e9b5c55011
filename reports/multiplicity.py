"""Adjusted p-values over a family of tests shown together (docs/reports.md#multiplicity).

Pure functions on a list of p-values, returning the adjusted values in input order. A page that shows a
grid of tests (model pairs, metric × group, behaviours) adjusts over the whole grid with one method and
names it in the caption, with :func:`caption`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from .stats import benjamini_hochberg

Method = Literal["holm", "bh", "bonferroni"]

#: how a caption names each method
NAMES: dict[str, str] = {
    "holm": "Holm (family-wise error)",
    "bh": "Benjamini–Hochberg (false discovery rate)",
    "bonferroni": "Bonferroni (family-wise error)",
}


def _check(pvalues: Sequence[float], who: str) -> None:
    for p in pvalues:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{who}: p-value {p} outside [0, 1]")


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in input order.

    On the ascending p_(1) <= ... <= p_(m): adj_(i) = max over j <= i of min(1, (m − j + 1)·p_(j)).
    Rejecting where adj < alpha controls the family-wise error at alpha (Holm 1979); what
    statsmodels' multipletests(method="holm") returns. An empty input gives an empty list.
    """
    _check(pvalues, "holm")
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def bonferroni_all(pvalues: Sequence[float]) -> list[float]:
    """min(1, m·p) for each of the m p-values."""
    _check(pvalues, "bonferroni")
    return [min(1.0, len(pvalues) * p) for p in pvalues]


def adjust(pvalues: Sequence[float | None], method: Method) -> list[float | None]:
    """Adjusted p-values by `method` over the defined ones; None (a test that could not run) stays None
    and does not count in the family."""
    idx = [i for i, p in enumerate(pvalues) if p is not None]
    ps = [float(pvalues[i]) for i in idx]  # type: ignore[arg-type]
    if method == "holm":
        adj = holm(ps)
    elif method == "bh":
        adj = benjamini_hochberg(ps)
    elif method == "bonferroni":
        adj = bonferroni_all(ps)
    else:
        raise ValueError(f"unknown multiplicity method {method!r}: use holm, bh or bonferroni")
    out: list[float | None] = [None] * len(pvalues)
    for i, a in zip(idx, adj):
        out[i] = a
    return out


def caption(method: Method, m: int, noun: str = "test", where: str = "in this table") -> str:
    """The sentence a caption carries, e.g. "Adjusted p: Holm (family-wise error) over the 5 tests in this table."
    (one test: "over the 1 test in this table")."""
    return f"Adjusted p: {NAMES[method]} over the {m} {noun}{'' if m == 1 else 's'} {where}."


__all__ = ["NAMES", "adjust", "bonferroni_all", "caption", "holm"]
