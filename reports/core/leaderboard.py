"""The shared `leaderboard`: one table per benchmark the warehouse holds (or the one asked for), a row per
model run group (its runs under the benchmark's condition, every epoch or replicate pooled per item).

A row: the primary score (the mean of the per-item values of :data:`reports.core.pooling.ITEM_VALUES`,
each item's runs averaged first) with its 95% interval (Wilson for one run of a binary score, else a
bootstrap over items), the items it is over, the runs pooled, tokens per item and cost, and how the
trajectories ended (answer, a limit, an error). A benchmark may add its own leaderboard page around
these tables (the registry's ``pages["leaderboard"]``: AgentHop's Table 2 beneath them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthop.harness.errors import AgentHopError

from .. import stats
from ..values import as_float
from ..warehouse import Warehouse
from . import clusters, cost_quality, marts, pooling, registry
from .runs import RunInfo, benchmark_conditions, check_benchmark, in_condition, shared_runs

#: run_summary's token column the table shows, the first one the mart has (all_tokens counts cache reads)
TOKEN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("all_tokens", "all tokens (prompt + cache read + cache write + completion)"),
    ("total_tokens", "total tokens (prompt + completion + cache write)"),
)


def token_column(wh: Warehouse) -> tuple[str, str]:
    cols = marts._columns(wh).get(marts.RUN_SUMMARY, ())
    return next(((c, label) for c, label in TOKEN_COLUMNS if c in cols), TOKEN_COLUMNS[-1])


def _sum(runs: Sequence[RunInfo], col: str) -> float | None:
    vals = [as_float(r.summary.get(col)) for r in runs]
    present = [v for v in vals if v is not None]
    return sum(present) if present else None


def row(group: pooling.RunGroup, values: pooling.Values, token_col: str,
        clustering: clusters.Clustering | None = None) -> dict[str, Any]:
    """One model's row: its pooled score with interval, n, repeats, tokens, cost and terminations."""
    means = pooling.item_means(values, group.run_ids)
    xs = list(means.values())
    own = {k: v for k, v in values.items() if k[0] in group.run_ids}
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
    return {
        "group": group, "model": group.model, "mean": mean, "ci": ci, "interval": interval, "binary": binary,
        "n_items": len(xs), "n_clusters": n_clusters, "n_runs": group.n_runs, "n_trajectories": n_traj,
        "tokens_per_item": tokens / n_traj if tokens is not None and n_traj else None,
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


def board(wh: Warehouse, benchmark: str, runs: Sequence[RunInfo], condition: str | None,
          cluster: str | None = None) -> dict[str, Any]:
    """The table of one benchmark: a row per model run group, best first."""
    mine = [r for r in runs if r.benchmark == benchmark]
    has_conditions = bool(benchmark_conditions(benchmark))
    groups, left_out = [], []
    for model in sorted({r.model for r in mine}):
        cands = [r for r in mine if r.model == model]
        try:
            groups.append(pooling.make_group(in_condition(cands, condition, model)))
        except AgentHopError:
            left_out.append(model)
    values = pooling.ITEM_VALUES(wh, [rid for g in groups for rid in g.run_ids])
    tok_col, tok_label = token_column(wh)
    clustering = clusters.resolve(wh, benchmark, cluster)
    rows = sorted((row(g, values, tok_col, clustering) for g in groups),
                  key=lambda x: (x["mean"] is None, -(x["mean"] or 0.0), x["model"]))
    shown = {g.condition for g in groups}
    return {
        "benchmark": benchmark,
        "condition": next(iter(shown)) if has_conditions and len(shown) == 1 else "",
        "has_conditions": has_conditions,
        "rows": rows,
        "left_out": left_out,
        "repeats": registry.repeats_of(benchmark),
        "has_cost": any(r["usd"] is not None for r in rows),
        "token_label": tok_label,
        "n_runs": sum(r["n_runs"] for r in rows),
        "clustering": clustering,
        "clustered": any(r["interval"] == "clustered t" for r in rows),
        "cluster_note": clustering.describe(sorted({sid for (rid, sid) in values})),
        "frontier": cost_quality.frontier(wh, benchmark, groups, values),
        "reported": reported(wh, benchmark),
    }


def build(wh: Warehouse, benchmark: str | None = None, condition: str | None = None,
          cluster: str | None = None) -> dict[str, Any]:
    """The shared leaderboard's context: ``boards``, one per benchmark (only `benchmark` when given)."""
    marts.require_shared(wh)
    runs = shared_runs(wh)  # an empty warehouse is a user error saying so
    check_benchmark(runs, benchmark)
    benches = [benchmark] if benchmark else sorted({str(r.benchmark) for r in runs} |
                                                   {str(r["benchmark"]) for r in reported(wh)})
    boards = [board(wh, b, runs, condition, cluster) for b in benches]
    return {"boards": boards}
