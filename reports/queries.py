"""Every SQL statement the reports run, against the dbt marts only (read-only).

Aggregation happens here, in DuckDB: charts receive at most a few hundred rows. Run ids are always
bound as parameters; the only identifiers spliced into SQL come from fixed whitelists.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthop.harness.errors import AgentHopError
from agenthop.schemas.quality import TOOL_NAMES

from .warehouse import Warehouse

#: Display order of the seven tools (the sandbox's order); unknown tool names sort after them.
TOOLS: tuple[str, ...] = TOOL_NAMES
CELLS: tuple[str, ...] = ("st_d1", "st_d2", "mt_d1", "mt_d2")

#: model_summary columns of docs/metrics.md#per-run-metrics, in Table 2 order.
SUMMARY_METRICS: tuple[str, ...] = (
    "accuracy",
    "recall_st",
    "recall_mt",
    "secrec_st",
    "secrec_mt",
    "conversion_st",
    "conversion_mt",
    "calls_per_turn",
    "avg_tokens_k",
    "avg_turns",
    "avg_budget",
    "max_tokens_rate",
    "max_turns_rate",
    "max_budget_rate",
    "error_rate",
    "na_rate",
)


@dataclass
class RunInfo:
    """One run as model_summary describes it (optional columns default to None)."""

    run_id: str
    model: str
    condition: str
    replicate: int
    backend: str | None = None
    family: str | None = None
    tier: str | None = None
    benchmark_sha256: str | None = None
    n_items: int | None = None
    is_simulated: bool | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    label: str = ""  # display name, unique within one report

    @property
    def simulated(self) -> bool:
        """model_summary.is_simulated when the mart has it, else backend = 'sim' (docs/simulated_agents.md)."""
        if self.is_simulated is not None:
            return bool(self.is_simulated)
        return self.backend == "sim"

    @property
    def chart_label(self) -> str:
        """Label for chart axes/legends, where no HTML badge is possible."""
        return f"{self.label} [SIM]" if self.simulated else self.label


def _in_list(n: int) -> str:
    return "(" + ", ".join(["?"] * n) + ")"


def _b(col: str) -> str:
    """A boolean-or-integer flag column as 0/1 integer (NULL -> 0)."""
    return f"coalesce(({col})::INT, 0)"


# ------------------------------------------------------------------------------------------------
# Runs
# ------------------------------------------------------------------------------------------------


def all_runs(wh: Warehouse) -> list[RunInfo]:
    """Every run of model_summary, ordered by model, condition, replicate."""
    wh.require_runs()
    rows = wh.rows("SELECT * FROM model_summary ORDER BY model, condition, replicate, run_id")
    out = []
    for r in rows:
        out.append(
            RunInfo(
                run_id=str(r["run_id"]),
                model=str(r["model"]),
                condition=str(r.get("condition") or "full"),
                replicate=int(r.get("replicate") or 0),
                backend=r.get("backend"),
                family=r.get("family"),
                tier=r.get("tier"),
                benchmark_sha256=r.get("benchmark_sha256"),
                n_items=r.get("n_items"),
                is_simulated=r.get("is_simulated"),
                summary={k: r.get(k) for k in r},
            )
        )
    return out


def label_runs(runs: Sequence[RunInfo]) -> None:
    """Give each run a display label: the model name, plus condition/replicate where needed."""
    by_model: dict[str, list[RunInfo]] = {}
    for r in runs:
        by_model.setdefault(r.model, []).append(r)
    for group in by_model.values():
        conds = {r.condition for r in group}
        for r in group:
            if len(group) == 1:
                r.label = r.model
            elif len(group) == len(conds):
                r.label = f"{r.model} · {r.condition}"
            else:
                r.label = f"{r.model} · {r.condition} #{r.replicate}"
    seen: dict[str, int] = {}
    for r in runs:  # still ambiguous (same model passed twice): fall back to the run id
        seen[r.label] = seen.get(r.label, 0) + 1
    ambiguous = {label for label, n in seen.items() if n > 1}
    for r in runs:
        if r.label in ambiguous:
            r.label = f"{r.label} ({r.run_id})"


def resolve_runs(
    wh: Warehouse,
    models: Sequence[str] | None = None,
    run_ids: Sequence[str] | None = None,
    condition: str = "full",
) -> list[RunInfo]:
    """Runs named by model (its `condition` run with the lowest replicate) or by run id."""
    runs = all_runs(wh)
    picked: list[RunInfo] = []
    if run_ids:
        by_id = {r.run_id: r for r in runs}
        for rid in run_ids:
            if rid not in by_id:
                known = ", ".join(sorted(by_id)[:40])
                raise AgentHopError(f"unknown run id {rid!r}; known run ids: {known}")
            picked.append(by_id[rid])
    for m in models or ():
        cands = [r for r in runs if r.model == m]
        if not cands:
            known = ", ".join(sorted({r.model for r in runs}))
            raise AgentHopError(f"unknown model {m!r}; known models: {known}")
        in_cond = [r for r in cands if r.condition == condition]
        if not in_cond:
            have = ", ".join(sorted({r.condition for r in cands}))
            raise AgentHopError(f"model {m!r} has no {condition!r} run (it has: {have}); use --condition or --runs")
        picked.append(min(in_cond, key=lambda r: (r.replicate, r.run_id)))
    seen: set[str] = set()
    for r in picked:
        if r.run_id in seen:
            if run_ids and r.run_id in run_ids:
                raise AgentHopError(f"run {r.run_id!r} is given twice; name different runs")
            raise AgentHopError(
                f"model {r.model!r} is given twice (both pick run {r.run_id!r}); to compare its "
                f"replicates pass --runs RUN_A,RUN_B, or use: agenthop-report reruns --model {r.model}"
            )
        seen.add(r.run_id)
    return picked


def runs_of_model(wh: Warehouse, model: str) -> list[RunInfo]:
    runs = all_runs(wh)
    mine = [r for r in runs if r.model == model]
    if not mine:
        known = ", ".join(sorted({r.model for r in runs}))
        raise AgentHopError(f"unknown model {model!r}; known models: {known}")
    return mine


# ------------------------------------------------------------------------------------------------
# Profile counts (for Wilson intervals and the accuracy decomposition)
# ------------------------------------------------------------------------------------------------


def profile_counts(wh: Warehouse, run_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """Per run: counts behind accuracy, recall and conversion (overall, ST, MT)."""
    c, r, s = _b("is_correct"), _b("paper_recall"), _b("section_recall")
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
        FROM fct_trajectory WHERE run_id IN {_in_list(len(run_ids))}
        GROUP BY run_id
    """
    out: dict[str, dict[str, int]] = {}
    for row in wh.rows(sql, list(run_ids)):
        out[row["run_id"]] = {k: int(v or 0) for k, v in row.items() if k != "run_id"}
    return out


