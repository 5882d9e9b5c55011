"""AgentHop's sections of the shared `leaderboard` (reports/core/leaderboard.py): one condition's panel (each model's run with the lowest replicate) by tier as Table 2,
accuracy vs recall, the condition deltas of every model, and the panel's reliability.

Everything except the condition deltas is about the panel of the chosen condition (default `full`), so
a tier never mixes conditions and the reliability statistics count the models the caption names."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from agenthop.harness.errors import AgentHopError

from .. import charts, stats
from ..core.registry import Section
from ..render import Charts
from ..values import as_float as _f
from ..warehouse import Warehouse
from . import queries
from .conditions import applicable_summary, applies
from ..paper.layouts import tier_colours, tier_label
from .queries import RunInfo

MARTS = ("model_summary", "fct_trajectory")
TIER_ORDER = ("closed_frontier", "open_frontier", "compute_efficient")
UNTIERED = "untiered"


def panel_runs(runs: Sequence[RunInfo], condition: str = "full") -> list[RunInfo]:
    """One run per model: its `condition` run with the lowest replicate."""
    best: dict[str, RunInfo] = {}
    for r in runs:
        if r.condition != condition:
            continue
        cur = best.get(r.model)
        if cur is None or (r.replicate, r.run_id) < (cur.replicate, cur.run_id):
            best[r.model] = r
    return [best[m] for m in sorted(best)]


def item_runs(panel: Sequence[RunInfo], k: int = 6) -> list[RunInfo]:
    """The runs an item page of the leaderboard shows: the 3 most and 3 least accurate of the panel."""
    ranked = sorted(panel, key=lambda r: (-(_f(r.summary.get("accuracy")) or 0), r.label))
    if len(ranked) <= k:
        return ranked
    return ranked[: k // 2] + ranked[-(k - k // 2):]


def reliability(wh: Warehouse, panel: Sequence[RunInfo], chart_box: Charts) -> dict[str, Any]:
    """Cronbach's alpha over the models x items matrix and corrected item-total correlations."""
    items, matrix = queries.correctness_matrix(wh, [r.run_id for r in panel])
    alpha = stats.cronbach_alpha(matrix)
    ci = stats.cronbach_alpha_ci(alpha, len(matrix), len(items))
    disc = stats.corrected_item_total(matrix) if matrix else []
    defined = [(items[j], d) for j, d in enumerate(disc) if d is not None]
    n_const = sum(1 for j in range(len(items)) if len({row[j] for row in matrix}) == 1)
    # 0.1-wide bins over [-1, 1]: at most 20 rows
    bins: dict[float, int] = {}
    for _, d in defined:
        b = round(min(19, max(0, math.floor((d + 1) * 10 + 1e-9))) / 10 - 1, 1)
        bins[b] = bins.get(b, 0) + 1
    hist = [{"bin_start": b, "bin_end": round(b + 0.1, 1), "n": n} for b, n in sorted(bins.items())]
    cid = None
    if hist:
        cid = chart_box.add(charts.binned_bars(hist, x_title="corrected item-total correlation",
                                               title="Item discrimination across the panel"))
    worst = sorted(defined, key=lambda x: x[1])[:12]
    info = queries.item_info(wh, [s for s, _ in worst], [r.run_id for r in panel])
    return {
        "n_models": len(matrix),
        "n_items": len(items),
        "alpha": alpha,
        "alpha_ci": ci,
        "n_constant": n_const,
        "n_defined": len(defined),
        "n_negative": sum(1 for _, d in defined if d < 0),
        "median": sorted(d for _, d in defined)[len(defined) // 2] if defined else None,
        "worst": [{"sample_id": s, "r": d, **{k: info.get(s, {}).get(k) for k in ("cell", "reasoning_type",
                                                                                    "panel_accuracy", "n_runs")}}
                  for s, d in worst],
        "chart": cid,
        "panel": panel,
        "item_runs": item_runs(panel),
    }


def build(wh: Warehouse, condition: str = "full", box: Charts | None = None
          ) -> tuple[dict[str, Any], Charts, list[RunInfo]]:
    """The sections' figures for the panel of `condition`, their charts added to `box` (a new one without
    it); returns (context, charts, the panel's runs)."""
    wh.require(MARTS)
    runs = queries.all_runs(wh)
    panel = panel_runs(runs, condition)
    if not panel:
        have = ", ".join(sorted({r.condition for r in runs}))
        raise AgentHopError(f"leaderboard: no run has condition {condition!r} (the warehouse has: {have}); "
                            "use --condition")
    queries.label_runs(panel)  # one run per model: the label is the model name
    ids = [r.run_id for r in panel]
    counts = queries.profile_counts(wh, ids)
    recall = queries.recall_overall(wh, ids)
    cost: dict[str, float | None] = {}
    if wh.has("model_cost", "usd_per_item"):
        cost = {r["run_id"]: _f(r["usd_per_item"]) for r in wh.rows("SELECT run_id, usd_per_item FROM model_cost")}
    box = Charts() if box is None else box

    tiers: dict[str, list[RunInfo]] = {}
    for r in panel:
        tiers.setdefault(r.tier or UNTIERED, []).append(r)
    tier_names = [t for t in TIER_ORDER if t in tiers] + sorted(t for t in tiers if t not in TIER_ORDER and
                                                                t != UNTIERED)
    if UNTIERED in tiers:
        tier_names.append(UNTIERED)
    groups = []
    for t in tier_names:
        members = sorted(tiers[t], key=lambda r: (-(_f(r.summary.get("accuracy")) or 0), r.label))
        groups.append({"tier": t, "tier_label": tier_label(t), "rows": [{"run": r, "c": counts.get(r.run_id, {}),
                                             "s": applicable_summary(r.condition, r.summary),
                                             "usd": cost.get(r.run_id)} for r in members]})

    scatter_id = None
    if applies(condition, "paper_recall"):
        scatter_rows = [
            {"run": r.chart_label, "accuracy": _f(r.summary.get("accuracy")),
             "paper_recall": _f(r.summary.get("paper_recall")) if r.summary.get("paper_recall") is not None
             else recall.get(r.run_id),
             "tier": tier_label(r.tier or UNTIERED), "kind": "simulated" if r.simulated else (r.backend or "unknown")}
            for r in panel
        ]
        scatter_rows = [s for s in scatter_rows if s["accuracy"] is not None and s["paper_recall"] is not None]
        if scatter_rows:
            scatter_id = box.add(charts.scatter(scatter_rows, x="paper_recall", y="accuracy",
                                                x_title="paper recall (all items)", y_title="accuracy", color="tier",
                                                title="Accuracy vs paper recall, one point per model",
                                                color_scale=([tier_label(t) for t in tier_names],
                                                             tier_colours(tier_names))))

    cd_cols, cd_rows = queries.condition_deltas(wh)
    in_panel = {r.run_id for r in panel}
    context = {
        "title": f"Leaderboard · {condition}",
        "condition": condition,
        "conditions": sorted({r.condition for r in runs}),
        "runs": panel,
        "not_shown": [r for r in runs if r.run_id not in in_panel],
        "groups": groups,
        "has_cost": any(cost.get(r.run_id) is not None for r in panel),
        "recall_applies": applies(condition, "paper_recall"),
        "scatter_chart": scatter_id,
        "deltas_structured": {"model", "condition_pair", "accuracy_from", "accuracy_to", "delta_pp"} <= set(cd_cols),
        "deltas_cols": cd_cols,
        "deltas": cd_rows,
        "sim_models": {r.model for r in runs if r.simulated},
        "reliability": reliability(wh, panel, box),
    }
    return context, box, panel


#: (anchor, title, template stem) of AgentHop's sections beneath the shared leaderboard's tables
SECTIONS: tuple[tuple[str, str, str], ...] = (
    ("table2", "Models by tier · condition {condition}", "table2"),
    ("scatter", "Accuracy vs paper recall", "scatter"),
    ("conditions", "Ablation conditions", "conditions"),
    ("reliability", "Reliability across the panel", "reliability"),
)


def sections(wh: Warehouse, condition: str | None, boards: Sequence[dict[str, Any]], box: Charts) -> list[Section]:
    """AgentHop's sections beneath the shared leaderboard: Table 2 by tier, accuracy vs recall, the condition
    deltas and the panel's reliability, of the panel of `condition` (None: its default, full). The context
    lists the runs shown (``runs``) and the item pages to write (``item_links``: the least discriminating
    items, with the panel's most and least accurate runs)."""
    from ..core.runs import default_condition

    context, _, panel = build(wh, condition or default_condition("agenthop") or "full", box)
    rel = context["reliability"]
    context["item_links"] = [([w["sample_id"] for w in rel["worst"]], rel["item_runs"])]
    return [Section(title=title.format(condition=context["condition"]), template=f"agenthop_leaderboard_{stem}.html.j2",
                    anchor=anchor, context=context) for anchor, title, stem in SECTIONS]
