"""Binary or graded: which outcome two runs are compared on, and the paired test that fits it.

A pair (or group) of runs is *binary* when every score its final trajectories carry is 0 or 1 (or none
carries one): they are compared on is_correct with the exact McNemar test. Otherwise the scores are
*graded* and the comparison uses :func:`reports.stats.paired_graded` on the items both runs scored
(docs/reports.md#binary-or-graded). The page says which test it used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import stats
from ..warehouse import Warehouse
from . import queries
from .runs import RunInfo

BINARY, GRADED = "binary", "graded"


def kind_of(wh: Warehouse, runs: Sequence[RunInfo]) -> str:
    prof = queries.score_profile(wh, [r.run_id for r in runs])
    return GRADED if prof["n_graded"] else BINARY


@dataclass
class RunOutcome:
    """One run's outcome numbers: accuracy with its Wilson interval, mean score with a bootstrap interval."""

    run: RunInfo
    n: int
    correct: int
    n_scored: int
    mean_score: float | None
    score_ci: tuple[float, float] | None
    n_answer: int

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None

    @property
    def accuracy_ci(self) -> tuple[float, float] | None:
        return stats.wilson_interval(self.correct, self.n)

    @property
    def score_text(self) -> str:
        if self.mean_score is None or self.score_ci is None:
            return "n/a"
        return f"{self.mean_score:.3f} [{self.score_ci[0]:.3f}, {self.score_ci[1]:.3f}]"


def run_outcomes(wh: Warehouse, runs: Sequence[RunInfo]) -> list[RunOutcome]:
    rows = queries.outcomes(wh, [r.run_id for r in runs])
    out = []
    for r in runs:
        row = rows.get(r.run_id) or {}
        scores = [float(s) for s in (row.get("scores") or [])]
        out.append(RunOutcome(run=r, n=int(row.get("n") or 0), correct=int(row.get("correct") or 0),
                              n_scored=len(scores), mean_score=(sum(scores) / len(scores)) if scores else None,
                              score_ci=stats.bootstrap_mean_interval(scores), n_answer=int(row.get("n_answer") or 0)))
    return out


@dataclass
class PairedResult:
    """The paired test of two runs on their shared items: exact McNemar (binary) or the graded tests."""

    kind: str
    n_shared: int
    mcnemar: stats.PairedTest | None = None
    graded: stats.GradedPaired | None = None  # on the items both scored; mean_diff = A − B

    @property
    def p(self) -> float | None:
        if self.mcnemar is not None:
            return self.mcnemar.p
        return self.graded.wilcoxon_p if self.graded is not None else None

    @property
    def test_name(self) -> str:
        return "exact McNemar" if self.kind == BINARY else "Wilcoxon signed-rank (with the sign test)"


def _mcnemar(c: dict[str, int]) -> PairedResult:
    return PairedResult(BINARY, c["n"], mcnemar=stats.paired_test_from_counts(c["n"], c["a_only"], c["b_only"]))


def paired_many(wh: Warehouse, pairs: Sequence[tuple[RunInfo, RunInfo]], kind: str) -> list[PairedResult]:
    """:func:`paired` of each pair (the binary counts of every pair read in one query)."""
    if kind == BINARY:
        return [_mcnemar(c) for c in queries.paired_binary_many(wh, [(a.run_id, b.run_id) for a, b in pairs])]
    return [paired(wh, a, b, kind) for a, b in pairs]


def paired(wh: Warehouse, a: RunInfo, b: RunInfo, kind: str) -> PairedResult:
    if kind == BINARY:
        return _mcnemar(queries.paired_binary(wh, a.run_id, b.run_id))
    n_shared, pairs = queries.paired_scores(wh, a.run_id, b.run_id)
    # paired_graded reports b − a: give it (B, A) so the difference reads A − B, as the McNemar Δ does
    g = stats.paired_graded([y for _, y in pairs], [x for x, _ in pairs])
    return PairedResult(GRADED, n_shared, graded=g)


def summary_line(res: PairedResult) -> dict[str, Any]:
    """The numbers of the summary's test line."""
    if res.mcnemar is not None:
        t = res.mcnemar
        return {"test": res.test_name, "n": t.n, "diff": t.diff, "p": t.p, "mde": t.mde}
    g = res.graded
    assert g is not None
    return {"test": res.test_name, "n": g.n, "diff": g.mean_diff, "p": g.wilcoxon_p, "sign_p": g.sign_p,
            "ci": (g.ci_lo, g.ci_hi)}
