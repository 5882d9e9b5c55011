"""Distributions of tokens, turns and budget per run, binned and summarised in DuckDB."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...warehouse import Warehouse
from .sql import in_list

#: column -> (axis title, unit divisor)
HIST_COLUMNS: dict[str, tuple[str, float]] = {
    "total_tokens": ("tokens (K)", 1000.0),
    "total_turns": ("turns", 1.0),
    "budget_used": ("budget points used", 1.0),
}


def _nice_width(span: float, bins: int) -> float:
    """A 1/2/5 x 10^k bin width giving at most about `bins` bins over `span`."""
    if span <= 0:
        return 1.0
    raw = span / bins
    exp = math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        w = m * 10**exp
        if w >= raw:
            return float(w)
    return float(10 ** (exp + 1))


def histogram(wh: Warehouse, run_ids: Sequence[str], column: str, bins: int = 20) -> list[dict[str, Any]]:
    """Per run, counts and shares of fct_trajectory.<column> in equal-width bins (computed in DuckDB)."""
    if column not in HIST_COLUMNS or not run_ids:
        raise ValueError(f"histogram: unsupported column {column!r}")
    _, div = HIST_COLUMNS[column]
    params = list(run_ids)
    (mx,) = wh.con.execute(
        f"SELECT max({column}) / {div} FROM fct_trajectory WHERE run_id IN {in_list(len(run_ids))}", params
    ).fetchone()  # type: ignore[misc]
    width = 1.0 if column != "total_tokens" and (mx or 0) <= 40 else _nice_width(float(mx or 0), bins)
    return wh.rows(
        f"""
        WITH b AS (SELECT run_id, floor(({column} / {div}) / {width}) * {width} AS bin_start
                   FROM fct_trajectory WHERE run_id IN {in_list(len(run_ids))} AND {column} IS NOT NULL)
        SELECT run_id, bin_start, bin_start + {width} AS bin_end, count(*) AS n,
               count(*) / sum(count(*)) OVER (PARTITION BY run_id) AS share
        FROM b GROUP BY run_id, bin_start ORDER BY run_id, bin_start
        """,
        params,
    )


def distribution_summary(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Median and 90th percentile of tokens, turns, budget per run."""
    return wh.rows(
        f"""
        SELECT run_id,
               quantile_cont(total_tokens, 0.5) / 1000 AS tokens_k_p50,
               quantile_cont(total_tokens, 0.9) / 1000 AS tokens_k_p90,
               quantile_cont(total_turns, 0.5) AS turns_p50, quantile_cont(total_turns, 0.9) AS turns_p90,
               quantile_cont(budget_used, 0.5) AS budget_p50, quantile_cont(budget_used, 0.9) AS budget_p90
        FROM fct_trajectory WHERE run_id IN {in_list(len(run_ids))} GROUP BY run_id ORDER BY run_id
        """,
        list(run_ids),
    )
