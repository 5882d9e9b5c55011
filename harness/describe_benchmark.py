"""`agenthop-harness describe-benchmark`: validate a release of any benchmark and print its statistics.

The benchmark is the one the registry detects from the release's files (harness/benchmarks), or the one
``--benchmark NAME`` names; its ``describe`` hook computes the statistics. The core names no benchmark.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from . import benchmarks
from .cli_examples import epilog
from .errors import AgentHopError, cli_errors
from .release_store import load_at
from .storage import Location

#: warnings shown on stderr before "... and N more"
SHOWN_WARNINGS = 20


def choose(root: Path, name: str | None) -> benchmarks.Benchmark:
    """The benchmark of the release at ``root``: ``name``'s when given (its release file must be there),
    else the one the registry detects; an error names the directory and what is missing."""
    if not root.is_dir():
        raise AgentHopError(f"{root}: no such release directory")
    if name is None:
        bench = benchmarks.detect(root)
    else:
        bench = benchmarks.get(name)
        if not bench.is_release(root):
            raise AgentHopError(f"{root}: not a release of benchmark {name} ({bench.release_marker} is missing)")
    if bench.describe is None or bench.load_release is None:
        raise AgentHopError(f"{root}: benchmark {bench.name!r} cannot describe its releases")
    return bench


def describe_release(location: Path | str, name: str | None, limit: int | None) -> benchmarks.Description:
    """Load the release at ``location`` (a directory or an ``s3://`` prefix) and describe it."""
    chosen: list[benchmarks.Benchmark] = []

    def load(local: Path) -> Any:
        chosen.append(choose(local, name))
        return chosen[0].load_release(local, limit=limit)  # type: ignore[misc]

    release = load_at(location, load)
    return chosen[0].describe(release, limit)  # type: ignore[misc]


@click.command("describe-benchmark", epilog=epilog("agenthop-harness describe-benchmark"))
@click.argument("release_dir", type=Location(path_type=Path, resolve_path=True))
@click.option("--benchmark", "benchmark", default=None, metavar="NAME",
              help=f"The release's benchmark, one of {', '.join(benchmarks.names())} (default: detected from "
                   "the release's files).")
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="Only the first N items.")
@cli_errors
def describe_benchmark(release_dir: Path, benchmark: str | None, as_json: bool, limit: int | None) -> None:
    """Validate a release of any benchmark (synthetic or real) and print its statistics."""
    found = describe_release(release_dir, benchmark, limit)
    click.echo(json.dumps(found.stats, indent=2, ensure_ascii=False) if as_json else found.text)
    for warning in found.warnings[:SHOWN_WARNINGS]:
        click.secho(f"warning: {warning}", fg="yellow", err=True)
    if len(found.warnings) > SHOWN_WARNINGS:
        click.secho(f"warning: ... and {len(found.warnings) - SHOWN_WARNINGS} more", fg="yellow", err=True)
