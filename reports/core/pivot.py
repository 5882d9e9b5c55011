"""Turn per-run mart rows into table rows with one cell per run (the shared pages' side-by-side tables)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import charts
from ..values import as_float
from .runs import RunInfo


def ordered(values: Sequence[Any], preferred: Sequence[Any] = ()) -> list[Any]:
    """`preferred` values first (those present), then the rest in sorted order."""
    present = list(dict.fromkeys(values))
    return [v for v in preferred if v in present] + sorted((v for v in present if v not in preferred), key=str)


def side_by_side(rows: Sequence[dict[str, Any]], runs: Sequence[RunInfo], *, key: str,
                 order: Sequence[Any] = (), fields: Sequence[str] = ("n", "share")) -> list[dict[str, Any]]:
    """One row per `key` value, a cell per run with `fields` (None where the run has no row); with two
    runs, the share difference A − B in percentage points."""
    by = {(r["run_id"], r[key]): r for r in rows}
    out = []
    for k in ordered([r[key] for r in rows], order):
        cells = [{f: (by[(run.run_id, k)].get(f) if (run.run_id, k) in by else None) for f in fields} for run in runs]
        delta = None
        if len(runs) == 2 and "share" in fields:
            a, b = (as_float(c["share"]) or 0.0 for c in cells)
            delta = 100 * (a - b)
        out.append({"key": k, "cells": cells, "delta": delta})
    return out


def share_chart(rows: Sequence[dict[str, Any]], runs: Sequence[RunInfo], *, key: str, order: Sequence[Any],
                title: str, value: str = "share", value_title: str = "share") -> dict[str, Any] | None:
    label = {r.run_id: r.chart_label for r in runs}
    data = [{"run": label[r["run_id"]], key: str(r[key]), value: as_float(r[value]), "n": r.get("n")}
            for r in rows if r["run_id"] in label and (r.get("n") or 0) > 0]
    if not data:
        return None
    return charts.grouped_bars(data, category=key, value=value, runs=[r.chart_label for r in runs],
                               category_order=[str(k) for k in ordered([d[key] for d in data], [str(o) for o in order])],
                               title=title, value_title=value_title)
