"""The leaderboard's cost–quality frontier of one benchmark (docs/reports.md#cost-frontier): per model run
group, its mean cost per item against its mean metric, with bootstrap intervals on both axes and its share
of bootstrap draws on the Pareto frontier (reports/frontier.py).

Cost per item is over every attempt of the item (failed attempts were billed too): USD when every run
shown has a price (model_cost's prices applied to the item's prompt, cache and completion tokens, so the
items add up to the run's total), else all tokens (prompt + cache read + cache write + completion). A
model's item values are averaged over its pooled runs first, cost and metric alike. The metric's direction
comes from the metric catalogue (metric_defs: the benchmark's primary metric; higher is better without one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import charts
from ..frontier import N_BOOT, FrontierPoint, ModelItems, cost_quality_frontier
from ..warehouse import Warehouse
from . import marts, pooling
from .value_columns import ValueColumns

METRIC_DEFS = "main.metric_defs"
STAGED_TRAJECTORIES = "staging.stg_harness__trajectories"


def metric_direction(wh: Warehouse, benchmark: str, metric: str | None = None) -> str:
    """The catalogue's direction of `metric` (None: the benchmark's primary metric); higher_is_better when the
    warehouse has no catalogue or no row for it."""
    if not marts.has(wh, METRIC_DEFS):
        return "higher_is_better"
    where, params = ("metric = ?", [benchmark, metric]) if metric else ("is_primary", [benchmark])
    got = wh.con.execute(f"SELECT direction FROM {METRIC_DEFS} WHERE benchmark = ? AND {where} ORDER BY metric LIMIT 1",
                         params).fetchone()
    return str(got[0]) if got and got[0] else "higher_is_better"


def item_costs(wh: Warehouse, run_ids: Sequence[str]) -> tuple[ValueColumns, str]:
    """(run_id, sample_id) -> the item's cost over all its attempts, as columns, and the unit: "USD" when every
    run is priced, else "all tokens"."""
    if not run_ids:
        return ValueColumns.empty(), "all tokens"
    marks = ", ".join("?" * len(run_ids))
    priced = wh.con.execute(f"SELECT count(*) FILTER (WHERE pricing_found), count(*) FROM {marts.COST} "
                            f"WHERE run_id IN ({marks})", list(run_ids)).fetchall()[0]
    usd = priced is not None and priced[1] == len(set(run_ids)) and priced[0] == priced[1]
    if usd:
        value = ("(t.prompt_tokens * c.input_per_m + t.cache_read_tokens * c.input_per_m * c.cache_read_mult "
                 "+ t.cache_creation_tokens * c.input_per_m * c.cache_write_mult "
                 "+ t.completion_tokens * c.output_per_m) / 1e6")
    else:
        value = "t.prompt_tokens + t.cache_read_tokens + t.cache_creation_tokens + t.completion_tokens"
    table = wh.con.sql(
        f"""SELECT t.run_id, t.sample_id, sum(coalesce({value}, 0))
            FROM {STAGED_TRAJECTORIES} AS t JOIN {marts.COST} AS c ON c.run_id = t.run_id
            WHERE t.run_id IN ({marks}) GROUP BY t.run_id, t.sample_id""", params=list(run_ids)).to_arrow_table()
    return ValueColumns.from_arrow(table), "USD" if usd else "all tokens"


def model_items(group: pooling.RunGroup, values: Mapping[tuple[str, str], float] | ValueColumns,
                costs: Mapping[tuple[str, str], float] | ValueColumns) -> ModelItems:
    """A group's per-item metric and cost, each averaged over its runs, on the items that have both."""
    q = pooling.item_means(values, group.run_ids)
    c = pooling.item_means(costs, group.run_ids)
    shared = sorted(q.keys() & c.keys())
    return ModelItems(group.label or group.model, [q[s] for s in shared], [c[s] for s in shared])


