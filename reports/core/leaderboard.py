"""The shared `leaderboard`: one table per benchmark the warehouse holds (or the one asked for), a row per
model run group (its runs under the benchmark's condition, every epoch or replicate pooled per item).

A row: the metric's score (the benchmark's primary metric or ``--metric``'s; the mean of its per-item
values, :func:`reports.core.pooling.values_source`, each item's runs averaged first; rows best first by the
metric's direction) with its 95% interval (Wilson for one run of a binary score, else a
bootstrap over items), the items it is over of the items in scope ("3 of 103", with the coverage line
and the intention-to-treat value where some are missing: reports/core/coverage.py), the runs pooled,
all tokens (incl. cache reads) per item and cost, and how the trajectories ended (answer, a limit, an
error). Runs imported without trajectories (SciExplore's responses files) are rows too: their figures
come from the mart ``imported_run_summary`` and their values from ``item_metric_values``. For a
benchmark whose conditions are paradigms (SciExplore) each (model, paradigm) is a row of one table. A
benchmark may add its own leaderboard page around these tables (the registry's ``pages["leaderboard"]``:
AgentHop's Table 2 beneath them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthop.harness.errors import AgentHopError

from .. import stats
from ..values import as_float
from ..warehouse import Warehouse
from . import clusters, cost_quality, coverage, marts, metrics, pooling, registry
from .runs import RunInfo, benchmark_conditions, check_benchmark, in_condition, shared_runs
from .value_columns import ValueColumns

#: run_summary's token column the table shows, the first one the mart has (all_tokens counts cache reads)
TOKEN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("all_tokens", "all tokens (incl. cache reads)"),
    ("total_tokens", "total tokens (prompt + completion + cache write; without cache reads)"),
)
#: runs imported without trajectories, with run_summary's columns the table reads
IMPORTED = "main.imported_run_summary"


def token_column(wh: Warehouse) -> tuple[str, str]:
    cols = marts._columns(wh).get(marts.RUN_SUMMARY, ())
    return next(((c, label) for c, label in TOKEN_COLUMNS if c in cols), TOKEN_COLUMNS[-1])


def _sum(runs: Sequence[RunInfo], col: str) -> float | None:
    vals = [as_float(r.summary.get(col)) for r in runs]
    present = [v for v in vals if v is not None]
    return sum(present) if present else None


def imported_runs(wh: Warehouse) -> list[RunInfo]:
    """The runs of ``imported_run_summary`` (none on a warehouse built without it)."""
    if not marts.has(wh, IMPORTED):
        return []
    rows = wh.rows(f"SELECT * FROM {IMPORTED} ORDER BY benchmark, model, condition, replicate, run_id")
    return [RunInfo(run_id=str(r["run_id"]), model=str(r["model"]), condition=str(r["condition"] or ""),
                    replicate=int(r["replicate"] or 0), backend=r.get("backend"), n_items=r.get("n"),
                    is_simulated=r.get("is_simulated"), summary=dict(r), benchmark=str(r["benchmark"]))
            for r in rows]


def board_runs(wh: Warehouse) -> list[RunInfo]:
    """Every run of every benchmark: run_summary's, then the imported ones it lacks (an empty warehouse is a
    user error saying so)."""
    imported = imported_runs(wh)
    (n,) = wh.con.execute(f"SELECT count(*) FROM {marts.RUN_SUMMARY}").fetchone()  # type: ignore[misc]
    runs = shared_runs(wh) if n or not imported else []
    seen = {r.run_id for r in runs}
    return runs + [r for r in imported if r.run_id not in seen]


def is_imported(run: RunInfo) -> bool:
    """A run of ``imported_run_summary`` (its rows carry the run group; run_summary's do not)."""
    return "run_group" in run.summary


def row(group: pooling.RunGroup, values: pooling.Values | ValueColumns, token_col: str,
        cov_rows: dict[str, coverage.RunCoverage] | None = None, worst: float | None = None,
        noun: str = "items", clustering: clusters.Clustering | None = None) -> dict[str, Any]:
    """One model's row: its pooled score with interval, n of the scope (and the intention-to-treat value
    where some are missing), repeats, all tokens, cost and terminations."""
    own = ValueColumns.of(values).select(group.run_ids)
    means = pooling.item_means(own, group.run_ids)
    xs = list(means.values())
    binary = pooling.is_binary(own)
    mean = sum(xs) / len(xs) if xs else None
    if binary and group.n_runs == 1:
        k = int(sum(xs))
        ci, interval = stats.wilson_interval(k, len(xs)), "Wilson"
    else:
        ci, interval = stats.bootstrap_mean_interval(xs), "bootstrap"
    n_clusters = len(xs)
    cl = clusters.declared_interval(means, clustering)
    if cl is not None:  # items share clusters of a declared field: the cluster-robust t interval
        ci, interval, n_clusters = (None if cl.lo is None else (cl.lo, cl.hi)), cl.method, cl.n_clusters
    n_traj = int(_sum(group.runs, "n") or 0)
    tokens = _sum(group.runs, token_col)
    usd = _sum(group.runs, "total_usd")
    cov = coverage.of_group(own, group.run_ids, cov_rows or {}, noun, group.repeats.plural)
    itt = coverage.itt_mean(own, group.run_ids, cov.n_scope, worst) if cov.partial else None
    return {
        "group": group, "model": group.model, "label": group.label or group.model, "mean": mean, "ci": ci,
        "interval": interval, "binary": binary,
        "n_items": len(xs), "n_clusters": n_clusters, "n_runs": group.n_runs, "n_trajectories": n_traj, "coverage": cov, "itt": itt,
        "tokens": tokens, "tokens_per_item": tokens / n_traj if tokens is not None and n_traj else None,
        "usd": usd, "usd_per_item": usd / n_traj if usd is not None and n_traj else None,
        "answer": (_sum(group.runs, "n_answer") or 0) / n_traj if n_traj else None,
        "limit": (_sum(group.runs, "n_limit") or 0) / n_traj if n_traj else None,
        "error": (_sum(group.runs, "n_error") or 0) / n_traj if n_traj else None,
        "simulated": group.simulated,
    }


REPORTED = "reported_results"


def reported(wh: Warehouse, benchmark: str | None = None) -> list[dict[str, Any]]:
    """Scores an imported record reports without its instances (``raw.reported_results``, optional;
    docs/interchange.md#reported-results): shown as they were reported, never pooled with runs."""
    if not wh.has_table("raw", REPORTED):
        return []
    where, params = ("WHERE benchmark = ?", [benchmark]) if benchmark else ("", [])
    return wh.rows(f"SELECT benchmark, model, metric, score, direction, ci_lower, ci_upper, num_samples, organization "
                   f"FROM raw.{REPORTED} {where} ORDER BY benchmark, metric, "
                   "CASE WHEN direction = 'lower_is_better' THEN score ELSE -score END, model", params)


def _per_condition(benchmark: str) -> bool:
    """Whether each of the benchmark's conditions makes a system of its own (paradigms: a row per model and
    paradigm) rather than an ablation of one (a table per condition)."""
    from agenthop.harness import benchmarks

    return benchmark in benchmarks.names() and benchmarks.get(benchmark).condition_kind == "paradigms"


def _groups(mine: Sequence[RunInfo], benchmark: str, condition: str | None) -> tuple[list[pooling.RunGroup], list[str]]:
    groups, left_out = [], []
    per_condition = condition is None and _per_condition(benchmark)
    for model in sorted({r.model for r in mine}):
        cands = [r for r in mine if r.model == model]
        if per_condition:
            conds = sorted({r.condition for r in cands})
            for cond in conds:
                g = pooling.make_group([r for r in cands if r.condition == cond])
                g.label = f"{model} ({cond})" if cond else model
                groups.append(g)
            continue
        try:
            groups.append(pooling.make_group(in_condition(cands, condition, model)))
        except AgentHopError:
            left_out.append(model)
    if len({g.condition for g in groups}) == 1:  # one paradigm: the heading names it
        for g in groups:
            g.label = g.model
    return groups, left_out


def board(wh: Warehouse, benchmark: str, runs: Sequence[RunInfo], condition: str | None,
          metric: metrics.Metric | None = None, cluster: str | None = None) -> dict[str, Any]:
    """The table of one benchmark on `metric`: a row per model run group, best first by the metric's
    direction (by name without one)."""
    mine = [r for r in runs if r.benchmark == benchmark]
    has_conditions = bool(benchmark_conditions(benchmark))
    groups, left_out = _groups(mine, benchmark, condition)
    ids = [rid for g in groups for rid in g.run_ids]
    values = pooling.columns_source(metric)(wh, ids)  # item_metric_values covers responses-file runs too
    tok_col, tok_label = token_column(wh)
    cov_rows = coverage.run_coverage(wh, ids)
    worst = coverage.primary_worst(wh, benchmark, metric.name if metric is not None else None)
    noun = coverage.noun_of(benchmark)
    sign = metric.sign if metric is not None else 1
    clustering = clusters.resolve(wh, benchmark, cluster)
    rows = sorted((row(g, values, tok_col, cov_rows, worst, noun, clustering) for g in groups),
                  key=lambda x: (x["mean"] is None, -sign * (x["mean"] or 0.0), x["model"], x["label"]))
    shown = {g.condition for g in groups}
    return {
        "benchmark": benchmark,
        "condition": next(iter(shown)) if has_conditions and len(shown) == 1 else "",
        "has_conditions": has_conditions,
        "per_condition": has_conditions and len(shown) > 1,
        "rows": rows,
        "left_out": left_out,
        "repeats": registry.repeats_of(benchmark),
        "has_cost": any(r["usd"] is not None for r in rows),
        "token_label": tok_label,
        "token_short": "all tokens" if tok_col == "all_tokens" else "total tokens",
        "n_runs": sum(r["n_runs"] for r in rows),
        "noun": noun,
        "missing_rule": registry.missing_rule_of(benchmark),
        "partial": any(r["coverage"].partial for r in rows),
        "has_itt": any(r["itt"] is not None for r in rows),
        "imported": any(is_imported(r) for g in groups for r in g.runs),
        "clustering": clustering,
        "clustered": any(r["interval"] == "clustered t" for r in rows),
        "cluster_note": clustering.describe(sorted(values.sample_set())),
        "frontier": cost_quality.frontier(wh, benchmark, groups, values,
                                         metric.direction if metric is not None else None),
        "reported": reported(wh, benchmark),
        "metric": metric,
    }


def build(wh: Warehouse, benchmark: str | None = None, condition: str | None = None,
          metric: str | None = None, cluster: str | None = None) -> dict[str, Any]:
    """The shared leaderboard's context: ``boards``, one per benchmark (only `benchmark` when given), each
    on `metric` (resolved in each benchmark; None: its primary metric). Kept on `wh` (opened read-only, so
    its marts do not change) for the next call with the same arguments and page metric: a site builds it
    for its plan, the leaderboard page and every model page. The context is shared by those callers: each
    copies what it adds to, never changing it in place."""
    shown = metrics.current(wh)
    key = (benchmark, condition, metric, cluster, shown.name if shown else None)
    memo = wh.memo.setdefault("leaderboard", {})
    if key not in memo:
        memo[key] = _build(wh, benchmark, condition, metric, cluster)
    return memo[key]


def _build(wh: Warehouse, benchmark: str | None, condition: str | None, metric: str | None,
           cluster: str | None) -> dict[str, Any]:
    marts.require_shared(wh)
    runs = board_runs(wh)  # an empty warehouse is a user error saying so
    check_benchmark(runs, benchmark)
    held = {str(r.benchmark) for r in runs}
    benches = [benchmark] if benchmark else sorted(held | {str(r["benchmark"]) for r in reported(wh)})
    boards = [board(wh, b, runs, condition, metrics.resolve(wh, b, metric if b in held else None),
                    cluster)
              for b in benches]
    return {"boards": boards, "coverage_rule": coverage.RULE}
