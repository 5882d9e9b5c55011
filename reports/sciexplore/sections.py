"""SciExplore's entry in the report registry (reports/core/registry.py): the shared pages serve its runs and
call its items tasks; their intervals are clustered by the task's domain by default
(docs/reports.md#cluster-option)."""

from __future__ import annotations

from ..core.clusters import column_labels
from ..core.registry import ReportSections
from ..warehouse import Warehouse

TASKS = "raw.sciexplore_tasks"

#: the paper's rule for a task without a response, said beside the shared coverage rule
MISSING_RULE = ("SciExplore's paper counts a task without a response as not attempted (a score of 0): the "
                "intention-to-treat value is the paper's.")


def task_clusters(wh: Warehouse, benchmark: str, name: str) -> dict[str, str]:
    """``--cluster NAME``: a column of the release's tasks (domain, type, ...), keyed by task id (the item)."""
    return column_labels(wh, TASKS, "task_id", {}, benchmark, name)


SECTIONS = ReportSections(name="sciexplore", items="tasks", missing_rule=MISSING_RULE, cluster_default="domain",
                          cluster_labels=task_clusters)

__all__ = ["MISSING_RULE", "SECTIONS", "task_clusters"]
