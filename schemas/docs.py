"""Render the Arrow schemas as the Markdown reference in docs/formats.md.

`python -m agenthop.schemas.docs > docs/formats.md` regenerates it; tests/test_schema_docs.py fails
when the committed file and the schemas disagree, so the docs cannot drift from the format.
"""

from __future__ import annotations

import pyarrow as pa

from . import benchmark, trajectory
from .column_docs import COLUMN_DOCS


def _table(name: str, schema: pa.Schema, keys: tuple[str, ...]) -> list[str]:
    lines = [f"### `{name}`", "", f"Key: {', '.join(f'`{k}`' for k in keys)}", "",
             "| column | Arrow type | nullable | meaning |", "|---|---|---|---|"]
    lines += [f"| `{f.name}` | `{f.type}` | {'yes' if f.nullable else 'no'} | {COLUMN_DOCS.get((name, f.name), '–')} |"
              for f in schema]
    return lines + [""]


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
        f"Required tables: {', '.join(f'`{t}`' for t in trajectory.REQUIRED_TABLES)}; `messages` is optional.",
        f"`tool_calls.status`: {', '.join(f'`{s}`' for s in trajectory.TOOL_CALL_STATUSES)}.",
        f"`trajectories.terminated_by`: {', '.join(f'`{s}`' for s in trajectory.TERMINATIONS)}.",
        f"`runs.condition`: {', '.join(f'`{s}`' for s in trajectory.CONDITIONS)}.",
        "",
    ]
    for name, schema in trajectory.TABLES.items():
        out += _table(name, schema, trajectory.KEYS[name])
    out += ['<a id="benchmark-tables"></a>', "## Benchmark tables in the warehouse (schema `raw`)", "",
            "The release (docs/benchmark.md) as `agenthop-ingest --benchmark` flattens it (docs/ingest.md).", ""]
    for name, schema in benchmark.TABLES.items():
        out += _table(name, schema, benchmark.KEYS[name])
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
