"""The shared `compare` page: two runs of one benchmark, any benchmark, from the shared marts.

Sections: a summary; outcomes (accuracy with Wilson intervals, mean score with a bootstrap interval,
every scorer); the paired test on the shared items (exact McNemar for binary outcomes, the graded tests
otherwise, named on the page); item groups when the benchmark defines them; terminations; tool use,
call statuses, transitions and trigrams; tokens, turns, time and cost; the behaviour scanners' findings when
the warehouse holds some for both sides (reports/core/compare_behaviours.py); the items the runs differ on,
each linked to its item page; then the benchmark's own sections from the registry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthop.harness.errors import AgentHopError

from .. import charts, stats
from ..render import Charts
from ..values import as_float
from ..warehouse import Warehouse
from . import (budget_curves, clustered_tables, compare_behaviours, coverage, marts, metrics, outcome, pooling, queries,
               registry)
from .pivot import ordered, share_chart, side_by_side
from .pooling import RunGroup
from .runs import RunInfo

#: The shared terminated_by vocabulary in display order (docs/formats.md#trajectory-store).
TERMINATION_ORDER = ("answer", "max_turns", "budget", "token_limit", "time_limit", "cost_limit", "message_limit",
                     "context_limit", "other_limit", "error")
#: The shared call statuses, ok first.
STATUS_ORDER = ("ok",)
MAX_DIFFERING = 400  # item pages a compare report writes at most
MAX_BUDGET_RUNS = 6  # runs whose budget curves the page draws


def outcome_chart(outs: Sequence[outcome.RunOutcome], kind: str, title: str) -> dict[str, Any] | None:
    rows = []
    for o in outs:
        if kind == outcome.BINARY and o.accuracy is not None and o.accuracy_ci:
            rows.append({"run": o.run.chart_label, "value": o.accuracy, "lo": o.accuracy_ci[0], "hi": o.accuracy_ci[1]})
        elif kind == outcome.GRADED and o.mean_score is not None and o.score_ci:
            rows.append({"run": o.run.chart_label, "value": o.mean_score, "lo": o.score_ci[0], "hi": o.score_ci[1]})
    if not rows:
        return None
    if kind == outcome.BINARY:
        return charts.points_with_ci(rows, category="run", value="value", lo="lo", hi="hi", title=title)
    return charts.points_with_ci(rows, category="run", value="value", lo="lo", hi="hi", title=title,
                                 x_title="mean score (bootstrap 95%)", fmt=".3f")


def outcome_title(kind: str, metric: metrics.Metric | None) -> str:
    """The outcome chart's title: the metric's mean (graded) or its share of 1s (binary), named."""
    if metric is None:
        return "Mean score per run (bootstrap 95%)" if kind == outcome.GRADED else "Accuracy per run (Wilson 95%)"
    if kind == outcome.GRADED:
        return f"Mean {metric.short} per run (bootstrap 95%; {metric.direction_text})"
    return f"Share with {metric.short} = 1 per run (Wilson 95%; {metric.direction_text})"


def better_first(rows: list[dict[str, Any]], kind: str, metric: metrics.Metric | None) -> list[dict[str, Any]]:
    """The differing items of two runs, each with the side whose value is the better one by the metric's
    direction (``better``); the items A is better on first when the metric has a direction."""
    key = "score" if kind == outcome.GRADED else "correct"
    out = []
    for r in rows:
        va, vb = as_float(r[f"a_{key}"]), as_float(r[f"b_{key}"])
        out.append({**r, "better": metrics.better_side(metric, va, vb)})
    if kind == outcome.BINARY and metric is not None and metric.sign < 0:  # the query lists A's 1s first: A's wins first
        rank = {"A": 0, "B": 1, "": 2}
        out.sort(key=lambda r: rank[r["better"]])
    return out


def scorer_table(rows: Sequence[dict[str, Any]], runs: Sequence[RunInfo]) -> list[dict[str, Any]]:
    """One row per (scorer, key): each run's mean numeric value and n."""
    by = {(r["run_id"], r["scorer"], r["score_key"]): r for r in rows}
    keys = list(dict.fromkeys((r["scorer"], r["score_key"]) for r in rows))
    return [{"scorer": s, "key": k, "cells": [by.get((run.run_id, s, k)) for run in runs]} for s, k in keys]


