"""`reruns`: how much a model's accuracy moves between replicates of one configuration."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from .. import charts, multiplicity, stats
from ..render import Charts
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
MAX_PAIRS = 45  # pairwise McNemar tables up to 10 replicates



def _group(wh: Warehouse, model: str, condition: str, runs: list[RunInfo], box: Charts,
           variance: list[dict[str, Any]], flips_hist: list[dict[str, Any]]) -> dict[str, Any]:
    runs = sorted(runs, key=lambda r: (r.replicate, r.run_id))
    ids = [r.run_id for r in runs]
    counts = queries.profile_counts(wh, ids)

    # Table 17
    var_rows = sorted((v for v in variance if v["condition"] == condition),
                      key=lambda v: (METRIC_ORDER.index(v["metric"]) if v["metric"] in METRIC_ORDER else 99,
                                     v["metric"]))
    table17 = [{"metric": v["metric"], "label": METRIC_LABELS.get(v["metric"], v["metric"]), "fraction": v["metric"] in FRACTION_METRICS, "n_runs": v["n_runs"],
                **({k: _f(v[k]) for k in ("mean", "std", "range")} if applies(condition, v["metric"])
                   else {"mean": None, "std": None, "range": None})}  # n/a, e.g. a closed-book recall
               for v in var_rows]

    # per-replicate accuracy with Wilson intervals
    reps = []
    for r in runs:
        c = counts.get(r.run_id, {})
        n, k = c.get("n", 0), c.get("correct", 0)
        ci = stats.wilson_interval(k, n)
        reps.append({"run": r, "n": n, "k": k, "text": stats.format_acc_pm(k, n),
                     "acc": k / n if n else None, "lo": ci[0] if ci else None, "hi": ci[1] if ci else None})
    rep_chart = box.add(charts.points_with_ci(
        [{"replicate": r["run"].chart_label, "run_id": r["run"].run_id, "accuracy": r["acc"], "lo": r["lo"], "hi": r["hi"]}
         for r in reps if r["acc"] is not None],
        category="replicate", value="accuracy", lo="lo", hi="hi",
        title=f"Accuracy per replicate ({condition}), Wilson 95%")) if any(r["acc"] is not None for r in reps) else None

    # flip matrix summary: items correct in k of n replicates
    hist = [h for h in flips_hist if h["condition"] == condition]
    if not hist:
        per_item = queries.item_correct_counts(wh, ids)
        tally: dict[int, int] = {}
        for k in per_item:
            tally[k] = tally.get(k, 0) + 1
        hist = [{"condition": condition, "n_runs": len(ids), "n_correct": k, "n_items": n}
                for k, n in sorted(tally.items())]
    hist_chart = box.add(charts.simple_bars(
        [{"correct in k replicates": f"{h['n_correct']} of {h['n_runs']}", "items": int(h["n_items"])} for h in hist],
        x="correct in k replicates", y="items", x_title="correct in k of n replicates", y_title="items",
        title=f"Per-item consistency ({condition})")) if hist else None

    # noise floor over the items every replicate answered
    per_item = queries.item_correct_counts(wh, ids)
    floor = stats.noise_floor(per_item, len(ids))

    # pairwise McNemar between replicates
    pairs = []
    for a, b in list(itertools.combinations(runs, 2))[:MAX_PAIRS]:
        row = queries.paired_counts(wh, a.run_id, b.run_id)[0]
        t = stats.paired_test_from_counts(int(row["n"]), int(row["a_only"]), int(row["b_only"]))
        pairs.append({"a": a, "b": b, "t": t,
                      "within_floor": floor is not None and t.diff is not None and abs(t.diff) <= floor.floor})
    for pair, adj in zip(pairs, multiplicity.adjust([p["t"].p for p in pairs], PAIRS_ADJUST)):
        pair["p_adj"] = adj

    unstable = queries.unstable_items(wh, ids)
    return {
        "condition": condition,
        "runs": runs,
        "table17": table17,
        "replicates": reps,
        "rep_chart": rep_chart,
        "hist": hist,
        "hist_chart": hist_chart,
        "floor": floor,
        "pairs": pairs,
        "n_pairs_total": len(runs) * (len(runs) - 1) // 2,
        "pairs_adjust": multiplicity.caption(PAIRS_ADJUST, len(pairs), "pair", "shown"),
        "unstable": unstable,
        "n_unstable": len(unstable),
    }


#: multiplicity adjustment over the replicate pairs shown (docs/reports.md#multiplicity)
PAIRS_ADJUST: multiplicity.Method = "holm"


def build(wh: Warehouse, model: str, picked: Sequence[RunInfo] = ()) -> tuple[dict[str, Any], Charts, list[RunInfo]]:
    """The page of `model`'s replicates: `picked` (the shared picker's runs of the model), else all of them."""
    wh.require(MARTS)
    runs = queries.with_summary(wh, picked) if picked else queries.runs_of_model(wh, model)
    queries.label_runs(runs)
    by_cond: dict[str, list[RunInfo]] = {}
    for r in runs:
        by_cond.setdefault(r.condition, []).append(r)
    variance = queries.rerun_variance(wh, model)
    flips_hist = queries.flip_histogram(wh, model)
    box = Charts()
    groups = [
        _group(wh, model, cond, members, box, variance, flips_hist)
        for cond, members in sorted(by_cond.items())
        if len({m.replicate for m in members}) >= 2
    ]
    singles = [r for cond, members in sorted(by_cond.items()) if len({m.replicate for m in members}) < 2
               for r in members]
    context = {
        "title": f"Reruns of {model}",
        "model": model,
        "simulated": any(r.simulated for r in runs),
        "groups": groups,
        "singles": singles,
    }
    return context, box, runs
