"""The relations the report core reads (every benchmark's runs) and the columns it needs from them.

The shared marts live in schema ``main``; the final trajectories and calls of every benchmark are
dbt's shared intermediate tables, the arguments, errors, messages and every scorer's values its
shared staging views (docs/architecture.md). A missing relation or column is a user error naming it.
"""

from __future__ import annotations

from agenthop.harness.errors import AgentHopError

from ..warehouse import Warehouse

RUN_SUMMARY = "main.run_summary"
TERMINATIONS = "main.termination_summary"
TRANSITIONS = "main.tool_transitions"
TRIGRAMS = "main.tool_trigrams"
FLIPS = "main.rerun_item_flips"
COST = "main.model_cost"
TRAJECTORIES = "intermediate.int_core_trajectories_final"
CALLS = "intermediate.int_core_tool_calls_final"
ITEM_GROUPS = "intermediate.int_core_item_groups"
RUNS = "staging.stg_harness__runs"
CALL_DETAILS = "staging.stg_harness__tool_calls"
MESSAGES = "staging.stg_harness__messages"
SCORES = "staging.stg_harness__scores"

#: Columns the core reads, per relation.
REQUIRED: dict[str, tuple[str, ...]] = {
    RUN_SUMMARY: ("run_id", "benchmark", "model", "backend", "condition", "replicate", "is_simulated", "n",
                  "n_scored", "mean_score", "accuracy", "total_tokens", "avg_tokens", "avg_turns", "total_usd",
                  "n_answer", "n_limit", "n_error"),
    TERMINATIONS: ("run_id", "terminated_by", "termination_order", "n", "n_total", "share", "accuracy"),
    TRANSITIONS: ("run_id", "prev_tool", "next_tool", "n", "p_next"),
    TRIGRAMS: ("run_id", "trigram", "n", "share"),
    FLIPS: ("benchmark", "model", "condition", "sample_id", "n_runs", "n_correct", "flipped", "mean_score",
            "score_spread"),
    COST: ("run_id", "pricing_found", "prompt_tokens", "completion_tokens", "cache_read_tokens",
           "cache_creation_tokens", "total_usd", "usd_per_item"),
    TRAJECTORIES: ("run_id", "sample_id", "attempt", "n_attempts", "benchmark", "predicted_answer", "is_correct",
                   "score", "terminated_by", "total_turns", "total_tokens", "wall_time_s"),
    CALLS: ("run_id", "sample_id", "attempt", "turn", "seq", "tool", "status"),
    RUNS: ("run_id", "benchmark_sha256"),
    CALL_DETAILS: ("run_id", "sample_id", "attempt", "turn", "seq", "tool", "args_json", "status", "output_chars",
                   "error_type"),
    MESSAGES: ("run_id", "sample_id", "attempt", "idx", "role", "name", "content"),
    SCORES: ("run_id", "sample_id", "scorer", "score_key", "value_text", "value_num"),
}
#: Optional columns of RUNS the pages' footers show: where a run came from (an imported log's provenance).
RUN_SOURCE = ("harness_version", "max_turns", "max_total_tokens", "source_packages_json", "task_version",
              "task_args_json", "message_limit", "time_limit_s", "working_limit_s")
#: Optional: an item's group (a benchmark that has none builds it empty or leaves it out).
OPTIONAL = (ITEM_GROUPS,)


def _columns(wh: Warehouse) -> dict[str, tuple[str, ...]]:
    cache = getattr(wh, "_core_columns", None)
    if cache is None:
        cache = {}
        rows = wh.con.execute(
            "SELECT table_schema, table_name, column_name FROM information_schema.columns "
            "WHERE table_catalog = current_database() AND table_schema IN ('main', 'intermediate', 'staging') "
            "ORDER BY table_schema, table_name, ordinal_position").fetchall()
        for schema, table, column in rows:
            cache.setdefault(f"{schema}.{table}", []).append(column)
        cache = {k: tuple(v) for k, v in cache.items()}
        wh._core_columns = cache  # type: ignore[attr-defined]
    return cache


def has(wh: Warehouse, relation: str) -> bool:
    return relation in _columns(wh)


def require_shared(wh: Warehouse, relations: tuple[str, ...] | None = None) -> None:
    """User error naming the shared relations (or their columns) the warehouse lacks."""
    cols = _columns(wh)
    wanted = relations if relations is not None else tuple(REQUIRED)
    missing = [r for r in wanted if r not in cols]
    if missing:
        raise AgentHopError(f"warehouse {wh.path} lacks {', '.join(missing)}: run dbt build first")
    for rel in wanted:
        lacking = [c for c in REQUIRED.get(rel, ()) if c not in cols[rel]]
        if lacking:
            name = f"mart {rel.split('.', 1)[1]}" if rel.startswith("main.") else rel
            raise AgentHopError(f"{name} in {wh.path} lacks column(s) {', '.join(lacking)}: it was built by another "
                                "version of the dbt project; run dbt build first")