def group_table(rows: Sequence[dict[str, Any]], runs: Sequence[RunInfo], kind: str) -> list[dict[str, Any]]:
    by = {(r["run_id"], r["item_group"]): r for r in rows}
    out = []
    for g in ordered([r["item_group"] for r in rows]):
        cells = []
        for run in runs:
            r = by.get((run.run_id, g))
            if r is None:
                cells.append({"text": "n/a", "n": 0})
            elif kind == outcome.BINARY:
                cells.append({"text": stats.format_acc_pm(int(r["correct"]), int(r["n"])), "k": int(r["correct"]), "n": int(r["n"])})
            else:
                ms = as_float(r["mean_score"])
                cells.append({"text": "n/a" if ms is None else f"{ms:.3f}", "n": int(r["n"])})
        out.append({"group": g, "cells": cells})
    return out


def tool_order(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Tools by their calls over both runs, most called first (ties by name)."""
    total: dict[str, int] = {}
    for r in rows:
        total[r["tool"]] = total.get(r["tool"], 0) + int(r["n"])
    return sorted(total, key=lambda t: (-total[t], t))


def distributions(wh: Warehouse, runs: Sequence[RunInfo], box: Charts) -> list[str]:
    label = {r.run_id: r.chart_label for r in runs}
    ids = []
    for column, (title, _) in queries.HIST_COLUMNS.items():
        rows = queries.histogram(wh, [r.run_id for r in runs], column)
        data = [{"run": label[r["run_id"]], "bin_start": as_float(r["bin_start"]), "bin_end": as_float(r["bin_end"]),
                 "n": int(r["n"]), "share": as_float(r["share"])} for r in rows]
        cid = box.add(charts.histogram(data, runs=[r.chart_label for r in runs], title=f"Distribution of {title}",
                                       x_title=title) if data else None)
        if cid:
            ids.append(cid)
    return ids


def sides_coverage(wh: Warehouse, ga: RunGroup, gb: RunGroup) -> dict[str, Any]:
    """Each side's coverage (reports/core/coverage.py) and the items the paired test leaves out, with why."""
    values = pooling.columns_source(None)(wh, ga.run_ids + gb.run_ids)  # once for each use below
    rows = coverage.run_coverage(wh, ga.run_ids + gb.run_ids)
    noun = coverage.noun_of(ga.benchmark)
    cov = [coverage.of_group(values, g.run_ids, rows, noun, g.repeats.plural) for g in (ga, gb)]
    ma, mb = (pooling.item_means(values, g.run_ids) for g in (ga, gb))
    errors_a, errors_b = (coverage.error_items(wh, g.run_ids) for g in (ga, gb))
    left_out = coverage.exclusions(ma, mb, (), errors_a, errors_b)
    shown = metrics.current(wh)  # the metric the page shows: its worst value, not the primary one's
    worst = coverage.primary_worst(wh, str(ga.benchmark), shown.name if shown is not None else None)
    itt = [coverage.itt_mean(values, g.run_ids, c.n_scope, worst) for g, c in zip((ga, gb), cov)]
    return {"coverage": cov, "partial": any(c.partial for c in cov), "left_out": left_out, "noun": noun,
            "coverage_rule": coverage.RULE, "itt": itt if any(c.partial for c in cov) else [None, None]}


def build(wh: Warehouse, groups: Sequence[RunGroup], cluster: str | None = None) -> tuple[dict[str, Any], Charts]:
    """The shared compare page's context (template core_compare.html.j2) and its charts: two run groups
    (one run each, or every epoch/replicate of a model), pooled per item (reports/core/pooling.py)."""
    if len(groups) != 2:
        raise AgentHopError(f"compare needs exactly two runs or models, got {len(groups)}")
    marts.require_shared(wh)
    ga, gb = groups
    runs = [*ga.runs, *gb.runs]
    a, b = ga.runs[0], gb.runs[0]
    ids = [r.run_id for r in runs]
    box = Charts()
    kind = outcome.kind_of(wh, runs)
    outs = outcome.run_outcomes(wh, runs)
    for o in outs:
        if o.n == 0:
            raise AgentHopError(f"run {o.run.run_id} ({o.run.model}) has no final trajectories")
    metric = metrics.current(wh)
    pooled = pooling.compare_groups(wh, ga, gb, metric=metric)
    test = outcome.paired(wh, a, b, kind) if not pooled.pooled else None
    term_rows = queries.terminations(wh, ids)
    usage = queries.tool_usage(wh, ids)
    tools = tool_order(usage)
    trans = queries.transitions(wh, ids)
    label = {r.run_id: r.chart_label for r in runs}
    heat = [{"run": label[r["run_id"]], "prev_tool": r["prev_tool"], "next_tool": r["next_tool"], "n": int(r["n"]),
             "p_next": float(r["p_next"])} for r in trans]
    extra = registry.sections_for(a.benchmark)
    order = extra.tool_order if extra is not None else ()
    heat_tools = [t for t in [*[t for t in order if t in tools], *[t for t in tools if t not in order]]
                  if any(t in (h["prev_tool"], h["next_tool"]) for h in heat)]
    differing = (better_first(queries.differing_items(wh, a.run_id, b.run_id, graded=kind == outcome.GRADED), kind,
                              metric) if not pooled.pooled else [{"sample_id": d.sample_id} for d in pooled.differing])
    res = queries.resources(wh, ids)
    covered = sides_coverage(wh, ga, gb)
    behaviours = compare_behaviours.section(wh, ga, gb, metric)
    item_ids = [d["sample_id"] for d in differing[:MAX_DIFFERING]]
    context: dict[str, Any] = {
        "title": f"Compare {ga.label if pooled.pooled else a.label} vs {gb.label if pooled.pooled else b.label}",
        "benchmark": a.benchmark,
        "oc": metrics.outcomes_for(a.benchmark, metric),
        "metric": metric,
        "wins": (sum(1 for d in differing if d.get("better") == "A"), sum(1 for d in differing if d.get("better") == "B"))
        if not pooled.pooled else pooled.wins,
        "acc_pm_meaning": stats.ACC_PM_MEANING_SHARED,
        "runs": list(runs),
        "a": a,
        "b": b,
        "ga": ga,
        "gb": gb,
        "pooled": pooled,
        "pooled_headline": pooling.summary(pooled),
        "kind": kind,
        "outcomes": outs,
        "outcome_chart": box.add(outcome_chart(outs, kind, outcome_title(kind, metric))),
        "test": test,
        "headline": outcome.summary_line(test) if test is not None else None,
        "scorers": scorer_table(queries.scorers(wh, ids), runs),
        "groups": group_table(queries.group_outcomes(wh, ids), runs, kind),
        "terminations": side_by_side([r for r in term_rows if r["n"] or r["terminated_by"] == "answer"], runs,
                                     key="terminated_by", order=TERMINATION_ORDER, fields=("n", "share", "accuracy")),
        "terminations_chart": box.add(share_chart(term_rows, runs, key="terminated_by", order=TERMINATION_ORDER,
                                                  title="How the trajectories ended")),
        "tools": side_by_side(usage, runs, key="tool", order=tools, fields=("n", "share", "n_failed")),
        "tools_chart": box.add(share_chart(usage, runs, key="tool", order=tools, title="Share of the calls per tool")),
        "statuses": side_by_side(queries.statuses(wh, ids), runs, key="status", order=STATUS_ORDER),
        "heatmap_chart": box.add(charts.heatmaps(heat, runs=[r.chart_label for r in runs], tools=heat_tools,
                                                 title="Tool transitions P(next | prev)") if heat else None),
        "transition_diffs": queries.transition_differences(wh, ga.run_ids, gb.run_ids),
        "trigrams": {r.run_id: queries.trigrams(wh, r.run_id) for r in runs},
        "resources": [res.get(r.run_id, {}) for r in runs],
        "dist_charts": distributions(wh, runs, box),
        "differing": differing[:MAX_DIFFERING],
        "pooled_rows": pooled.differing[:MAX_DIFFERING],
        "n_differing": len(differing),
        "item_ids": list(dict.fromkeys(item_ids + (behaviours["item_ids"] if behaviours else []))),
        "benchmark_sections": list(extra.compare(wh, groups, box)) if extra and extra.compare else [],
        "transitions_note": extra.transitions_note if extra is not None else "",
        "tool_order_own": bool(order),
        **covered,
        "clustered": clustered_tables.compare_block(wh, str(a.benchmark), ga, gb, cluster),
        "budget": budget_curves.section(wh, runs[:MAX_BUDGET_RUNS], box),
        "behaviours": behaviours,
    }
    return context, box
