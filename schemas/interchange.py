"""Arrow schema of ``raw.reported_results`` (docs/interchange.md#reported-results): aggregate scores an
Every Eval Ever record reports without instances (a leaderboard's numbers), one row per (evaluation,
result). Optional: a warehouse gains the table at the first ingest that loads such a record, and
readers treat it as absent before that.
"""

from __future__ import annotations

import pyarrow as pa

REPORTED_TABLE = "reported_results"

REPORTED_RESULTS = pa.schema(
    [
        pa.field("benchmark", pa.string(), nullable=False),  # eee:<evaluation name>
        pa.field("model", pa.string(), nullable=False),  # model_info.id
        pa.field("evaluation_id", pa.string(), nullable=False),
        pa.field("result_id", pa.string(), nullable=False),  # evaluation_result_id, else the evaluation name
        pa.field("metric", pa.string(), nullable=False),  # <result_id>.<metric_id>
        pa.field("score", pa.float64(), nullable=False),
        pa.field("direction", pa.string(), nullable=False),  # higher_is_better | lower_is_better
        pa.field("standard_error", pa.float64()),
        pa.field("ci_lower", pa.float64()),
        pa.field("ci_upper", pa.float64()),
        pa.field("num_samples", pa.int64()),
        pa.field("organization", pa.string()),  # source_metadata.source_organization_name
        pa.field("retrieved_timestamp", pa.string()),
        pa.field("source", pa.string(), nullable=False),  # the file it came from
        pa.field("loaded_at", pa.timestamp("us", tz="UTC"), nullable=False),
    ]
)

KEYS: dict[str, tuple[str, ...]] = {REPORTED_TABLE: ("evaluation_id", "result_id")}
