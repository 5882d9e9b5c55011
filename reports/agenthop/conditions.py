"""Which per-run metrics apply to a condition's runs: the others print as n/a, never as 0.

A `closed_book` run offers only think and submit_answer (docs/harness.md#conditions): it reads no paper
and spends no budget, so recall, conversion and the budget metrics are undefined for it rather than 0.
"""

from __future__ import annotations

#: metric (model_summary column) -> undefined for the runs of these conditions
_READING = ("recall_st", "recall_mt", "secrec_st", "secrec_mt", "conversion_st", "conversion_mt", "paper_recall",
            "section_recall", "early_submit_rate")
_BUDGET = ("avg_budget", "max_budget_rate")
NOT_APPLICABLE: dict[str, frozenset[str]] = {"closed_book": frozenset(_READING + _BUDGET)}


def applies(condition: str | None, metric: str) -> bool:
    """False when `metric` is undefined for runs of `condition` (shown as n/a)."""
    return metric not in NOT_APPLICABLE.get(condition or "", frozenset())


def applicable_summary(condition: str | None, summary: dict[str, object]) -> dict[str, object]:
    """A model_summary row with the metrics that do not apply to `condition` set to None."""
    return {k: (v if applies(condition, k) else None) for k, v in summary.items()}
