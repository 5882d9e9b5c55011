"""click commands ``make-benchmark`` and ``describe-benchmark`` (registered in harness/cli.py)."""

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
from ...release_dir import prepare_release_dir
from ...storage import LocalPath, Location, is_remote
from ...store_mirror import local_copy


@click.command("make-benchmark", epilog=epilog("agenthop-harness make-benchmark"))
@click.option("--out", "out", required=True, type=LocalPath(file_okay=False, path_type=Path, resolve_path=True),
              help="Release directory to write (qa/, graphs/, paper_pool/, audit/, README.md).")
@click.option("--benchmark", "benchmark", type=click.Choice(["agenthop", "sciexplore"]), default="agenthop",
              show_default=True, help="Which benchmark's synthetic release to write.")
@click.option("--items", "items", default=None, type=click.IntRange(min=1),
              help=f"Number of items (AgentHop; default {FULL_SCALE_ITEMS}, the full-scale preset). "
              "SciExplore has the paper's fixed shape of 103 tasks.")
@click.option("--seed", "seed", default=0, show_default=True, type=int, help="Random seed (same seed, same bytes).")
@click.option("--force", is_flag=True, help="Write into a non-empty directory that is not a synthetic release.")
@click.option("--responses", "responses", default=None, type=LocalPath(dir_okay=False, path_type=Path, resolve_path=True),
              help="SciExplore: also write a responses file of simulated systems (docs/sciexplore.md#simulated-systems).")
@click.option("--judgments", "judgments", default=None, type=LocalPath(dir_okay=False, path_type=Path, resolve_path=True),
              help="SciExplore: also write the verdicts of a simulated second judge on those responses.")
@cli_errors
def make_benchmark(out: Path, benchmark: str, items: int | None, seed: int, force: bool,
                   responses: Path | None, judgments: Path | None) -> None:
    """Write a deterministic SYNTHETIC release (docs/benchmark.md#synthetic-generator, docs/sciexplore.md)."""
    if benchmark == "sciexplore":
        from ..sciexplore.commands import make_sciexplore

        if items is not None:
            raise click.UsageError("--items: the SciExplore release has a fixed shape of 103 tasks")
        make_sciexplore(out, seed, force, responses, judgments)
        return
    if responses is not None or judgments is not None:
        raise click.UsageError("--responses, --judgments: only for --benchmark sciexplore")
    items = FULL_SCALE_ITEMS if items is None else items
    prepare_release_dir(out, force, is_synthetic_release, clear_release)
    t0 = time.perf_counter()
    try:
        made = write_release(out, items, seed)
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
    with local_copy(release_dir) as local:  # an s3:// release is read from a temporary copy
        release = load_release(local, limit=limit)
        stats = describe(release)
    if is_remote(release_dir):
        stats["root"] = str(release_dir)  # the URL, not the temporary copy
    if as_json:
        click.echo(json.dumps(stats, indent=2, ensure_ascii=False))
    else:
        click.echo(format_description(stats))
    for warning in release.warnings[:20]:
        click.secho(f"warning: {warning}", fg="yellow", err=True)
    if len(release.warnings) > 20:
        click.secho(f"warning: ... and {len(release.warnings) - 20} more", fg="yellow", err=True)
