"""Arrow schemas of SciExplore's raw warehouse tables (docs/sciexplore.md#warehouse-tables, schema ``raw``).

The release (tasks.jsonl) is flattened into ``sciexplore_tasks`` plus one row per T3 ground-truth
reference and per T4 ground-truth cell; systems' responses, their traces and every judge's
verdicts (``judgments``) are tables of their own. The dbt staging models read exactly these columns.
"""

from __future__ import annotations

import pyarrow as pa

from .evolution import added_later

UNITS: tuple[str, ...] = ("answer", "citation", "cell")
VERDICTS: tuple[str, ...] = ("correct", "incorrect", "not_attempted")

RELEASE = pa.schema([
    pa.field("benchmark", pa.string(), nullable=False),
    pa.field("version", pa.string(), nullable=False),
    pa.field("sha256", pa.string(), nullable=False),
    pa.field("n_items", pa.int32(), nullable=False),
    pa.field("source", pa.string(), nullable=False),
    pa.field("loaded_at", pa.timestamp("us", tz="UTC"), nullable=False),
])

TASKS = pa.schema([
    pa.field("task_id", pa.string(), nullable=False),
    pa.field("type", pa.string(), nullable=False),  # T1..T4
    pa.field("domain", pa.string(), nullable=False),
    pa.field("question", pa.string(), nullable=False),
    pa.field("answer", pa.string()),  # T1, T2
    pa.field("aliases", pa.list_(pa.string())),  # T1, T2
    pa.field("hops", pa.int32()),  # T1
    pa.field("databases", pa.list_(pa.string())),  # T1
    pa.field("year", pa.int32()),  # T2
    pa.field("paragraph", pa.string()),  # T3
    pa.field("columns", pa.list_(pa.string())),  # T4
    pa.field("primary_key", pa.string()),  # T4
    pa.field("task_order", pa.int32(), nullable=False),
    pa.field("task_json", pa.string(), nullable=False),  # the tasks.jsonl object, for the judges
    # added later: optional on read (docs/interchange.md#sample-hash)
    added_later(pa.field("sample_hash", pa.string())),
])

T3_REFERENCES = pa.schema([
    pa.field("task_id", pa.string(), nullable=False),
    pa.field("slot", pa.string(), nullable=False),
    pa.field("ref_index", pa.int32(), nullable=False),
    pa.field("title", pa.string(), nullable=False),
    pa.field("year", pa.int32()),
    pa.field("authors", pa.list_(pa.string())),
    pa.field("venue", pa.string()),
    pa.field("doi", pa.string()),
])

T4_CELLS = pa.schema([
    pa.field("task_id", pa.string(), nullable=False),
    pa.field("row_index", pa.int32(), nullable=False),
    pa.field("row_key", pa.string(), nullable=False),  # the row's primary-key value
    pa.field("column", pa.string(), nullable=False),
    pa.field("column_index", pa.int32(), nullable=False),
    pa.field("value", pa.string(), nullable=False),
    pa.field("is_primary_key", pa.bool_(), nullable=False),
])

DOCUMENTS = pa.schema([
    pa.field("doc_id", pa.string(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),
    pa.field("database", pa.string()),
    pa.field("title", pa.string(), nullable=False),
    pa.field("url", pa.string(), nullable=False),
    pa.field("year", pa.int32()),
    pa.field("n_chars", pa.int64(), nullable=False),
])

RUNS = pa.schema([
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("model", pa.string(), nullable=False),
    pa.field("paradigm", pa.string(), nullable=False),  # foundation | search | deep_research
    pa.field("replicate", pa.int32(), nullable=False),
    pa.field("backend", pa.string(), nullable=False),  # responses-file
    pa.field("benchmark_sha256", pa.string(), nullable=False),
    pa.field("simulated", pa.bool_(), nullable=False),  # the responses file says a simulated system wrote them
])

RESPONSES = pa.schema([
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("task_id", pa.string(), nullable=False),
    pa.field("status", pa.string(), nullable=False),  # answered | not_attempted | error
    pa.field("answer_text", pa.string()),  # T1/T2 text, T4 Markdown, or the JSON of an object answer
    pa.field("answer_json", pa.string()),  # the parsed answer (T3 slots, T4 {columns, rows})
    pa.field("parse_error", pa.string()),  # why a T3/T4 answer did not parse
    pa.field("format_ok", pa.bool_()),  # T4: parses with exactly the task's columns
    pa.field("prompt_tokens", pa.int64()),
    pa.field("completion_tokens", pa.int64()),
    pa.field("wall_time_s", pa.float64()),
    pa.field("source", pa.string(), nullable=False),  # file:line
    pa.field("line_sha256", pa.string(), nullable=False),
])

TRACE = pa.schema([
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("task_id", pa.string(), nullable=False),
    pa.field("seq", pa.int32(), nullable=False),
    pa.field("tool", pa.string(), nullable=False),
    pa.field("query", pa.string()),
    pa.field("target", pa.string()),
    pa.field("result_chars", pa.int64()),
    pa.field("is_search", pa.bool_(), nullable=False),
])

JUDGMENTS = pa.schema([
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("task_id", pa.string(), nullable=False),
    pa.field("unit", pa.string(), nullable=False),  # answer | citation | cell
    pa.field("slot", pa.string()),  # citation
    pa.field("ref_index", pa.int32()),  # citation: 0-based position in the system's list for the slot
    pa.field("row_key", pa.string()),  # cell: the ground-truth primary key the predicted row matched
    pa.field("column", pa.string()),  # cell
    pa.field("verdict", pa.string(), nullable=False),  # correct | incorrect | not_attempted
    pa.field("judge", pa.string(), nullable=False),
    pa.field("judge_version", pa.string(), nullable=False),
    pa.field("rationale", pa.string()),
])

#: raw table -> schema; release tables are replaced whole, the others per run and task
RELEASE_TABLES: dict[str, pa.Schema] = {
    "sciexplore_release": RELEASE,
    "sciexplore_tasks": TASKS,
    "sciexplore_t3_references": T3_REFERENCES,
    "sciexplore_t4_cells": T4_CELLS,
    "sciexplore_documents": DOCUMENTS,
}
RUN_TABLES: dict[str, pa.Schema] = {
    "sciexplore_runs": RUNS,
    "sciexplore_responses": RESPONSES,
    "sciexplore_trace": TRACE,
    "judgments": JUDGMENTS,
}
TABLES: dict[str, pa.Schema] = RELEASE_TABLES | RUN_TABLES
