"""AgentHop's ``make-benchmark`` (reached through harness/make_benchmark.py)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ...cli_examples import epilog
from ...errors import AgentHopError, cli_errors
from .generator import FULL_SCALE_ITEMS, clear_release, is_synthetic_release, write_release
from ...release_dir import release_output
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
