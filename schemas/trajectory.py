"""Arrow schemas of the trajectory store (docs/formats.md#trajectory-store).

These schemas are the single source of truth for the Parquet files the harness writes, for the
validation ingest performs, and for the column lists in the docs. Column order is free in files;
ingest matches by name and casts integer widths and timestamp units.
"""

from __future__ import annotations

import pyarrow as pa

#: Allowed values of ``tool_calls.status`` (docs/formats.md#trajectory-store).
TOOL_CALL_STATUSES: tuple[str, ...] = (
    "ok",
    "rejected_budget",
    "rejected_disabled",
    "unknown_paper",
    "no_full_text",
    "section_not_found",
    "invalid_args",
    "unknown_tool",
    "not_executed",
)

#: Allowed values of ``trajectories.terminated_by`` (the reference harness).
TERMINATIONS: tuple[str, ...] = ("answer", "max_turns", "budget", "token_limit", "error")

#: Allowed values of ``runs.condition`` (docs/harness.md#deliberate-differences).
CONDITIONS: tuple[str, ...] = ("full", "no_search", "closed_book")

#: Allowed values of ``turns.role``.
TURN_ROLES: tuple[str, ...] = ("assistant", "error")

TS = pa.timestamp("us", tz="UTC")

RUNS = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("backend", pa.string(), nullable=False),
        pa.field("condition", pa.string(), nullable=False),
        pa.field("replicate", pa.int32(), nullable=False),
        pa.field("benchmark_sha256", pa.string(), nullable=False),
        pa.field("budget_total", pa.int32(), nullable=False),
        pa.field("max_turns", pa.int32(), nullable=False),
        pa.field("max_total_tokens", pa.int64(), nullable=False),
        pa.field("harness_version", pa.string(), nullable=False),
        pa.field("config_json", pa.string(), nullable=False),
        pa.field("family", pa.string()),
        pa.field("tier", pa.string()),
        pa.field("started_at", TS),
        pa.field("finished_at", TS),
        # added after the first release: run files written before it lack the column (read as null)
        pa.field("generation", pa.string(), metadata={b"absent_means_null": b"true"}),
    ]
)

TRAJECTORIES = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("attempt", pa.int32(), nullable=False),
        pa.field("is_final", pa.bool_(), nullable=False),
        pa.field("predicted_answer", pa.string()),
        pa.field("predicted_index", pa.int32(), nullable=False),
        pa.field("is_correct", pa.bool_(), nullable=False),
        pa.field("terminated_by", pa.string(), nullable=False),
        pa.field("total_turns", pa.int32(), nullable=False),
        pa.field("budget_used", pa.int32(), nullable=False),
        pa.field("total_prompt_tokens", pa.int64(), nullable=False),
        pa.field("total_completion_tokens", pa.int64(), nullable=False),
        pa.field("cache_read_tokens", pa.int64(), nullable=False),
        pa.field("cache_creation_tokens", pa.int64(), nullable=False),
        pa.field("total_tokens", pa.int64(), nullable=False),
        pa.field("tool_errors", pa.int32(), nullable=False),
        pa.field("api_error_count", pa.int32(), nullable=False),
        pa.field("transient_retry_count", pa.int32(), nullable=False),
        pa.field("wall_time_s", pa.float64(), nullable=False),
        pa.field("reasoning", pa.string()),
        pa.field("wait_s", pa.float64()),
        pa.field("repaired_chars", pa.int32()),
    ]
)

TURNS = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("attempt", pa.int32(), nullable=False),
        pa.field("turn", pa.int32(), nullable=False),
        pa.field("role", pa.string(), nullable=False),
        pa.field("n_tool_calls", pa.int32(), nullable=False),
        pa.field("prompt_tokens", pa.int64(), nullable=False),
        pa.field("completion_tokens", pa.int64(), nullable=False),
        pa.field("cache_read_tokens", pa.int64(), nullable=False),
        pa.field("cache_creation_tokens", pa.int64(), nullable=False),
        pa.field("cumulative_tokens", pa.int64(), nullable=False),
        pa.field("budget_before", pa.int32(), nullable=False),
        pa.field("budget_after", pa.int32(), nullable=False),
        pa.field("content_chars", pa.int32(), nullable=False),
        pa.field("t_offset_s", pa.float64(), nullable=False),
    ]
)

TOOL_CALLS = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("attempt", pa.int32(), nullable=False),
        pa.field("turn", pa.int32(), nullable=False),
        pa.field("call_index", pa.int32(), nullable=False),
        pa.field("seq", pa.int32(), nullable=False),
        pa.field("tool", pa.string(), nullable=False),
        pa.field("args_json", pa.string(), nullable=False),
        pa.field("paper_id", pa.string()),
        pa.field("section_query", pa.string()),
        pa.field("resolved_header", pa.string()),
        pa.field("resolved_section_index", pa.int32()),
        pa.field("search_query", pa.string()),
        pa.field("answer", pa.string()),
        pa.field("cost", pa.int32(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("output_chars", pa.int32(), nullable=False),
        pa.field("budget_after", pa.int32(), nullable=False),
    ]
)

MESSAGES = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("attempt", pa.int32(), nullable=False),
        pa.field("idx", pa.int32(), nullable=False),
        pa.field("role", pa.string(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("tool_call_id", pa.string()),
        pa.field("content", pa.string()),
    ]
)

#: Table name -> schema, in the order ingest loads them.
TABLES: dict[str, pa.Schema] = {
    "runs": RUNS,
    "trajectories": TRAJECTORIES,
    "turns": TURNS,
    "tool_calls": TOOL_CALLS,
    "messages": MESSAGES,
}

#: Tables a run directory must contain; ``messages`` is optional (docs/formats.md#trajectory-store).
REQUIRED_TABLES: tuple[str, ...] = ("runs", "trajectories", "turns", "tool_calls")

#: Primary keys per table (used by ingest's duplicate-key check and by dbt tests).
KEYS: dict[str, tuple[str, ...]] = {
    "runs": ("run_id",),
    "trajectories": ("run_id", "sample_id", "attempt"),
    "turns": ("run_id", "sample_id", "attempt", "turn"),
    "tool_calls": ("run_id", "sample_id", "attempt", "seq"),
    "messages": ("run_id", "sample_id", "attempt", "idx"),
}
