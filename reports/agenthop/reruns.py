"""AgentHop's sections of the shared `reruns` page (reports/core/reruns.py): per rerun group (a condition
with two or more replicates) the paper's Table 17 (rerun_variance: accuracy, section recall, conversion,
tokens) and the unstable items laid out by cell and reasoning type.

The shared page already shows each replicate's accuracy, the spread of the run-level metrics, the noise
floor, the replicates compared pairwise and the items that flip; these sections add what only AgentHop's
marts hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.registry import Section
from ..render import Charts, anchor
from ..values import as_float as _f
from ..warehouse import Warehouse
from . import queries
from .conditions import applies
from .queries import RunInfo

MARTS = ("model_summary", "fct_trajectory", "rerun_variance")
METRIC_ORDER = ("accuracy", "section_recall", "conversion", "avg_tokens_k")
FRACTION_METRICS = {"accuracy", "section_recall", "conversion", "paper_recall"}
#: How Table 17 names each rerun_variance metric (the mart's column name is the row's tooltip).
METRIC_LABELS = {"accuracy": "accuracy %", "section_recall": "section recall %", "conversion": "conversion %",
                 "paper_recall": "paper recall %", "avg_tokens_k": "avg tokens (K)"}
#: The templates of the two sections (under reports/templates/).
TABLE17_TEMPLATE = "agenthop_reruns_table17.html.j2"
UNSTABLE_TEMPLATE = "agenthop_reruns_unstable.html.j2"
NO_GROUP_TEMPLATE = "agenthop_reruns_no_group.html.j2"


def table17(variance: Sequence[dict[str, Any]], condition: str) -> list[dict[str, Any]]:
    """Table 17's rows of one condition, in the paper's order; a metric undefined for the condition (a
    closed-book run's recall) is n/a, never 0."""
    rows = sorted((v for v in variance if v["condition"] == condition),
                  key=lambda v: (METRIC_ORDER.index(v["metric"]) if v["metric"] in METRIC_ORDER else 99, v["metric"]))
    return [{"metric": v["metric"], "label": METRIC_LABELS.get(v["metric"], v["metric"]),
             "fraction": v["metric"] in FRACTION_METRICS, "n_runs": v["n_runs"],
             **({k: _f(v[k]) for k in ("mean", "std", "range")} if applies(condition, v["metric"])
                else {"mean": None, "std": None, "range": None})}
            for v in rows]


def rerun_groups(runs: Sequence[RunInfo]) -> dict[str, list[RunInfo]]:
    """The model's conditions with two or more replicates, each with its runs by replicate (as the shared
    page orders them)."""
    by_cond: dict[str, list[RunInfo]] = {}
    for r in runs:
        by_cond.setdefault(r.condition, []).append(r)
    return {c: sorted(m, key=lambda r: (r.replicate, r.run_id)) for c, m in sorted(by_cond.items())
            if len({r.replicate for r in m}) >= 2}


def sections(wh: Warehouse, runs: Sequence[RunInfo], box: Charts) -> list[Section]:
    """The sections the shared reruns page shows after its own, for `runs` (every run of one model)."""
    wh.require(MARTS)
    groups = rerun_groups(runs)
    if not groups:
        return [Section(title="Making a rerun group", template=NO_GROUP_TEMPLATE, anchor="rerun-group-howto")]
    variance = queries.rerun_variance(wh, runs[0].model)
    out = []
    for cond, members in groups.items():
        out.append(Section(title=f"Rerun variance (paper Table 17): condition {cond}", template=TABLE17_TEMPLATE,
                           anchor=anchor("table17", cond), context={"rows": table17(variance, cond)}))
        unstable = queries.unstable_items(wh, [r.run_id for r in members])
        out.append(Section(
            title=f"Unstable items ({len(unstable)}): condition {cond}, by cell and reasoning type",
            template=UNSTABLE_TEMPLATE, anchor=anchor("unstable", cond),
            context={"runs": members, "unstable": unstable}))
    return out
