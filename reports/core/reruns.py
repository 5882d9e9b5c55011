"""The shared `reruns` page: how much a model's results move between replicates (or Inspect epochs) of
one configuration, for any benchmark.

Per rerun group (benchmark, model, condition with two or more replicates): each replicate's accuracy
(Wilson) and mean score (bootstrap), the spread of the run-level metrics over the replicates (mean, std
with ddof = 0, range), items by how many replicates got them right, the noise floor, the replicates
compared pairwise (exact McNemar for binary outcomes, the graded tests otherwise), pass@k and pass^k
for k = 1 .. the repeats (mart ``pass_k``, with item-bootstrap intervals) and the items that flip, each
linked to its item page with the replicates side by side. Each replicate's items are stated against
the items in scope (reports/core/coverage.py); tokens are all tokens (incl. cache reads).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from .. import charts, multiplicity, stats
from ..render import Charts
from ..values import as_float
from ..warehouse import Warehouse
from . import clustered_tables, coverage, marts, metrics, outcome, queries, registry
from .registry import repeats_of
from .runs import RunInfo, benchmark_conditions, label_runs, runs_of

MAX_PAIRS = 45  # pairwise tests up to 10 replicates
#: run_summary metrics whose spread over the replicates is shown: (column, label, kind)
METRICS: tuple[tuple[str, str, str], ...] = (
    ("accuracy", "accuracy", "pct"),
    ("mean_score", "mean score", "num3"),
    ("answer_rate", "ended with an answer", "pct"),
    ("all_tokens_per_item", "all tokens (incl. cache reads) per item", "num0"),
    ("avg_turns", "turns per item", "num2"),
    ("total_usd", "cost (USD)", "num4"),
)


def _run_value(run: RunInfo, col: str) -> float | None:
    """A run-level metric of run_summary; ``all_tokens_per_item`` = all_tokens / n (total_tokens / n on a
    warehouse built before all_tokens)."""
    if col == "all_tokens_per_item":
        tokens = as_float(run.summary.get("all_tokens", run.summary.get("total_tokens")))
        n = as_float(run.summary.get("n"))
        return tokens / n if tokens is not None and n else None
    return as_float(run.summary.get(col))


def spread(runs: Sequence[RunInfo], shown: Sequence[outcome.RunOutcome] = ()) -> list[dict[str, Any]]:
    """Mean, std (ddof = 0), range and each replicate's value of the run-level metrics; with `shown` (the
    outcomes of a metric other than the primary one) its accuracy and mean score instead of the summary's."""
    own = {o.run.run_id: {"accuracy": o.accuracy, "mean_score": o.mean_score} for o in shown}
    out = []
    for col, label, kind in METRICS:
        vals = [as_float(own[r.run_id][col]) if col in own.get(r.run_id, {}) else _run_value(r, col) for r in runs]
        present = [v for v in vals if v is not None]
        if not present:
            continue
        out.append({"metric": label, "kind": kind, "values": vals, "n_runs": len(present),
                    "mean": sum(present) / len(present), "std": stats.std_pop(present),
                    "range": max(present) - min(present)})
    return out


PASS_K = "main.pass_k"
METRIC_DEFS = coverage.METRIC_DEFS


def pass_k(wh: Warehouse, benchmark: str, model: str, condition: str, metric: str | None = None
           ) -> list[dict[str, Any]]:
    """pass@k and pass^k of the model's run groups under `condition` (as the runs carry it), k = 1 .. the
    repeats, for `metric` (default: the benchmark's primary metric; none unless it is binary)."""
    if not marts.has(wh, PASS_K) or not marts.has(wh, METRIC_DEFS):
        return []
    primary = f"(SELECT metric FROM {METRIC_DEFS} WHERE benchmark = ? AND is_primary)"
    pick = "p.metric = ?" if metric else f"p.metric = {primary}"
    return wh.rows(
        f"""SELECT p.run_group, p.metric, p.k, p.n_items, p.pass_at_k, p.pass_at_k_lo, p.pass_at_k_hi,
                   p.pass_hat_k, p.pass_hat_k_lo, p.pass_hat_k_hi
            FROM {PASS_K} p WHERE p.benchmark = ? AND p.model = ? AND p.condition = ? AND {pick}
            ORDER BY p.run_group, p.k""", [benchmark, model, condition, metric or benchmark])


