"""The warehouse's catalogue of loaded benchmark releases (``raw.benchmarks``), one row per benchmark.

A warehouse holds runs of several benchmarks; each benchmark name has at most one loaded release,
and ingest refuses a run whose ``runs.benchmark_sha256`` differs from its benchmark's release
(docs/ingest.md). ``sha256`` is the release hash runs carry (for AgentHop the first 16 hex
characters of the SHA-256 of qa/full.jsonl).
"""

from __future__ import annotations

import pyarrow as pa

BENCHMARKS = pa.schema(
    [
        pa.field("benchmark", pa.string(), nullable=False),
        pa.field("version", pa.string()),
        pa.field("sha256", pa.string(), nullable=False),
        pa.field("n_items", pa.int64(), nullable=False),
        pa.field("loaded_at", pa.timestamp("us", tz="UTC"), nullable=False),
    ]
)

KEYS: dict[str, tuple[str, ...]] = {"benchmarks": ("benchmark",)}
