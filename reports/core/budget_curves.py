"""The compare page's budget curves (docs/metrics.md#budget-curves): each run's primary metric had it been cut
at b tokens, turns, tool points or USD, from the budget_curves mart, with 95% intervals (reports/budget.py),
one line per run of either side on each axis the runs have."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import charts
from ..budget import budget_interval
from ..warehouse import Warehouse
from . import marts
from .runs import RunInfo

MART = "main.budget_curves"
AXIS_TITLES = {"tokens": "cap on tokens per item", "turns": "cap on turns", "tool_points": "cap on tool points",
               "usd": "cap on USD per item"}
#: the caps the table lists: 5, 10, 15 and 20 of the 20 steps
TABLE_STEPS = (5, 10, 15, 20)


def rows(wh: Warehouse, runs: Sequence[RunInfo]) -> list[dict[str, Any]]:
    """Every cap of every axis of `runs`, with its interval (empty without the mart: built before it existed)."""
    if not runs or not marts.has(wh, MART):
        return []
    label = {r.run_id: r.chart_label for r in runs}
    got = wh.rows(f"SELECT run_id, axis, axis_order, b, n_items, n_counted, value_sum, value_sq_sum, is_binary "
                  f"FROM {MART} WHERE run_id IN ({', '.join('?' * len(runs))}) ORDER BY axis_order, run_id, b",
                  [r.run_id for r in runs])
    out = []
    for g in got:
        pt = budget_interval(int(g["n_items"]), float(g["value_sum"]), float(g["value_sq_sum"]), bool(g["is_binary"]))
        out.append({"run": label[g["run_id"]], "run_id": g["run_id"], "axis": g["axis"], "axis_order": g["axis_order"],
                    "b": float(g["b"]), "n_items": int(g["n_items"]), "n_counted": int(g["n_counted"]),
                    "mean": pt.mean, "lo": pt.lo, "hi": pt.hi, "method": pt.method})
    return out


def chart(points: Sequence[dict[str, Any]], axis: str, runs: Sequence[str]) -> dict[str, Any]:
    mine = [p for p in points if p["axis"] == axis]
    color = charts._run_color_dict(runs, columns=2 if len(runs) > 2 else 0)
    x = {"field": "b", "type": "quantitative", "title": AXIS_TITLES.get(axis, axis)}
    layers = [
        {"mark": {"type": "area", "opacity": 0.12, "interpolate": "step-after"},
         "encoding": {"x": x, "y": {"field": "lo", "type": "quantitative"}, "y2": {"field": "hi"},
                      "color": {**color, "legend": None}}},
        {"mark": {"type": "line", "interpolate": "step-after"},
         "encoding": {"x": x, "y": {"field": "mean", "type": "quantitative", "title": "metric had it been cut at b"},
                      "color": color,
                      "tooltip": [{"field": "run"}, {"field": "b", "format": ",.4~g"}, {"field": "mean", "format": ".3f"},
                                  {"field": "lo", "format": ".3f", "title": "95% low"},
                                  {"field": "hi", "format": ".3f", "title": "95% high"},
                                  {"field": "n_counted", "title": "answered within b"}]}},
    ]
    return charts._plain(layers, mine, title=f"Budget curve: {AXIS_TITLES.get(axis, axis)}", height=charts.HEIGHT)


def section(wh: Warehouse, runs: Sequence[RunInfo], box: Any) -> dict[str, Any] | None:
    """The context of the compare page's budget curves: a chart per axis and a table of four caps per axis, each
    run's n (its items with a value) and the runs without a curve. None without the mart or runs."""
    if not runs or not marts.has(wh, MART):
        return None
    pts = rows(wh, runs)
    n_items = {p["run_id"]: p["n_items"] for p in pts}
    missing = [r.chart_label for r in runs if r.run_id not in n_items]
    if not pts:
        return {"axes": [], "charts": [], "table": [], "titles": AXIS_TITLES, "runs": list(runs), "n_items": [],
                "missing": missing}
    labels = [r.chart_label for r in runs]
    axes = list(dict.fromkeys(p["axis"] for p in pts))
    table = []
    for axis in axes:
        caps = sorted({p["b"] for p in pts if p["axis"] == axis})
        shown = [caps[max(1, k * len(caps) // 20) - 1] for k in TABLE_STEPS]
        for b in dict.fromkeys(shown):
            cells = {p["run_id"]: p for p in pts if p["axis"] == axis and p["b"] == b}
            table.append({"axis": axis, "b": b, "cells": [cells.get(r.run_id) for r in runs]})
    return {"axes": axes, "charts": [box.add(chart(pts, a, labels)) for a in axes], "table": table,
            "titles": AXIS_TITLES, "runs": list(runs),
            "n_items": [(r.chart_label, n_items[r.run_id]) for r in runs if r.run_id in n_items], "missing": missing}


__all__ = ["chart", "rows", "section"]
