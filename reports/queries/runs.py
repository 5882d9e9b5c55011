"""The runs of model_summary: loading, display labels, picking runs by model or run id."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthop.harness.errors import AgentHopError

from ..warehouse import Warehouse

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


@dataclass
class RunInfo:
    """One run as model_summary describes it (optional columns default to None)."""

    run_id: str
    model: str
    condition: str
    replicate: int
    backend: str | None = None
    family: str | None = None
    tier: str | None = None
    benchmark_sha256: str | None = None
    n_items: int | None = None
    is_simulated: bool | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    label: str = ""  # display name, unique within one report

    @property
    def simulated(self) -> bool:
        """model_summary.is_simulated when the mart has it, else backend = 'sim' (docs/simulated_agents.md)."""
        if self.is_simulated is not None:
            return bool(self.is_simulated)
        return self.backend == "sim"

    @property
    def chart_label(self) -> str:
        """Label for chart axes/legends, where no HTML badge is possible."""
        return f"{self.label} [SIM]" if self.simulated else self.label


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


def label_runs(runs: Sequence[RunInfo]) -> None:
    """Give each run a display label: the model name, plus condition/replicate where needed."""
    by_model: dict[str, list[RunInfo]] = {}
    for r in runs:
        by_model.setdefault(r.model, []).append(r)
    for group in by_model.values():
        conds = {r.condition for r in group}
        for r in group:
            if len(group) == 1:
                r.label = r.model
            elif len(group) == len(conds):
                r.label = f"{r.model} · {r.condition}"
            else:
                r.label = f"{r.model} · {r.condition} #{r.replicate}"
    seen: dict[str, int] = {}
    for r in runs:  # still ambiguous (same model passed twice): fall back to the run id
        seen[r.label] = seen.get(r.label, 0) + 1
    ambiguous = {label for label, n in seen.items() if n > 1}
    for r in runs:
        if r.label in ambiguous:
            r.label = f"{r.label} ({r.run_id})"


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
