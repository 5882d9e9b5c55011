"""AgentHop's runs as its pages show them: the runs the shared picker picks (reports/core/runs.py, over
run_summary), each with its model_summary row (Table 2's columns) as its summary.

There is one run picker, the shared one: this module only adds AgentHop's columns to the runs it picks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from agenthop.harness.errors import AgentHopError

from ...core.runs import RunInfo, label_runs, model_runs, pick_runs, shared_runs
from ...warehouse import Warehouse
from .sql import in_list

__all__ = ["SUMMARY_METRICS", "RunInfo", "all_runs", "label_runs", "resolve_runs", "runs_of_model", "with_summary"]

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


def with_summary(wh: Warehouse, runs: Sequence[RunInfo]) -> list[RunInfo]:
    """`runs` (picked by the shared picker) with their model_summary rows: the row is the run's summary,
    its n_items the run's; a run without a row (not an AgentHop run, or marts older than its load) is a
    user error naming it."""
    if not runs:
        return []
    wh.require_runs()
    ids = [r.run_id for r in runs]
    rows = {str(r["run_id"]): r for r in wh.rows(f"SELECT * FROM model_summary WHERE run_id IN {in_list(len(ids))}", ids)}
    out = []
    for run in runs:
        row = rows.get(run.run_id)
        if row is None:
            raise AgentHopError(f"run {run.run_id} ({run.model}) is not in model_summary: AgentHop's pages show "
                                "AgentHop's runs; if it is one, rebuild the marts with dbt build")
        out.append(dataclasses.replace(
            run, condition=str(row.get("condition") or "full"), n_items=row.get("n_items"),
            summary={k: row.get(k) for k in row}))
    return out


def all_runs(wh: Warehouse) -> list[RunInfo]:
    """Every AgentHop run, ordered by model, condition, replicate (with its model_summary row)."""
    from .. import BENCHMARK  # the package imports its pages, which import this module

    wh.require_runs()
    return with_summary(wh, [r for r in shared_runs(wh) if r.benchmark == BENCHMARK])


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
