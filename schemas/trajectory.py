"""Arrow schemas of the trajectory store (docs/formats.md#trajectory-store).

These schemas are the single source of truth for the Parquet files the harness writes, for the
validation ingest performs, and for the column lists in the docs. Column order is free in files;
ingest matches by name and casts integer widths and timestamp units.
"""

from __future__ import annotations

import pyarrow as pa

from .evolution import added_later

#: Allowed values of ``tool_calls.status`` (docs/formats.md#trajectory-store), shared by every
#: benchmark: ``tool_error`` is a tool that ran and failed for a reason of its own (the source's
#: error type in ``tool_calls.error_type``).
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
    "tool_error",
)

#: Allowed values of ``trajectories.terminated_by``, shared by every benchmark: ``answer`` (the
#: agent finished on its own), the caps, ``error``. AgentHop's harness uses the first five (the
#: reference harness's vocabulary); imported logs map their own limits onto the others.
TERMINATIONS: tuple[str, ...] = (
    "answer",
    "max_turns",
    "budget",
    "token_limit",
    "time_limit",
    "cost_limit",
    "message_limit",
    "context_limit",
    "other_limit",
    "error",
)

#: Allowed values of ``runs.backend``: the harness's backends and the importers' sources.
HARNESS_BACKENDS: tuple[str, ...] = ("sim", "openai", "anthropic", "google", "responses")
IMPORTED_BACKENDS: tuple[str, ...] = ("reference-json", "inspect-log", "responses-file", "eee", "atif")
BACKENDS: tuple[str, ...] = HARNESS_BACKENDS + IMPORTED_BACKENDS

from .names import CONDITIONS, DEFAULT_BENCHMARK  # noqa: E402,F401 (defined without pyarrow, re-exported)

#: ``runs.condition`` of a run that has none: imported runs of benchmarks without conditions (Inspect logs).
NO_CONDITION = ""

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
        # added after the first release: optional on read (schemas/evolution.py)
        added_later(pa.field("generation", pa.string())),
        added_later(pa.field("benchmark", pa.string(), nullable=False), default=DEFAULT_BENCHMARK),
        added_later(pa.field("paradigm", pa.string())),
        # provenance of imported runs (an Inspect log's), null for the harness's own runs
        added_later(pa.field("source_packages_json", pa.string())),
        added_later(pa.field("task_version", pa.string())),
        added_later(pa.field("task_args_json", pa.string())),
        added_later(pa.field("message_limit", pa.int32())),
        added_later(pa.field("time_limit_s", pa.float64())),
        added_later(pa.field("working_limit_s", pa.float64())),
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
        # added after the first release: optional on read (schemas/evolution.py)
        added_later(pa.field("wait_s", pa.float64())),
        added_later(pa.field("repaired_chars", pa.int32())),
        added_later(pa.field("score", pa.float64()), copy_of="is_correct"),
        added_later(pa.field("answer_json", pa.string())),
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
        # added after the first release: optional on read (schemas/evolution.py)
        added_later(pa.field("error_text", pa.string())),
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
        # added after the first release: optional on read (schemas/evolution.py)
        added_later(pa.field("error_type", pa.string())),
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

#: Every scorer's value per sample (imported logs with several scorers; the primary one is also
#: ``trajectories.score``). ``value_num`` is the numeric reading of ``value_text`` when it has one.
SCORES = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("scorer", pa.string(), nullable=False),
        pa.field("key", pa.string(), nullable=False),
        pa.field("value_text", pa.string()),
        pa.field("value_num", pa.float64()),
    ]
)

#: The trajectory tables every source fills, in the order ingest loads them.
TABLES: dict[str, pa.Schema] = {
    "runs": RUNS,
    "trajectories": TRAJECTORIES,
    "turns": TURNS,
    "tool_calls": TOOL_CALLS,
    "messages": MESSAGES,
}

#: Every table a run may carry: the trajectory tables plus the optional ``scores``.
RUN_TABLES: dict[str, pa.Schema] = {**TABLES, "scores": SCORES}

#: Tables a run directory must contain; ``messages`` and ``scores`` are optional (docs/formats.md#trajectory-store).
REQUIRED_TABLES: tuple[str, ...] = ("runs", "trajectories", "turns", "tool_calls")

#: Primary keys per table (used by ingest's duplicate-key check and by dbt tests).
KEYS: dict[str, tuple[str, ...]] = {
    "runs": ("run_id",),
    "trajectories": ("run_id", "sample_id", "attempt"),
    "turns": ("run_id", "sample_id", "attempt", "turn"),
    "tool_calls": ("run_id", "sample_id", "attempt", "seq"),
    "messages": ("run_id", "sample_id", "attempt", "idx"),
    "scores": ("run_id", "sample_id", "scorer", "key"),
}
