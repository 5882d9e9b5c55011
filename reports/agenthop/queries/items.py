"""Item pages: trajectories and calls of the given runs, the item itself (raw benchmark tables)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...warehouse import Warehouse
from .sql import in_list

_TRAJ_COLS = (
    "sample_id", "predicted_answer", "predicted_index", "question_type", "cell", "reasoning_type", "is_correct", "terminated_by", "paper_recall",
    "section_recall", "evidence_contact", "total_tokens", "total_turns", "budget_used", "n_tool_calls",
    "n_attempts",
)


def trajectories(wh: Warehouse, run_ids: Sequence[str], sample_ids: Sequence[str]) -> list[dict[str, Any]]:
    """fct_trajectory rows of the given runs and items."""
    if not run_ids or not sample_ids:
        return []
    cols = ", ".join(c for c in _TRAJ_COLS if wh.has("fct_trajectory", c))
    return wh.rows(
        f"SELECT run_id, {cols} FROM fct_trajectory WHERE run_id IN {in_list(len(run_ids))} "
        f"AND sample_id IN {in_list(len(sample_ids))} ORDER BY sample_id, run_id",
        [*run_ids, *sample_ids],
    )


_CALL_COLS = (
    "seq", "turn", "call_index", "tool", "args_json", "paper_id", "is_gold_paper", "status", "cost",
    "output_chars", "resolved_header", "budget_after",
)
#: Optional columns shown when the mart carries them.
_CALL_OPTIONAL = ("output_text", "output", "section_query", "search_query", "answer", "tokens_after")


def tool_calls(wh: Warehouse, run_ids: Sequence[str], sample_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Final-attempt calls of the given runs and items, in execution order."""
    if not run_ids or not sample_ids:
        return []
    wh.require(["fct_tool_call"])
    cols = [c for c in (*_CALL_COLS, *_CALL_OPTIONAL) if wh.has("fct_tool_call", c)]
    return wh.rows(
        f"SELECT run_id, sample_id, {', '.join(cols)} FROM fct_tool_call "
        f"WHERE run_id IN {in_list(len(run_ids))} AND sample_id IN {in_list(len(sample_ids))} "
        "ORDER BY sample_id, run_id, seq",
        [*run_ids, *sample_ids],
    )


def item_exists(wh: Warehouse, sample_id: str, run_ids: Sequence[str]) -> list[str]:
    """The runs (among run_ids) that have a trajectory for sample_id."""
    rows = wh.rows(
        f"SELECT run_id FROM fct_trajectory WHERE sample_id = ? AND run_id IN {in_list(len(run_ids))}",
        [sample_id, *run_ids],
    )
    return [r["run_id"] for r in rows]


def _raw_tables(wh: Warehouse) -> set[str]:
    return {r[0] for r in wh.con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw' "
        "AND table_catalog = current_database()").fetchall()}


def item_rows(wh: Warehouse, sample_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """raw.items rows (question, options, correct_index, seed, ...) of the given items."""
    if not sample_ids or "items" not in _raw_tables(wh):
        return {}
    rows = wh.rows(
        f"SELECT * FROM raw.items WHERE sample_id IN {in_list(len(sample_ids))}", list(sample_ids))
    return {r["sample_id"]: r for r in rows}


def item_papers(wh: Warehouse, sample_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Seed, bridge and gold papers of the items with their titles (graph node, else paper pool)."""
    tables = _raw_tables(wh)
    if not sample_ids or "item_papers" not in tables:
        return []
    node_title = "gn.title" if "graph_nodes" in tables else "NULL"
    pool_title = "p.title" if "papers" in tables else "NULL"
    joins = ("LEFT JOIN raw.graph_nodes gn ON gn.sample_id = ip.sample_id AND gn.paper_id = ip.paper_id "
             if "graph_nodes" in tables else "")
    joins += "LEFT JOIN raw.papers p ON p.arxiv_id = ip.arxiv_id " if "papers" in tables else ""
    return wh.rows(
        f"""SELECT ip.sample_id, ip.role, ip.rank, ip.paper_id, ip.arxiv_id,
                   coalesce({node_title}, {pool_title}) AS title
            FROM raw.item_papers ip {joins}
            WHERE ip.sample_id IN {in_list(len(sample_ids))}
            ORDER BY ip.sample_id, CASE ip.role WHEN 'seed' THEN 0 WHEN 'bridge' THEN 1 ELSE 2 END, ip.rank""",
        list(sample_ids))


def direct_labels(wh: Warehouse, sample_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The `direct` recall labels of the items (the sections that hold the evidence)."""
    if not sample_ids or "recall_labels" not in _raw_tables(wh):
        return []
    return wh.rows(
        f"""SELECT sample_id, label_index, arxiv_id, paper_title, label_section FROM raw.recall_labels
            WHERE relevance = 'direct' AND sample_id IN {in_list(len(sample_ids))}
            ORDER BY sample_id, label_index""",
        list(sample_ids))


def called_paper_titles(wh: Warehouse, run_ids: Sequence[str], sample_ids: Sequence[str]) -> dict[tuple[str, str], str]:
    """(sample_id, paper_id) -> title for every paper the given runs passed to a tool on these items."""
    if not run_ids or not sample_ids or "graph_nodes" not in _raw_tables(wh):
        return {}
    rows = wh.con.execute(
        f"""SELECT DISTINCT gn.sample_id, gn.paper_id, gn.title
            FROM (SELECT DISTINCT sample_id, paper_id FROM fct_tool_call
                  WHERE run_id IN {in_list(len(run_ids))} AND sample_id IN {in_list(len(sample_ids))}
                    AND paper_id IS NOT NULL) c
            JOIN raw.graph_nodes gn ON gn.sample_id = c.sample_id AND gn.paper_id = c.paper_id
            WHERE gn.title IS NOT NULL""",
        [*run_ids, *sample_ids]).fetchall()
    return {(s, p): t for s, p, t in rows}


def runs_with_messages(wh: Warehouse, run_ids: Sequence[str]) -> set[str]:
    """The runs whose calls carry recorded output text (the run recorded its messages)."""
    if not run_ids or not wh.has("fct_tool_call", "output_text"):
        return set()
    rows = wh.con.execute(
        f"SELECT DISTINCT run_id FROM fct_tool_call WHERE run_id IN {in_list(len(run_ids))} "
        "AND output_text IS NOT NULL", list(run_ids)).fetchall()
    return {r[0] for r in rows}
