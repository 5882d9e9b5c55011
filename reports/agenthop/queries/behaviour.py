"""Tool-use behaviour per run: stopping, wrong-paper reads, terminations, evidence contact,
tool transitions, trigrams and bigram effects (slices of the behaviour marts)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthop.schemas.quality import TOOL_NAMES

from ...warehouse import Warehouse
from .sql import in_list, mart_slice

#: Display order of the seven tools: the paper's (Figure 6: metadata, references, sections, search, reading,
#: thinking, answering); unknown tool names sort after them.
_PAPER_ORDER = ("get_paper_info", "get_references", "list_sections", "search_papers", "read_section", "think",
                "submit_answer")
TOOLS: tuple[str, ...] = tuple(sorted(
    TOOL_NAMES, key=lambda n: _PAPER_ORDER.index(n) if n in _PAPER_ORDER else len(_PAPER_ORDER)))


def stopping(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return mart_slice(wh, "stopping_behavior", run_ids, "run_id, scope, category")


def wrong_reads(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return mart_slice(wh, "wrong_read_actions", run_ids, "run_id, action")


def terminations(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return mart_slice(wh, "termination_summary", run_ids, "run_id, terminated_by")


def evidence_contact(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return mart_slice(wh, "evidence_contact_summary", run_ids, "run_id, evidence_contact")


def transitions(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return mart_slice(wh, "tool_transitions", run_ids, "run_id, prev_tool, next_tool")


def trigrams(wh: Warehouse, run_ids: Sequence[str], top: int = 8) -> list[dict[str, Any]]:
    if not run_ids:
        return []
    return wh.rows(
        f"""SELECT * FROM (
              SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY n DESC, trigram) AS rk
              FROM tool_trigrams WHERE run_id IN {in_list(len(run_ids))})
            WHERE rk <= {int(top)} ORDER BY run_id, rk""",
        list(run_ids),
    )


def transition_differences(wh: Warehouse, run_a: str, run_b: str, top: int = 12) -> list[dict[str, Any]]:
    """Transitions whose P(next | prev) differs most between the two runs.

    A run that never called `prev` has no P(next | prev): NULL (n/a), not 0, and so is the difference;
    such rows rank after every transition both runs can be compared on."""
    return wh.rows(
        f"""
        WITH a AS (SELECT prev_tool, next_tool, n, p_next FROM tool_transitions WHERE run_id = ?),
             b AS (SELECT prev_tool, next_tool, n, p_next FROM tool_transitions WHERE run_id = ?),
             pairs AS (
                SELECT coalesce(a.prev_tool, b.prev_tool) AS prev_tool,
                       coalesce(a.next_tool, b.next_tool) AS next_tool,
                       coalesce(a.n, 0) AS n_a, coalesce(b.n, 0) AS n_b,
                       CASE WHEN a.p_next IS NOT NULL THEN a.p_next
                            WHEN coalesce(a.prev_tool, b.prev_tool) IN (SELECT prev_tool FROM a) THEN 0 END AS p_a,
                       CASE WHEN b.p_next IS NOT NULL THEN b.p_next
                            WHEN coalesce(a.prev_tool, b.prev_tool) IN (SELECT prev_tool FROM b) THEN 0 END AS p_b
                FROM a FULL OUTER JOIN b ON a.prev_tool = b.prev_tool AND a.next_tool = b.next_tool)
        SELECT *, p_a - p_b AS diff FROM pairs
        ORDER BY abs(diff) DESC NULLS LAST, prev_tool, next_tool
        LIMIT {int(top)}
        """,
        [run_a, run_b],
    )


def bigram_effects(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return mart_slice(wh, "bigram_effects", run_ids, "run_id, bigram")
