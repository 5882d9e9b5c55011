"""Render the Arrow schemas as the Markdown reference in docs/formats.md.

`python -m agenthop.schemas.docs > docs/formats.md` regenerates it; tests/test_schema_docs.py fails
when the committed file and the schemas disagree, so the docs cannot drift from the format.
"""

from __future__ import annotations

import pyarrow as pa

from . import agenthop as benchmark, catalogue, metrics, quality, scanners, trajectory
from .column_docs import COLUMN_DOCS
from .evolution import absent


def _when_absent(field: pa.Field) -> str:
    how = absent(field)
    return "required" if how is None else f"optional, reads as {how.describe()}"


def _table(name: str, schema: pa.Schema, keys: tuple[str, ...]) -> list[str]:
    lines = [f"### `{name}`", "", f"Key: {', '.join(f'`{k}`' for k in keys)}", "",
             "| column | Arrow type | nullable | in older files | meaning |", "|---|---|---|---|---|"]
    lines += [f"| `{f.name}` | `{f.type}` | {'yes' if f.nullable else 'no'} | {_when_absent(f)} | "
              f"{COLUMN_DOCS.get((name, f.name), '–')} |" for f in schema]
    return lines + [""]


def _requirement(message: str) -> str:
    """The rule's requirement without the ``{value} ...`` lead-in of its error message."""
    for sep in ("; ", ": "):
        if sep in message:
            return message.split(sep, 1)[1]
    return message


def _quality() -> list[str]:
    ranges = ", ".join(
        f"`{t}.{c}` {lo}..{hi if hi is not None else ''}" for (t, c), (lo, hi) in quality.RANGE_OVERRIDES.items()
    )
    lines = [
        "## Data-quality rules (checked by ingest before anything is written)",
        "",
        f"- Ranges: every integer and floating column of the trajectory tables is >= {quality.MIN_DEFAULT}, "
        f"except {ranges}.",
        "- Floating columns hold finite numbers (no NaN, no infinity).",
        "- Allowed values: the vocabularies listed above.",
        f"- Known tools (AgentHop; each benchmark declares its own): {', '.join(f'`{n}`' for n in quality.TOOL_NAMES)}.",
        "",
        "| rule | table.column | requirement |",
        "|---|---|---|",
    ]
    lines += [
        f"| `{r.name}` | `{r.table}.{r.column}` | {_requirement(r.message)} |"
        for r in quality.RULES if r in quality.CONSISTENCY or r.name == "unknown_tool_status"
    ]
    lines += [
        "",
        "A violation refuses the whole ingest; `--accept-dq` loads the rows and records each violation:",
        "",
    ]
    return lines + _table("dq_issues", quality.DQ_ISSUES, ("load_id", "file", "row", "column_name", "rule"))


def render() -> str:
    out = [
        "# File formats and raw tables",
        "",
        "Generated from `schemas/` (the single source of truth) by `python -m agenthop.schemas.docs`;",
        "do not edit by hand. Integer widths and timestamp units in files may differ (ingest casts);",
        "extra columns in run files are ignored.",
        "",
        '<a id="trajectory-store"></a>',
        "## Trajectory store: `OUT/<run_id>/<table>-<part>.parquet`",
        "",
        "What `agenthop-harness run` writes and `agenthop-ingest --runs` reads: one directory per run",
        "(docs/running.md), Parquet parts per table, `_SUCCESS` when the run finished. Meanings of the",
        "columns: docs/harness.md (what the loop records) and docs/metrics.md (what the marts make of it).",
        "",
        f"Required tables: {', '.join(f'`{t}`' for t in trajectory.REQUIRED_TABLES)}; `messages` and `scores` "
        "are optional.",
        "",
        "Shared vocabularies (every benchmark maps its outcomes into them):",
        "",
        f"- `tool_calls.status`: {', '.join(f'`{s}`' for s in trajectory.TOOL_CALL_STATUSES)}.",
        f"- `trajectories.terminated_by`: {', '.join(f'`{s}`' for s in trajectory.TERMINATIONS)}.",
        f"- `runs.backend`: {', '.join(f'`{s}`' for s in trajectory.BACKENDS)} (the last "
        f"{len(trajectory.IMPORTED_BACKENDS)} are imported sources).",
        f"- `runs.condition`: {', '.join(f'`{s}`' for s in trajectory.CONDITIONS)}, every benchmark's own "
        "conditions, or empty (`''`) for imported runs without one (Inspect logs).",
        "",
        '<a id="optional-on-read"></a>',
        "Columns added to the format after its first release are optional on read (column \"in older files\"):",
        "a file written before a column existed still loads, and the column reads as the value given (null,",
        "a constant, or a copy of another column of the row); a warehouse made before it gains the column at",
        "its next ingest, filled the same way. Columns that only one benchmark fills are nullable and say so.",
        "",
    ]
    for name, schema in trajectory.RUN_TABLES.items():
        out += _table(name, schema, trajectory.KEYS[name])
    out += ['<a id="benchmark-catalogue"></a>', "## Loaded releases: `raw.benchmarks`", "",
            "One row per benchmark name: the release its runs are checked against (docs/ingest.md).", ""]
    out += _table("benchmarks", catalogue.BENCHMARKS, catalogue.KEYS["benchmarks"])
    out += ['<a id="metric-catalogue"></a>', "## Metric catalogue: `raw.metric_defs`", "",
            "One row per (benchmark, metric): kind, direction, primary flag and label, from the sources and the",
            "user (docs/metrics.md#metric-catalogue). Warehouses made before it gain it at their next ingest.", ""]
    out += _table("metric_defs", metrics.METRIC_DEFS, metrics.KEYS["metric_defs"])
    out += ['<a id="scanner-tables"></a>', "## Behaviour scanners: `raw.scanner_results`, `raw.scanner_runs`, "
            "`raw.human_labels`", "",
            "What `agenthop-scan` finds in the transcripts, which scanner version last scanned which run, and the",
            "human labels the scanners are measured against (docs/scanners.md). Warehouses made before them gain",
            "them at their next ingest or scan.", ""]
    for name, schema in scanners.TABLES.items():
        out += _table(name, schema, scanners.KEYS[name])
    out += ['<a id="benchmark-tables"></a>', "## Benchmark tables in the warehouse (schema `raw`)", "",
            "The release (docs/benchmark.md) as `agenthop-ingest --benchmark` flattens it (docs/ingest.md).", ""]
    for name, schema in benchmark.TABLES.items():
        out += _table(name, schema, benchmark.KEYS[name])
    out += _quality()
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
