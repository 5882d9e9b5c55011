"""Arrow schemas of the behaviour scanners' tables (docs/scanners.md).

``scanner_results``: one row per (run, sample, attempt, scanner) that `agenthop-scan` classified;
``scanner_runs``: which version of a scanner last scanned which version of a run (so an unchanged
scanner on an unchanged run does no work); ``human_labels``: the labels people gave
(`agenthop-ingest --labels`), against which the scanners are measured. All three are later tables: a
warehouse made before them gains them (empty) at its next ingest or scan, and the dbt staging views
read as empty while they are absent.
"""

from __future__ import annotations

import pyarrow as pa

TS = pa.timestamp("us", tz="UTC")

#: One reference into the transcript: a turn, and a tool call's ``seq`` in the attempt where the finding
#: is a call (null for a whole turn or message).
EVIDENCE = pa.list_(pa.struct([pa.field("turn", pa.int32()), pa.field("seq", pa.int32())]))

SCANNER_RESULTS = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("attempt", pa.int32(), nullable=False),
        pa.field("scanner", pa.string(), nullable=False),
        pa.field("scanner_version", pa.string(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("label", pa.string()),
        pa.field("explanation", pa.string()),
        pa.field("evidence", EVIDENCE),
    ]
)

SCANNER_RUNS = pa.schema(
    [
        pa.field("scanner", pa.string(), nullable=False),
        pa.field("run_id", pa.string(), nullable=False),
        #: '' for a scan of every unit of the run, 'k/n' for one shard's units
        pa.field("shard", pa.string(), nullable=False),
        pa.field("scanner_version", pa.string(), nullable=False),
        #: the run's content hash when it was scanned (raw.ingest_log)
        pa.field("run_sha256", pa.string(), nullable=False),
        pa.field("n_units", pa.int64(), nullable=False),
        pa.field("scanned_at", TS, nullable=False),
    ]
)

HUMAN_LABELS = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("attempt", pa.int32(), nullable=False),
        pa.field("scanner", pa.string(), nullable=False),
        pa.field("labeler", pa.string(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("label", pa.string()),
        pa.field("source", pa.string(), nullable=False),
        pa.field("loaded_at", TS, nullable=False),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "scanner_results": SCANNER_RESULTS,
    "scanner_runs": SCANNER_RUNS,
    "human_labels": HUMAN_LABELS,
}

KEYS: dict[str, tuple[str, ...]] = {
    "scanner_results": ("run_id", "sample_id", "attempt", "scanner"),
    "scanner_runs": ("scanner", "run_id", "shard"),
    "human_labels": ("run_id", "sample_id", "attempt", "scanner", "labeler"),
}
