"""The runs of model_summary: loading, display labels, picking runs by model or run id."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.runs import RunInfo, label_runs, model_runs, pick_runs
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
                benchmark="agenthop",
            )
        )
    return out


def resolve_runs(
    wh: Warehouse,
    models: Sequence[str] | None = None,
    run_ids: Sequence[str] | None = None,
    condition: str | None = None,
) -> list[RunInfo]:
    """Runs of model_summary named by model (its `condition` run, None: AgentHop's default, with the lowest replicate) or by run id:
    the shared picker (core/runs.py::pick_runs) over AgentHop's runs."""
    return pick_runs(all_runs(wh), models, run_ids, condition)


def runs_of_model(wh: Warehouse, model: str) -> list[RunInfo]:
    """Every run of `model` in model_summary (core/runs.py::model_runs)."""
    return model_runs(all_runs(wh), model)
