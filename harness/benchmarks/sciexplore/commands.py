"""``agenthop-harness make-benchmark --benchmark sciexplore`` (its registry entry's ``make_command``)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from agenthop.harness.errors import AgentHopError, cli_errors
from agenthop.harness.release_dir import release_output
from agenthop.harness.storage import LocalPath, Location

from .generator import clear_release, is_synthetic_release, write_release
from .release import load_release
from .simulate import REPLICATES, SIM_JUDGE, SYSTEMS, write_judgments, write_responses


def make_sciexplore(out: Path | str, seed: int, force: bool, responses: Path | None = None,
                    judgments: Path | None = None) -> None:
    with release_output(out, force, is_synthetic_release, clear_release, "synthetic SciExplore release") as local:
        _make(local, out, seed, responses, judgments)


def _make(local: Path, out: Path | str, seed: int, responses: Path | None, judgments: Path | None) -> None:
    """Write the release into ``local`` (``out`` is the name it is shown under)."""
    t0 = time.perf_counter()
    try:
        made = write_release(local, seed)
    except OSError as exc:
        raise AgentHopError(f"--out {out}: cannot write release ({exc.strerror or exc})") from exc
    types = ", ".join(f"{k} {v}" for k, v in made.by_type.items())
    click.echo(f"wrote synthetic SciExplore release {out}: {made.tasks} tasks ({types}), {made.domains} domains, "
               f"{made.documents} corpus documents, seed {seed} in {time.perf_counter() - t0:.1f}s")
    if responses is not None:
        try:
            n = write_responses(responses, load_release(local), seed)
        except OSError as exc:
            raise AgentHopError(f"--responses {responses}: cannot write ({exc.strerror or exc})") from exc
        click.echo(f"wrote {n} responses of {len(SYSTEMS)} SIMULATED systems x {REPLICATES} replicates to {responses}")
    if judgments is not None:
        if responses is None:
            raise click.UsageError("--judgments: give --responses too (the simulated judge judges those answers)")
        try:
            n = write_judgments(judgments, load_release(local), responses, seed)
        except OSError as exc:
            raise AgentHopError(f"--judgments {judgments}: cannot write ({exc.strerror or exc})") from exc
        click.echo(f"wrote {n} verdicts of the SIMULATED judge {SIM_JUDGE} to {judgments}")


@click.command("make-benchmark")
@click.option("--out", "out", required=True, type=Location(file_okay=False, path_type=Path, resolve_path=True),
              help="Release directory to write (tasks.jsonl, corpus/, README.md), or s3://bucket/prefix to "
                   "publish it there (docs/running.md#object-storage-s3).")
@click.option("--seed", "seed", default=0, show_default=True, type=int, help="Random seed (same seed, same bytes).")
@click.option("--force", is_flag=True, help="Write into a non-empty directory that is not a synthetic release.")
@click.option("--responses", "responses", default=None,
              type=LocalPath(dir_okay=False, path_type=Path, resolve_path=True),
              help="Also write a responses file of simulated systems (docs/sciexplore.md#simulated-systems).")
@click.option("--judgments", "judgments", default=None,
              type=LocalPath(dir_okay=False, path_type=Path, resolve_path=True),
              help="Also write the verdicts of a simulated second judge on those responses.")
@cli_errors
def make_benchmark(out: Path | str, seed: int, force: bool, responses: Path | None, judgments: Path | None) -> None:
    """Write a deterministic SYNTHETIC SciExplore release: the paper's shape of 103 tasks (docs/sciexplore.md)."""
    make_sciexplore(out, seed, force, responses, judgments)