def chart(points: Sequence[FrontierPoint], unit: str, direction: str) -> dict[str, Any]:
    """Each model a dot at (cost, metric) with whiskers of both intervals; frontier models filled; the model in
    the tooltip and in the table beside the chart."""
    rows = [{"model": p.label, "cost": p.cost, "cost_lo": p.cost_lo, "cost_hi": p.cost_hi, "metric": p.metric,
             "metric_lo": p.metric_lo, "metric_hi": p.metric_hi, "share": p.share,
             "frontier": "on the frontier" if p.on_frontier else "dominated"} for p in points]
    x = {"field": "cost", "type": "quantitative", "title": f"cost per item ({unit}, bootstrap 95%)",
         "scale": {"zero": False, "nice": False, "padding": 24}}
    y = {"field": "metric", "type": "quantitative", "scale": {"zero": False, "nice": False, "padding": 24},
         "title": f"metric ({'lower' if direction == 'lower_is_better' else 'higher'} is better, bootstrap 95%)"}
    tooltip = [{"field": "model"}, {"field": "cost", "format": ".4g"}, {"field": "metric", "format": ".3f"},
               {"field": "share", "format": ".0%", "title": "share of draws on the frontier"}]
    whisker = {"color": charts.WHISKER, "strokeWidth": 1.5}
    layers = [
        {"mark": {"type": "rule", **whisker}, "encoding": {"x": {**x, "field": "cost_lo"}, "x2": {"field": "cost_hi"},
                                                           "y": y}},
        {"mark": {"type": "rule", **whisker}, "encoding": {"y": {**y, "field": "metric_lo"},
                                                           "y2": {"field": "metric_hi"}, "x": x}},
        {"mark": {"type": "point", "size": 110, "opacity": 1, "strokeWidth": 2},
         "encoding": {"x": x, "y": y, "tooltip": tooltip, "color": {"value": "#2458a6"},
                      "fill": {"field": "frontier", "type": "nominal", "title": None,
                               "scale": {"domain": ["on the frontier", "dominated"], "range": ["#2458a6", "#ffffff"]},
                               "legend": {"orient": "top"}}}},
    ]  # no name labels: models of equal cost and quality would print on each other; the table names them
    return {"$schema": charts.SCHEMA, "config": charts._config(), "data": {"values": rows}, "layer": layers,
            "height": 320, "width": "container", "autosize": {"type": "fit-x", "contains": "padding"},
            "title": "Cost against quality"}


def frontier(wh: Warehouse, benchmark: str, groups: Sequence[pooling.RunGroup],
             values: Mapping[tuple[str, str], float] | ValueColumns, direction: str | None = None) -> dict[str, Any] | None:
    """The frontier of the board's groups (None with fewer than two, or a metric without a direction);
    `direction` is the shown metric's (default: the benchmark's primary metric's)."""
    direction = direction or metric_direction(wh, benchmark)
    if len(groups) < 2 or direction not in ("higher_is_better", "lower_is_better"):
        return None
    costs, unit = item_costs(wh, [rid for g in groups for rid in g.run_ids])
    values = ValueColumns.of(values)
    models = [m for m in (model_items(g, values, costs) for g in groups) if m.metric]
    if len(models) < 2:
        return None
    points = cost_quality_frontier(models, direction)  # type: ignore[arg-type]
    points.sort(key=lambda p: (p.cost, p.label))
    return {"points": points, "unit": unit, "direction": direction, "n_boot": N_BOOT, "spec": chart(points, unit, direction)}


def register_charts(boards: Sequence[dict[str, Any]], box: Any) -> None:
    """Add each board's frontier chart to the page's charts (its id under ``frontier_chart``)."""
    for bd in boards:
        fr = bd.get("frontier")
        bd["frontier_chart"] = box.add(fr["spec"]) if fr else None


__all__ = ["chart", "frontier", "item_costs", "metric_direction", "model_items", "register_charts"]