def _pattern_rank(pattern: Sequence[int | None]) -> tuple[int, int]:
    known = [c for c in pattern if c is not None]
    return abs(2 * sum(known) - len(known)), -len(known)


def group(wh: Warehouse, condition: str, runs: list[RunInfo], box: Charts, cluster: str | None = None) -> dict[str, Any]:
    runs = sorted(runs, key=lambda r: (r.replicate, r.run_id))
    ids = [r.run_id for r in runs]
    kind = outcome.kind_of(wh, runs)
    outs = outcome.run_outcomes(wh, runs)
    points = []
    for o in outs:
        if kind == outcome.BINARY and o.accuracy is not None and o.accuracy_ci:
            points.append({"replicate": o.run.chart_label, "value": o.accuracy, "lo": o.accuracy_ci[0],
                           "hi": o.accuracy_ci[1]})
        elif kind == outcome.GRADED and o.mean_score is not None and o.score_ci:
            points.append({"replicate": o.run.chart_label, "value": o.mean_score, "lo": o.score_ci[0],
                           "hi": o.score_ci[1]})
    rep_chart = box.add(charts.points_with_ci(
        points, category="replicate", value="value", lo="lo", hi="hi",
        title=f"{'Mean score' if kind == outcome.GRADED else 'Accuracy'} per {repeats_of(runs[0].benchmark).noun}"
              + (f" ({condition})" if condition else ""),
        **({"x_title": "mean score (bootstrap 95%)", "fmt": ".3f"} if kind == outcome.GRADED else {}))
        if points else None)

    flips = queries.flips(wh, str(runs[0].benchmark), runs[0].model, runs[0].condition)  # as the runs carry it
    complete = [f for f in flips if int(f["n_runs"]) == len(runs)]  # items every replicate answered
    tally: dict[int, int] = {}
    for f in complete:
        tally[int(f["n_correct"])] = tally.get(int(f["n_correct"]), 0) + 1
    hist = [{"n_correct": k, "n_runs": len(runs), "n_items": n} for k, n in sorted(tally.items())]
    hist_chart = box.add(charts.simple_bars(
        [{"correct in": f"{h['n_correct']} of {h['n_runs']}", "items": h["n_items"]} for h in hist],
        x="correct in", y="items", x_title=f"{registry.outcomes_of(runs[0].benchmark).correct} in k of n {repeats_of(runs[0].benchmark).plural}", y_title="items",
        title="Per-item consistency" + (f" ({condition})" if condition else ""), integer=True) if hist else None)
    floor = stats.noise_floor([int(f["n_correct"]) for f in complete], len(runs))

    pairs = []
    shown_pairs = list(itertools.combinations(runs, 2))[:MAX_PAIRS]
    for (a, b), res in zip(shown_pairs, outcome.paired_many(wh, shown_pairs, kind)):
        diff = res.mcnemar.diff if res.mcnemar is not None else (res.graded.mean_diff if res.graded else None)
        pairs.append({"a": a, "b": b, "res": res, "diff": diff,
                      "within_floor": kind == outcome.BINARY and floor is not None and diff is not None
                      and abs(diff) <= floor.floor})
    for pair, adj in zip(pairs, multiplicity.adjust([p["res"].p for p in pairs], PAIRS_ADJUST)):
        pair["p_adj"] = adj  # over the pairs shown: McNemar's p, or Wilcoxon's for graded scores

    patterns = queries.item_patterns(wh, ids)
    unstable = []
    for f in flips:
        moved = bool(f["flipped"]) or (kind == outcome.GRADED and (as_float(f["score_spread"]) or 0) > 0)
        if not moved:
            continue
        p = patterns.get(f["sample_id"], {"correct": [], "scores": []})
        unstable.append({**f, "pattern": p["correct"], "scores": p["scores"]})
    unstable.sort(key=lambda u: (_pattern_rank(u["pattern"]), -(as_float(u["score_spread"]) or 0), u["sample_id"]))
    cov_rows = coverage.run_coverage(wh, ids)
    noun = coverage.noun_of(runs[0].benchmark)
    covs = {o.run.run_id: coverage.of_run(o.n_scored if kind == outcome.GRADED else o.n, cov_rows.get(o.run.run_id),
                                          noun) for o in outs}
    partial = [(o.run, covs[o.run.run_id]) for o in outs if covs[o.run.run_id].partial]
    shown = metrics.current(wh)  # the page's metric (--metric), else the primary one
    pk = pass_k(wh, str(runs[0].benchmark), runs[0].model, runs[0].condition, shown.name if shown else None)
    return {"condition": condition, "runs": runs, "kind": kind, "outcomes": outs, "rep_chart": rep_chart,
            "coverage": covs, "partial": partial, "pass_k": pk,
            "pass_k_groups": len({p["run_group"] for p in pk}),
            "spread": spread(runs, outs if not getattr(metrics.current(wh), "is_primary", True) else ()), "hist": hist, "hist_chart": hist_chart, "floor": floor, "pairs": pairs,
            "n_pairs_total": len(runs) * (len(runs) - 1) // 2, "unstable": unstable,
            "pairs_adjust": multiplicity.caption(PAIRS_ADJUST, sum(1 for p in pairs if p["res"].p is not None),
                                                 "pair", "shown"),
            "n_items": len(flips), "n_complete": len(complete),
            "clustered": clustered_tables.reruns_block(wh, str(runs[0].benchmark), runs, cluster)}


