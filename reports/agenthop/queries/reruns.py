"""Rerun queries: variance across replicates (Table 17), unstable items with their cell and reasoning type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...warehouse import Warehouse
from .sql import flag, in_list


def rerun_variance(wh: Warehouse, model: str) -> list[dict[str, Any]]:
    return wh.rows("SELECT * FROM rerun_variance WHERE model = ? ORDER BY condition, metric", [model])


def unstable_items(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Items whose correctness differs across the given runs, with the per-run pattern (run order).

    Most unstable first: correct in about half of the runs (|2·k − n| smallest), then by id."""
    if len(run_ids) < 2:
        return []
    order = " ".join(f"WHEN ? THEN {i}" for i in range(len(run_ids)))
    return wh.rows(
        f"""
        WITH t AS (SELECT sample_id, cell, reasoning_type, {flag('is_correct')} AS c,
                          CASE run_id {order} END AS pos
                   FROM fct_trajectory WHERE run_id IN {in_list(len(run_ids))})
        SELECT sample_id, any_value(cell) AS cell, any_value(reasoning_type) AS reasoning_type,
               list(c ORDER BY pos) AS pattern, sum(c) AS n_correct, count(*) AS n_runs
        FROM t GROUP BY sample_id HAVING min(c) <> max(c)
        ORDER BY abs(2 * sum(c) - count(*)), sample_id
        """,
        [*run_ids, *run_ids],
    )
