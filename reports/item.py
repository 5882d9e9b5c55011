"""`item`: one item's trajectories side by side, turn-aligned."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthop.harness.errors import AgentHopError

from . import charts, queries
from .queries import RunInfo
from .render import Charts
from .trajectories import align, budget_curve
from .warehouse import Warehouse

MARTS = ("model_summary", "fct_trajectory", "fct_tool_call")


def build(wh: Warehouse, sample_id: str, runs: Sequence[RunInfo]) -> tuple[dict[str, Any], Charts]:
    wh.require(MARTS)
    ids = [r.run_id for r in runs]
    present = queries.item_exists(wh, sample_id, ids)
    if not present:
        examples = [r["sample_id"] for r in wh.rows(
            "SELECT DISTINCT sample_id FROM fct_trajectory WHERE run_id = ? ORDER BY sample_id LIMIT 5", [ids[0]])]
        raise AgentHopError(
            f"item {sample_id!r} has no trajectory in run(s) {', '.join(ids)}; items look like: {', '.join(examples)}"
        )
    traj = queries.trajectories(wh, ids, [sample_id])
    calls = queries.tool_calls(wh, ids, [sample_id])
    box = Charts()
    curve = budget_curve(calls, runs)
    chart_id = box.add(charts.step_lines(curve, x="seq", y="spent", runs=[r.chart_label for r in runs],
                                         x_title="call (seq)", y_title="budget points spent",
                                         title="Budget spent over the trajectory") if curve else None)
    context = {
        "title": f"Item {sample_id}",
        "sample_id": sample_id,
        "runs": list(runs),
        "missing": [r for r in runs if r.run_id not in present],
        "aligned": align(sample_id, runs, traj, calls),
        "budget_chart": chart_id,
    }
    return context, box
