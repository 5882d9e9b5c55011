"""SciExplore's entry in the report registry (reports/core/registry.py): the shared pages (the leaderboard)
serve its runs and call its items tasks."""

from __future__ import annotations

from ..core.registry import ReportSections

#: the paper's rule for a task without a response, said beside the shared coverage rule
MISSING_RULE = ("SciExplore's paper counts a task without a response as not attempted (a score of 0): the "
                "intention-to-treat value is the paper's.")

SECTIONS = ReportSections(name="sciexplore", items="tasks", missing_rule=MISSING_RULE)

__all__ = ["MISSING_RULE", "SECTIONS"]