#: multiplicity adjustment over the replicate pairs shown (docs/reports.md#multiplicity)
PAIRS_ADJUST: multiplicity.Method = "holm"


def build(wh: Warehouse, model: str, benchmark: str | None = None,
          cluster: str | None = None) -> tuple[dict[str, Any], Charts, list[RunInfo]]:
    marts.require_shared(wh)
    runs = runs_of(wh, model, benchmark)
    label_runs(runs)
    rep = repeats_of(runs[0].benchmark)
    has_conditions = bool(benchmark_conditions(runs[0].benchmark))
    by_cond: dict[str, list[RunInfo]] = {}
    for r in runs:  # a benchmark without conditions: its runs are one group, whatever they carry
        by_cond.setdefault(r.condition if has_conditions else "", []).append(r)
    for members in by_cond.values():
        for r in members:
            r.label = f"{r.model} · {r.condition + ' · ' if has_conditions and r.condition else ''}{rep.name(r)}"
    box = Charts()
    groups = [group(wh, cond, members, box, cluster) for cond, members in sorted(by_cond.items())
              if len({m.replicate for m in members}) >= 2]
    singles = [r for _, members in sorted(by_cond.items()) if len({m.replicate for m in members}) < 2 for r in members]
    bench = str(runs[0].benchmark)
    extra = registry.sections_for(bench)
    context = {
        "title": f"Reruns of {model}",
        "model": model,
        "benchmark": bench,
        "rep": rep,
        "oc": registry.outcomes_of(bench),
        "noun": coverage.noun_of(bench),
        "coverage_rule": coverage.RULE,
        "acc_pm_meaning": stats.ACC_PM_MEANING_SHARED,
        "has_conditions": has_conditions,
        "simulated": any(r.simulated for r in runs),
        "groups": groups,
        "singles": singles,
        "benchmark_sections": list(extra.reruns(wh, runs, box)) if extra and extra.reruns else [],
    }
    return context, box, runs
