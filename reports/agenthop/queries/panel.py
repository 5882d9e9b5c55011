"""Panel-level queries of the leaderboard: the runs x items correctness matrix, item facts,
condition deltas."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...warehouse import Warehouse
from .sql import flag, in_list

def correctness_matrix(wh: Warehouse, run_ids: Sequence[str]) -> tuple[list[str], list[list[int]]]:
    """Items answered by every given run (listwise deletion) and the runs x items 0/1 matrix."""
    if not run_ids:
        return [], []
    rows = wh.rows(
        f"""
        WITH t AS (SELECT run_id, sample_id, {flag('is_correct')} AS c FROM fct_trajectory
                   WHERE run_id IN {in_list(len(run_ids))}),
             shared AS (SELECT sample_id FROM t GROUP BY sample_id HAVING count(DISTINCT run_id) = ?)
        SELECT run_id, list(c ORDER BY sample_id) AS cs, list(sample_id ORDER BY sample_id) AS ids
        FROM t SEMI JOIN shared USING (sample_id) GROUP BY run_id
        """,
        [*run_ids, len(run_ids)],
    )
    by_run = {r["run_id"]: r for r in rows}
    items: list[str] = list(rows[0]["ids"]) if rows else []
    matrix = [list(by_run[rid]["cs"]) for rid in run_ids if rid in by_run]
    return items, matrix


def item_info(wh: Warehouse, sample_ids: Sequence[str], run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """cell and reasoning type of items, and their accuracy over the given runs (the panel)."""
    if not sample_ids or not run_ids:
        return {}
    rows = wh.rows(
        f"SELECT sample_id, any_value(cell) AS cell, any_value(reasoning_type) AS reasoning_type, "
        f"avg({flag('is_correct')}) AS panel_accuracy, count(*) AS n_runs "
        f"FROM fct_trajectory WHERE sample_id IN {in_list(len(sample_ids))} AND run_id IN {in_list(len(run_ids))} "
        "GROUP BY sample_id",
        [*sample_ids, *run_ids],
    )
    return {r["sample_id"]: r for r in rows}


def condition_deltas(wh: Warehouse) -> tuple[list[str], list[dict[str, Any]]]:
    if not wh.has("condition_deltas"):
        return [], []
    order = "model, pair_order" if wh.has("condition_deltas", "pair_order") else "ALL"
    rows = wh.rows(f"SELECT * FROM condition_deltas ORDER BY {order}")
    return list(wh.columns("condition_deltas")), rows