def recall_overall(wh: Warehouse, run_ids: Sequence[str]) -> dict[str, float]:
    """Mean paper recall over all items per run (for the leaderboard scatter)."""
    rows = wh.rows(
        f"SELECT run_id, avg({_b('paper_recall')}) AS recall FROM fct_trajectory "
        f"WHERE run_id IN {_in_list(len(run_ids))} GROUP BY run_id",
        list(run_ids),
    )
    return {r["run_id"]: float(r["recall"]) for r in rows}


# ------------------------------------------------------------------------------------------------
# Paired comparisons (discordant counts computed in SQL)
# ------------------------------------------------------------------------------------------------


def paired_counts(wh: Warehouse, run_a: str, run_b: str) -> list[dict[str, Any]]:
    """n and discordant counts for accuracy (all shared items) and conversion (recalled by both)."""
    c, r = _b("is_correct"), _b("paper_recall")
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
    ca, cb = _b("a.is_correct"), _b("b.is_correct")
    sql = f"""
        SELECT a.sample_id, a.cell, a.reasoning_type,
               {ca} AS a_correct, {cb} AS b_correct,
               a.terminated_by AS a_terminated_by, b.terminated_by AS b_terminated_by,
               {_b('a.paper_recall')} AS a_recall, {_b('b.paper_recall')} AS b_recall,
               a.total_tokens AS a_tokens, b.total_tokens AS b_tokens
        FROM fct_trajectory a JOIN fct_trajectory b USING (sample_id)
        WHERE a.run_id = ? AND b.run_id = ?
          AND {ca} <> {cb}
        ORDER BY a_correct DESC, a.cell, a.sample_id
    """
    return wh.rows(sql, [run_a, run_b])


