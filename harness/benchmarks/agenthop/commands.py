"""AgentHop's ``make-benchmark`` (reached through harness/make_benchmark.py) and ``describe-benchmark``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from ...cli_examples import epilog
from ...errors import AgentHopError, cli_errors
from .describe import describe, format_description
from .generator import FULL_SCALE_ITEMS, clear_release, is_synthetic_release, write_release
from .loader import load_release
from ...release_dir import release_output
from ...release_store import load_at
from ...storage import Location


@click.command("make-benchmark", epilog=epilog("agenthop-harness make-benchmark"))
@click.option("--out", "out", required=True, type=Location(file_okay=False, path_type=Path, resolve_path=True),
              help="Release directory to write (qa/, graphs/, paper_pool/, audit/, README.md), or "
                   "s3://bucket/prefix to publish it there (docs/running.md#object-storage-s3).")
@click.option("--items", "items", default=FULL_SCALE_ITEMS, show_default=True, type=click.IntRange(min=1),
              help="Number of items (the default is the full-scale preset).")
@click.option("--seed", "seed", default=0, show_default=True, type=int, help="Random seed (same seed, same bytes).")
@click.option("--force", is_flag=True, help="Write into a non-empty directory that is not a synthetic release.")
@cli_errors
def make_benchmark(out: Path | str, items: int, seed: int, force: bool) -> None:
    """Write a deterministic SYNTHETIC AgentHop release (docs/benchmark.md#synthetic-generator)."""
    with release_output(out, force, is_synthetic_release, clear_release) as local:
        t0 = time.perf_counter()
        try:
            made = write_release(local, items, seed)
        except OSError as exc:
            raise AgentHopError(f"--out {out}: cannot write release ({exc.strerror or exc})") from exc
        elapsed = time.perf_counter() - t0
        cells = ", ".join(f"{k} {v}" for k, v in made.cells.items())
        click.echo(f"wrote synthetic release {out}: {made.items} items ({cells}), {made.papers} papers, "
                   f"{made.nodes} nodes, {made.edges} edges, seed {seed} in {elapsed:.1f}s")


@click.command("describe-benchmark", epilog=epilog("agenthop-harness describe-benchmark"))
@click.argument("release_dir", type=Location(path_type=Path, resolve_path=True))
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@click.option("--limit", type=click.IntRange(min=0), default=None, help="Only the first N items.")
@cli_errors
def describe_benchmark(release_dir: Path, as_json: bool, limit: int | None) -> None:
    """Validate a release (synthetic or real) and print its statistics."""
    # an s3:// release is read from a checked temporary copy; its root and errors name the URL
    release = load_at(release_dir, lambda local: load_release(local, limit=limit))
    stats = describe(release)
    if as_json:
        click.echo(json.dumps(stats, indent=2, ensure_ascii=False))
    else:
        click.echo(format_description(stats))
    for warning in release.warnings[:20]:
        click.secho(f"warning: {warning}", fg="yellow", err=True)
    if len(release.warnings) > 20:
        click.secho(f"warning: ... and {len(release.warnings) - 20} more", fg="yellow", err=True)
