"""Per-run outcome counts (accuracy, recall, conversion by scope and cell) and paired comparisons.

Discordant counts of the paired tests are computed in SQL; the statistics are in reports/stats.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...warehouse import Warehouse
from .sql import flag, in_list, mart_slice

CELLS: tuple[str, ...] = ("st_d1", "st_d2", "mt_d1", "mt_d2")


def profile_counts(wh: Warehouse, run_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """Per run: counts behind accuracy, recall and conversion (overall, ST, MT)."""
    c, r, s = flag("is_correct"), flag("paper_recall"), flag("section_recall")
    per_scope = ",\n".join(
        f"""count(*) FILTER (WHERE question_type = '{q}') AS n_{q.lower()},
               coalesce(sum({c}) FILTER (WHERE question_type = '{q}'), 0) AS correct_{q.lower()},
               coalesce(sum({r}) FILTER (WHERE question_type = '{q}'), 0) AS recalled_{q.lower()},
               coalesce(sum({s}) FILTER (WHERE question_type = '{q}'), 0) AS secrec_{q.lower()},
               coalesce(sum({c} * {r}) FILTER (WHERE question_type = '{q}'), 0) AS correct_recalled_{q.lower()}"""
        for q in ("ST", "MT")
    )
    sql = f"""
        SELECT run_id,
               count(*) AS n,
               sum({c}) AS correct,
               sum({r}) AS recalled,
               sum({c} * {r}) AS correct_recalled,
               sum({c} * (1 - {r})) AS correct_unrecalled,
               {per_scope}
        FROM fct_trajectory WHERE run_id IN {in_list(len(run_ids))}
        GROUP BY run_id
    """
    out: dict[str, dict[str, int]] = {}
    for row in wh.rows(sql, list(run_ids)):
        out[row["run_id"]] = {k: int(v or 0) for k, v in row.items() if k != "run_id"}
    return out


def recall_overall(wh: Warehouse, run_ids: Sequence[str]) -> dict[str, float]:
    """Mean paper recall over all items per run (for the leaderboard scatter)."""
    rows = wh.rows(
        f"SELECT run_id, avg({flag('paper_recall')}) AS recall FROM fct_trajectory "
        f"WHERE run_id IN {in_list(len(run_ids))} GROUP BY run_id",
        list(run_ids),
    )
    return {r["run_id"]: float(r["recall"]) for r in rows}


def paired_counts(wh: Warehouse, run_a: str, run_b: str) -> list[dict[str, Any]]:
    """n and discordant counts for accuracy (all shared items) and conversion (recalled by both)."""
    c, r = flag("is_correct"), flag("paper_recall")
    sql = f"""
        WITH a AS (SELECT sample_id, question_type AS q, {c} AS c, {r} AS r FROM fct_trajectory WHERE run_id = ?),
             b AS (SELECT sample_id, {c} AS c, {r} AS r FROM fct_trajectory WHERE run_id = ?),
             j AS (SELECT a.q, a.c AS ca, b.c AS cb, a.r AS ra, b.r AS rb FROM a JOIN b USING (sample_id))
        SELECT 'accuracy' AS comparison, 'all shared items' AS scope, 0 AS ord,
               count(*) AS n, coalesce(sum(ca * (1 - cb)), 0) AS a_only, coalesce(sum((1 - ca) * cb), 0) AS b_only
        FROM j
        UNION ALL
        SELECT 'conversion', 'ST items recalled by both', 1,
               count(*), coalesce(sum(ca * (1 - cb)), 0), coalesce(sum((1 - ca) * cb), 0)
        FROM j WHERE q = 'ST' AND ra = 1 AND rb = 1
        UNION ALL
        SELECT 'conversion', 'MT items recalled by both', 2,
               count(*), coalesce(sum(ca * (1 - cb)), 0), coalesce(sum((1 - ca) * cb), 0)
        FROM j WHERE q = 'MT' AND ra = 1 AND rb = 1
        ORDER BY ord
    """
    return wh.rows(sql, [run_a, run_b])


def win_loss_items(wh: Warehouse, run_a: str, run_b: str) -> list[dict[str, Any]]:
    """Shared items on which exactly one of the two runs is correct."""
    ca, cb = flag("a.is_correct"), flag("b.is_correct")
    sql = f"""
        SELECT a.sample_id, a.cell, a.reasoning_type,
               {ca} AS a_correct, {cb} AS b_correct,
               a.terminated_by AS a_terminated_by, b.terminated_by AS b_terminated_by,
               {flag('a.paper_recall')} AS a_recall, {flag('b.paper_recall')} AS b_recall,
               a.total_tokens AS a_tokens, b.total_tokens AS b_tokens
        FROM fct_trajectory a JOIN fct_trajectory b USING (sample_id)
        WHERE a.run_id = ? AND b.run_id = ?
          AND {ca} <> {cb}
        ORDER BY a_correct DESC, a.cell, a.sample_id
    """
    return wh.rows(sql, [run_a, run_b])


def cell_accuracy(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return mart_slice(wh, "cell_accuracy", run_ids, "run_id, cell")


def reasoning_accuracy(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return mart_slice(wh, "reasoning_type_accuracy", run_ids, "run_id, reasoning_type")