# ------------------------------------------------------------------------------------------------
# Per-run mart slices
# ------------------------------------------------------------------------------------------------


def _slice(wh: Warehouse, mart: str, run_ids: Sequence[str], order: str) -> list[dict[str, Any]]:
    if not run_ids:
        return []
    return wh.rows(
        f"SELECT * FROM {mart} WHERE run_id IN {_in_list(len(run_ids))} ORDER BY {order}", list(run_ids)
    )


def stopping(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return _slice(wh, "stopping_behavior", run_ids, "run_id, scope, category")


def wrong_reads(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return _slice(wh, "wrong_read_actions", run_ids, "run_id, action")


def terminations(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return _slice(wh, "termination_summary", run_ids, "run_id, terminated_by")


def evidence_contact(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return _slice(wh, "evidence_contact_summary", run_ids, "run_id, evidence_contact")


def transitions(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return _slice(wh, "tool_transitions", run_ids, "run_id, prev_tool, next_tool")


def trigrams(wh: Warehouse, run_ids: Sequence[str], top: int = 8) -> list[dict[str, Any]]:
    if not run_ids:
        return []
    return wh.rows(
        f"""SELECT * FROM (
              SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY n DESC, trigram) AS rk
              FROM tool_trigrams WHERE run_id IN {_in_list(len(run_ids))})
            WHERE rk <= {int(top)} ORDER BY run_id, rk""",
        list(run_ids),
    )


def transition_differences(wh: Warehouse, run_a: str, run_b: str, top: int = 12) -> list[dict[str, Any]]:
    """Transitions whose P(next | prev) differs most between the two runs."""
    return wh.rows(
        f"""
        WITH a AS (SELECT prev_tool, next_tool, n, p_next FROM tool_transitions WHERE run_id = ?),
             b AS (SELECT prev_tool, next_tool, n, p_next FROM tool_transitions WHERE run_id = ?)
        SELECT coalesce(a.prev_tool, b.prev_tool) AS prev_tool,
               coalesce(a.next_tool, b.next_tool) AS next_tool,
               coalesce(a.n, 0) AS n_a, coalesce(b.n, 0) AS n_b,
               coalesce(a.p_next, 0) AS p_a, coalesce(b.p_next, 0) AS p_b,
               coalesce(a.p_next, 0) - coalesce(b.p_next, 0) AS diff
        FROM a FULL OUTER JOIN b ON a.prev_tool = b.prev_tool AND a.next_tool = b.next_tool
        ORDER BY abs(diff) DESC, prev_tool, next_tool
        LIMIT {int(top)}
        """,
        [run_a, run_b],
    )


def bigram_effects(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return _slice(wh, "bigram_effects", run_ids, "run_id, bigram")


def cell_accuracy(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return _slice(wh, "cell_accuracy", run_ids, "run_id, cell")


def reasoning_accuracy(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return _slice(wh, "reasoning_type_accuracy", run_ids, "run_id, reasoning_type")


# ------------------------------------------------------------------------------------------------
# Distributions (binned in SQL)
# ------------------------------------------------------------------------------------------------

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
        f"SELECT max({column}) / {div} FROM fct_trajectory WHERE run_id IN {_in_list(len(run_ids))}", params
    ).fetchone()  # type: ignore[misc]
    width = 1.0 if column != "total_tokens" and (mx or 0) <= 40 else _nice_width(float(mx or 0), bins)
    return wh.rows(
        f"""
        WITH b AS (SELECT run_id, floor(({column} / {div}) / {width}) * {width} AS bin_start
                   FROM fct_trajectory WHERE run_id IN {_in_list(len(run_ids))} AND {column} IS NOT NULL)
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
        FROM fct_trajectory WHERE run_id IN {_in_list(len(run_ids))} GROUP BY run_id ORDER BY run_id
        """,
        list(run_ids),
    )


# ------------------------------------------------------------------------------------------------
# Trajectories (drill-down)
# ------------------------------------------------------------------------------------------------

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
        f"SELECT run_id, {cols} FROM fct_trajectory WHERE run_id IN {_in_list(len(run_ids))} "
        f"AND sample_id IN {_in_list(len(sample_ids))} ORDER BY sample_id, run_id",
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
        f"WHERE run_id IN {_in_list(len(run_ids))} AND sample_id IN {_in_list(len(sample_ids))} "
        "ORDER BY sample_id, run_id, seq",
        [*run_ids, *sample_ids],
    )


def item_exists(wh: Warehouse, sample_id: str, run_ids: Sequence[str]) -> list[str]:
    """The runs (among run_ids) that have a trajectory for sample_id."""
    rows = wh.rows(
        f"SELECT run_id FROM fct_trajectory WHERE sample_id = ? AND run_id IN {_in_list(len(run_ids))}",
        [sample_id, *run_ids],
    )
    return [r["run_id"] for r in rows]


# ------------------------------------------------------------------------------------------------
# Panel-level (leaderboard)
# ------------------------------------------------------------------------------------------------


def correctness_matrix(wh: Warehouse, run_ids: Sequence[str]) -> tuple[list[str], list[list[int]]]:
    """Items answered by every given run (listwise deletion) and the runs x items 0/1 matrix."""
    if not run_ids:
        return [], []
    rows = wh.rows(
        f"""
        WITH t AS (SELECT run_id, sample_id, {_b('is_correct')} AS c FROM fct_trajectory
                   WHERE run_id IN {_in_list(len(run_ids))}),
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


def item_info(wh: Warehouse, sample_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """cell and reasoning type of items (from any run's trajectory)."""
    if not sample_ids:
        return {}
    rows = wh.rows(
        f"SELECT sample_id, any_value(cell) AS cell, any_value(reasoning_type) AS reasoning_type, "
        f"avg({_b('is_correct')}) AS panel_accuracy "
        f"FROM fct_trajectory WHERE sample_id IN {_in_list(len(sample_ids))} GROUP BY sample_id",
        list(sample_ids),
    )
    return {r["sample_id"]: r for r in rows}


def condition_deltas(wh: Warehouse) -> tuple[list[str], list[dict[str, Any]]]:
    if not wh.has("condition_deltas"):
        return [], []
    order = "model, pair_order" if wh.has("condition_deltas", "pair_order") else "ALL"
    rows = wh.rows(f"SELECT * FROM condition_deltas ORDER BY {order}")
    return list(wh.columns("condition_deltas")), rows


# ------------------------------------------------------------------------------------------------
# Reruns
# ------------------------------------------------------------------------------------------------


def rerun_variance(wh: Warehouse, model: str) -> list[dict[str, Any]]:
    return wh.rows("SELECT * FROM rerun_variance WHERE model = ? ORDER BY condition, metric", [model])


def rerun_flips(wh: Warehouse, model: str) -> list[dict[str, Any]]:
    if not wh.has("rerun_item_flips"):
        return []
    return wh.rows(
        "SELECT * FROM rerun_item_flips WHERE model = ? ORDER BY condition, sample_id", [model]
    )


def flip_histogram(wh: Warehouse, model: str) -> list[dict[str, Any]]:
    """Per condition: how many items were correct in k of the n replicates."""
    if not wh.has("rerun_item_flips"):
        return []
    return wh.rows(
        """SELECT condition, n_runs, n_correct, count(*) AS n_items
           FROM rerun_item_flips WHERE model = ? GROUP BY ALL ORDER BY condition, n_correct""",
        [model],
    )


def unstable_items(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Items whose correctness differs across the given runs, with the per-run pattern (run order).

    Most unstable first: correct in about half of the runs (|2·k − n| smallest), then by id."""
    if len(run_ids) < 2:
        return []
    order = " ".join(f"WHEN ? THEN {i}" for i in range(len(run_ids)))
    return wh.rows(
        f"""
        WITH t AS (SELECT sample_id, cell, reasoning_type, {_b('is_correct')} AS c,
                          CASE run_id {order} END AS pos
                   FROM fct_trajectory WHERE run_id IN {_in_list(len(run_ids))})
        SELECT sample_id, any_value(cell) AS cell, any_value(reasoning_type) AS reasoning_type,
               list(c ORDER BY pos) AS pattern, sum(c) AS n_correct, count(*) AS n_runs
        FROM t GROUP BY sample_id HAVING min(c) <> max(c)
        ORDER BY abs(2 * sum(c) - count(*)), sample_id
        """,
        [*run_ids, *run_ids],
    )


def item_correct_counts(wh: Warehouse, run_ids: Sequence[str]) -> list[int]:
    """Per item answered by every given run: how many of them were correct."""
    if not run_ids:
        return []
    rows = wh.con.execute(
        f"""SELECT sum({_b('is_correct')}) FROM fct_trajectory WHERE run_id IN {_in_list(len(run_ids))}
            GROUP BY sample_id HAVING count(DISTINCT run_id) = ? ORDER BY sample_id""",
        [*run_ids, len(run_ids)],
    ).fetchall()
    return [int(r[0]) for r in rows]


# ------------------------------------------------------------------------------------------------
# Item pages: the item itself (raw benchmark tables) and what each run recorded
# ------------------------------------------------------------------------------------------------


def _raw_tables(wh: Warehouse) -> set[str]:
    return {r[0] for r in wh.con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw' "
        "AND table_catalog = current_database()").fetchall()}


def item_rows(wh: Warehouse, sample_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """raw.items rows (question, options, correct_index, seed, ...) of the given items."""
    if not sample_ids or "items" not in _raw_tables(wh):
        return {}
    rows = wh.rows(
        f"SELECT * FROM raw.items WHERE sample_id IN {_in_list(len(sample_ids))}", list(sample_ids))
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
            WHERE ip.sample_id IN {_in_list(len(sample_ids))}
            ORDER BY ip.sample_id, CASE ip.role WHEN 'seed' THEN 0 WHEN 'bridge' THEN 1 ELSE 2 END, ip.rank""",
        list(sample_ids))


def direct_labels(wh: Warehouse, sample_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The `direct` recall labels of the items (the sections that hold the evidence)."""
    if not sample_ids or "recall_labels" not in _raw_tables(wh):
        return []
    return wh.rows(
        f"""SELECT sample_id, label_index, arxiv_id, paper_title, label_section FROM raw.recall_labels
            WHERE relevance = 'direct' AND sample_id IN {_in_list(len(sample_ids))}
            ORDER BY sample_id, label_index""",
        list(sample_ids))


def called_paper_titles(wh: Warehouse, run_ids: Sequence[str], sample_ids: Sequence[str]) -> dict[tuple[str, str], str]:
    """(sample_id, paper_id) -> title for every paper the given runs passed to a tool on these items."""
    if not run_ids or not sample_ids or "graph_nodes" not in _raw_tables(wh):
        return {}
    rows = wh.con.execute(
        f"""SELECT DISTINCT gn.sample_id, gn.paper_id, gn.title
            FROM (SELECT DISTINCT sample_id, paper_id FROM fct_tool_call
                  WHERE run_id IN {_in_list(len(run_ids))} AND sample_id IN {_in_list(len(sample_ids))}
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
        f"SELECT DISTINCT run_id FROM fct_tool_call WHERE run_id IN {_in_list(len(run_ids))} "
        "AND output_text IS NOT NULL", list(run_ids)).fetchall()
    return {r[0] for r in rows}
