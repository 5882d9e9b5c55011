"""The SQL of the paper report: slices of the marts for one panel (read-only, parameters bound)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthop.harness.errors import AgentHopError

from ..warehouse import Warehouse

#: The marts the paper report reads.
MARTS: tuple[str, ...] = (
    "model_summary", "fct_trajectory", "panel_members", "panel_paired_counts", "condition_paired_counts",
    "condition_deltas", "model_cost", "wrong_read_actions", "stopping_behavior", "tool_trigrams",
    "termination_summary", "cell_accuracy", "reasoning_type_accuracy", "panel_evidence_contact",
    "panel_bigram_summary", "bigram_effects", "rerun_variance", "closed_book_slices", "generation_gaps",
    "item_difficulty", "tool_transitions", "budget_truncated_accuracy",
)


def _in(n: int) -> str:
    return "(" + ", ".join(["?"] * n) + ")"


def panel(wh: Warehouse, condition: str) -> list[dict[str, Any]]:
    """The panel: panel_members of `condition` joined to model_summary, by model."""
    rows = wh.rows(
        """SELECT s.*, m.n_replicates FROM panel_members m JOIN model_summary s USING (run_id)
           WHERE m.condition = ? ORDER BY m.model""",
        [condition],
    )
    if not rows:
        have = [r["condition"] for r in wh.rows("SELECT DISTINCT condition FROM panel_members ORDER BY 1")]
        raise AgentHopError(
            f"paper: no runs under condition {condition!r}; the warehouse has: {', '.join(have) or 'no runs'}"
        )
    return rows


def by_runs(wh: Warehouse, mart: str, run_ids: Sequence[str], order: str) -> list[dict[str, Any]]:
    """Rows of a per-run mart for the given runs, with the run's model, ordered by `order`."""
    if not run_ids:
        return []
    return wh.rows(
        f"SELECT s.model, x.* FROM {mart} x JOIN model_summary s USING (run_id) "
        f"WHERE x.run_id IN {_in(len(run_ids))} ORDER BY {order}",
        list(run_ids),
    )


