"""The metric catalogue of the warehouse (``raw.metric_defs``, docs/metrics.md#metric-catalogue).

One row per (benchmark, metric): what kind of value the metric has, which way is better, whether it
is the benchmark's primary metric, and how pages label it. Rows come from the sources at import (a
benchmark's own definitions, every Inspect scorer and dict key) and from the user
(``agenthop-ingest --metric-direction`` / ``--primary-metric``, ``source`` = ``user``), whose choices of
direction and primary metric a later import keeps. A warehouse made before the table existed gains
it (empty) at its next ingest; readers treat it as optional.
"""

from __future__ import annotations

import pyarrow as pa

#: ``kind``: what a value of the metric is.
KINDS: tuple[str, ...] = ("binary", "continuous", "ordinal", "categorical")

#: ``direction``: which values are better.
HIGHER, LOWER, NO_DIRECTION = "higher_is_better", "lower_is_better", "none"
DIRECTIONS: tuple[str, ...] = (HIGHER, LOWER, NO_DIRECTION)

#: ``source`` of a row the user set: its direction and primary flag survive later imports.
USER_SOURCE = "user"

METRIC_DEFS = pa.schema(
    [
        pa.field("benchmark", pa.string(), nullable=False),
        pa.field("metric", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("direction", pa.string(), nullable=False),
        pa.field("is_primary", pa.bool_(), nullable=False),
        pa.field("label", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("description", pa.string()),
        pa.field("min_value", pa.float64()),
        pa.field("max_value", pa.float64()),
    ]
)

KEYS: dict[str, tuple[str, ...]] = {"metric_defs": ("benchmark", "metric")}
