"""The runs of model_summary: loading, display labels, picking runs by model or run id."""

from __future__ import annotations

from collections.abc import Sequence

from agenthop.harness.errors import AgentHopError

from ..core.runs import RunInfo, label_runs
from ..warehouse import Warehouse

__all__ = ["SUMMARY_METRICS", "RunInfo", "all_runs", "label_runs", "resolve_runs", "runs_of_model"]

#: model_summary columns of docs/metrics.md#per-run-metrics, in Table 2 order.
SUMMARY_METRICS: tuple[str, ...] = (
    "accuracy",
    "recall_st",
    "recall_mt",
    "secrec_st",
    "secrec_mt",
    "conversion_st",
    "conversion_mt",
    "calls_per_turn",
    "avg_tokens_k",
    "avg_turns",
    "avg_budget",
    "max_tokens_rate",
    "max_turns_rate",
    "max_budget_rate",
    "error_rate",
    "na_rate",
)


def all_runs(wh: Warehouse) -> list[RunInfo]:
    """Every run of model_summary, ordered by model, condition, replicate."""
    wh.require_runs()
    rows = wh.rows("SELECT * FROM model_summary ORDER BY model, condition, replicate, run_id")
    out = []
    for r in rows:
        out.append(
            RunInfo(
                run_id=str(r["run_id"]),
                model=str(r["model"]),
                condition=str(r.get("condition") or "full"),
                replicate=int(r.get("replicate") or 0),
                backend=r.get("backend"),
                family=r.get("family"),
                tier=r.get("tier"),
                benchmark_sha256=r.get("benchmark_sha256"),
                n_items=r.get("n_items"),
                is_simulated=r.get("is_simulated"),
                summary={k: r.get(k) for k in r},
            )
        )
    return out


def resolve_runs(
    wh: Warehouse,
    models: Sequence[str] | None = None,
    run_ids: Sequence[str] | None = None,
    condition: str = "full",
) -> list[RunInfo]:
    """Runs named by model (its `condition` run with the lowest replicate) or by run id."""
    runs = all_runs(wh)
    picked: list[RunInfo] = []
    if run_ids:
        by_id = {r.run_id: r for r in runs}
        for rid in run_ids:
            if rid not in by_id:
                known = ", ".join(sorted(by_id)[:40])
                raise AgentHopError(f"unknown run id {rid!r}; known run ids: {known}")
            picked.append(by_id[rid])
    for m in models or ():
        cands = [r for r in runs if r.model == m]
        if not cands:
            known = ", ".join(sorted({r.model for r in runs}))
            raise AgentHopError(f"unknown model {m!r}; known models: {known}")
        in_cond = [r for r in cands if r.condition == condition]
        if not in_cond:
            have = ", ".join(sorted({r.condition for r in cands}))
            raise AgentHopError(f"model {m!r} has no {condition!r} run (it has: {have}); use --condition or --runs")
        picked.append(min(in_cond, key=lambda r: (r.replicate, r.run_id)))
    seen: set[str] = set()
    for r in picked:
        if r.run_id in seen:
            if run_ids and r.run_id in run_ids:
                raise AgentHopError(f"run {r.run_id!r} is given twice; name different runs")
            raise AgentHopError(
                f"model {r.model!r} is given twice (both pick run {r.run_id!r}); to compare its "
                f"replicates pass --runs RUN_A,RUN_B, or use: agenthop-report reruns --model {r.model}"
            )
        seen.add(r.run_id)
    return picked


def runs_of_model(wh: Warehouse, model: str) -> list[RunInfo]:
    runs = all_runs(wh)
    mine = [r for r in runs if r.model == model]
    if not mine:
        known = ", ".join(sorted({r.model for r in runs}))
        raise AgentHopError(f"unknown model {model!r}; known models: {known}")
    return mine
