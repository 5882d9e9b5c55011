"""SciExplore's per-task metrics in the metric catalogue (docs/sciexplore.md#per-task-metrics).

Each judge scores every answered task; its metrics are named ``<judge>.<metric>`` and computed per
task by ``models_sql/intermediate/sciexplore/int_sciexplore__item_metric_values.sql``:
``task_score`` (every task: T1/T2 1 when the answer verdict is correct, T3 the task's mean citation F,
T4 its cell recall), ``answer_correct`` (T1/T2), ``t3_f`` (T3) and ``t4_item_recall`` (T4). The built-in
judge's ``task_score`` is the primary metric.
"""

from __future__ import annotations

from typing import Any

from . import NAME
from .judge import JUDGE_NAME

#: metric -> (kind, label, description); every one is a fraction in [0, 1], higher is better
METRICS: dict[str, tuple[str, str, str]] = {
    "task_score": ("continuous", "task score",
                   "per task: T1/T2 answer correct (1/0), T3 mean citation F, T4 cell recall"),
    "answer_correct": ("binary", "answer correct", "T1/T2: the judge's verdict on the answer is correct"),
    "t3_f": ("continuous", "T3 citation F", "T3: mean F over the task's citation groups"),
    "t4_item_recall": ("continuous", "T4 item recall", "T4: correct cells / ground-truth cells of the task"),
}
PRIMARY = "task_score"


def judges(con: Any) -> list[str]:
    """The judges the warehouse's SciExplore runs have: the built-in one (with any run) and every
    judge with a verdict."""
    present = {t for (t,) in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw'").fetchall()}
    if "sciexplore_runs" not in present or not con.execute("SELECT count(*) FROM raw.sciexplore_runs").fetchall()[0][0]:
        return []
    others = {j for (j,) in con.execute("SELECT DISTINCT judge FROM raw.judgments").fetchall()}
    return [JUDGE_NAME, *sorted(others - {JUDGE_NAME})]


def metric_rows(con: Any) -> list[dict[str, Any]]:
    """A ``raw.metric_defs`` row per judge and metric (none without SciExplore runs)."""
    return [
        {"benchmark": NAME, "metric": f"{judge}.{metric}", "kind": kind, "direction": "higher_is_better",
         "is_primary": judge == JUDGE_NAME and metric == PRIMARY, "label": f"{label} ({judge})",
         "source": NAME, "description": f"{description}; judge {judge}", "min_value": 0.0, "max_value": 1.0}
        for judge in judges(con) for metric, (kind, label, description) in METRICS.items()
    ]