def paired_counts(wh: Warehouse, condition: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(model_a, model_b, axis) -> panel_paired_counts row."""
    rows = wh.rows("SELECT * FROM panel_paired_counts WHERE condition = ?", [condition])
    return {(r["model_a"], r["model_b"], r["axis"]): r for r in rows}


def condition_deltas(wh: Warehouse, models: Sequence[str]) -> list[dict[str, Any]]:
    """condition_deltas with the paired counts of condition_paired_counts (panel runs of each condition)."""
    if not models:
        return []
    return wh.rows(
        f"""SELECT d.model, d.condition_from, d.condition_to, d.pair_order, d.accuracy_from, d.accuracy_to,
                   d.delta_pp, d.n_runs_from, d.n_runs_to, p.n, p.from_only, p.to_only, p.run_from, p.run_to
            FROM condition_deltas d
            LEFT JOIN condition_paired_counts p USING (model, condition_from, condition_to)
            WHERE d.model IN {_in(len(models))} ORDER BY d.model, d.pair_order""",
        list(models),
    )


def costs(wh: Warehouse, models: Sequence[str], condition: str) -> list[dict[str, Any]]:
    """model_cost of each model's panel run and of its closed_book panel run (when it has one)."""
    return wh.rows(
        f"""SELECT m.model, c.run_id, c.pricing_found, c.n_items, c.prompt_tokens, c.completion_tokens,
                   c.cache_read_tokens, c.cache_creation_tokens, c.total_usd, c.usd_per_item,
                   cb.run_id AS closed_book_run_id, cb.total_usd AS closed_book_total_usd,
                   cb.usd_per_item AS closed_book_usd_per_item
            FROM panel_members m
            JOIN model_cost c USING (run_id)
            LEFT JOIN panel_members mc ON mc.model = m.model AND mc.condition = 'closed_book'
            LEFT JOIN model_cost cb ON cb.run_id = mc.run_id
            WHERE m.condition = ? AND m.model IN {_in(len(models))} ORDER BY m.model""",
        [condition, *models],
    )


def top_trigrams(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Each run's most frequent trigram (ties: alphabetical) with its share and the run's total."""
    if not run_ids:
        return []
    return wh.rows(
        f"""SELECT s.model, t.run_id, t.trigram, t.n, t.share, sum(t.n) OVER (PARTITION BY t.run_id) AS n_trigrams
            FROM tool_trigrams t JOIN model_summary s USING (run_id)
            WHERE t.run_id IN {_in(len(run_ids))}
            QUALIFY row_number() OVER (PARTITION BY t.run_id ORDER BY t.n DESC, t.trigram) = 1
            ORDER BY s.model""",
        list(run_ids),
    )


def cell_spread(wh: Warehouse, run_ids: Sequence[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Cells by panel-pooled accuracy (easiest first) and, per run, its accuracy in the easiest and hardest."""
    if not run_ids:
        return [], []
    pooled = wh.rows(
        f"""SELECT cell, sum(n) AS n, sum(correct) AS correct, sum(correct) / sum(n) AS accuracy
            FROM cell_accuracy WHERE run_id IN {_in(len(run_ids))}
            GROUP BY cell ORDER BY accuracy DESC, cell""",
        list(run_ids),
    )
    if not pooled:
        return [], []
    easiest, hardest = pooled[0]["cell"], pooled[-1]["cell"]
    per_run = wh.rows(
        f"""SELECT s.model, c.run_id,
                   ? AS easiest_cell, max(c.accuracy) FILTER (WHERE c.cell = ?) AS accuracy_easiest,
                   ? AS hardest_cell, max(c.accuracy) FILTER (WHERE c.cell = ?) AS accuracy_hardest
            FROM cell_accuracy c JOIN model_summary s USING (run_id)
            WHERE c.run_id IN {_in(len(run_ids))} GROUP BY s.model, c.run_id ORDER BY s.model""",
        [easiest, easiest, hardest, hardest, *run_ids],
    )
    for r in per_run:
        a, b = r["accuracy_easiest"], r["accuracy_hardest"]
        r["delta_pp"] = None if a is None or b is None else 100.0 * (a - b)  # the paper's sign: the drop
    return pooled, per_run


def evidence_contact(wh: Warehouse, condition: str) -> list[dict[str, Any]]:
    return wh.rows("SELECT * FROM panel_evidence_contact WHERE condition = ? ORDER BY contact_order", [condition])


def bigram_summary(wh: Warehouse, condition: str) -> list[dict[str, Any]]:
    return wh.rows("SELECT * FROM panel_bigram_summary WHERE condition = ? ORDER BY bigram", [condition])


def reruns(wh: Warehouse, condition: str) -> list[dict[str, Any]]:
    return wh.rows("SELECT * FROM rerun_variance WHERE condition = ? ORDER BY model, metric_order", [condition])


def closed_book_slices(wh: Warehouse) -> list[dict[str, Any]]:
    return wh.rows(
        """SELECT * FROM closed_book_slices
           ORDER BY CASE tier WHEN 'all' THEN 0 WHEN 'closed_frontier' THEN 1 WHEN 'open_frontier' THEN 2
                    WHEN 'compute_efficient' THEN 3 ELSE 4 END, tier, slice_order, value"""
    )


def closed_book_trajectories(wh: Warehouse) -> list[dict[str, Any]]:
    """(model, tier, sample_id, is_correct) of the closed_book panel runs."""
    return wh.rows(
        """SELECT m.model, coalesce(m.tier, 'untiered') AS tier, t.sample_id, t.is_correct
           FROM panel_members m JOIN fct_trajectory t USING (run_id)
           WHERE m.condition = 'closed_book' ORDER BY m.model, t.sample_id"""
    )


def generation_gaps(wh: Warehouse, condition: str) -> list[dict[str, Any]]:
    return wh.rows("SELECT * FROM generation_gaps WHERE condition = ? ORDER BY family, step", [condition])


def item_difficulty(wh: Warehouse, condition: str) -> list[dict[str, Any]]:
    return wh.rows("SELECT * FROM item_difficulty WHERE condition = ? ORDER BY sample_id", [condition])


def budget_truncated(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return by_runs(wh, "budget_truncated_accuracy", run_ids, "s.model, x.axis_order, x.b")


def panel_accuracies(wh: Warehouse, models: Sequence[str]) -> dict[tuple[str, str], float]:
    """(model, condition) -> accuracy of the panel run (lowest replicate) of every condition."""
    if not models:
        return {}
    rows = wh.rows(
        f"""SELECT m.model, m.condition, s.accuracy FROM panel_members m JOIN model_summary s USING (run_id)
            WHERE m.model IN {_in(len(models))}""",
        list(models),
    )
    return {(r["model"], r["condition"]): r["accuracy"] for r in rows}


def replicate_values(wh: Warehouse, condition: str) -> dict[tuple[str, str], list[Any]]:
    """(model, metric) -> the metric of each replicate under the condition, by replicate (Table 17's runs)."""
    rows = wh.rows(
        """SELECT model, replicate, accuracy, section_recall, conversion, avg_tokens_k FROM model_summary
           WHERE condition = ? ORDER BY model, replicate, run_id""",
        [condition],
    )
    out: dict[tuple[str, str], list[Any]] = {}
    for r in rows:
        for metric in ("accuracy", "section_recall", "conversion", "avg_tokens_k"):
            out.setdefault((r["model"], metric), []).append(r[metric])
    return out
