"""Render the Arrow schemas as the Markdown reference in docs/formats.md.

`python -m agenthop.schemas.docs > docs/formats.md` regenerates it; tests/test_schema_docs.py fails
when the committed file and the schemas disagree, so the docs cannot drift from the format.
"""

from __future__ import annotations

import pyarrow as pa

from . import benchmark, trajectory


def _table(name: str, schema: pa.Schema, keys: tuple[str, ...]) -> list[str]:
    lines = [f"### `{name}`", "", f"Key: {', '.join(f'`{k}`' for k in keys)}", "",
             "| column | Arrow type | nullable |", "|---|---|---|"]
    lines += [f"| `{f.name}` | `{f.type}` | {'yes' if f.nullable else 'no'} |" for f in schema]
    return lines + [""]


def render() -> str:
    out = [
        "# File formats and raw tables",
        "",
        "Generated from `schemas/` (the single source of truth) by `python -m agenthop.schemas.docs`;",
        "do not edit by hand. Integer widths and timestamp units in files may differ (ingest casts);",
        "extra columns in run files are ignored.",
        "",
        "## Trajectory store (SPEC §3): `OUT/<run_id>/<table>-<part>.parquet`",
        "",
        f"Required tables: {', '.join(f'`{t}`' for t in trajectory.REQUIRED_TABLES)}; `messages` is optional.",
        f"`tool_calls.status`: {', '.join(f'`{s}`' for s in trajectory.TOOL_CALL_STATUSES)}.",
        f"`trajectories.terminated_by`: {', '.join(f'`{s}`' for s in trajectory.TERMINATIONS)}.",
        f"`runs.condition`: {', '.join(f'`{s}`' for s in trajectory.CONDITIONS)}.",
        "",
    ]
    for name, schema in trajectory.TABLES.items():
        out += _table(name, schema, trajectory.KEYS[name])
    out += ["## Benchmark tables in the warehouse (SPEC §4, schema `raw`)", ""]
    for name, schema in benchmark.TABLES.items():
        out += _table(name, schema, benchmark.KEYS[name])
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
