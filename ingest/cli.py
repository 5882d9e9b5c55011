"""`agenthop-ingest`: load a benchmark release and trajectories into the DuckDB warehouse (docs/ingest.md)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click

from agenthop.harness.cli_examples import epilog
from agenthop.harness.errors import AgentHopError, cli_errors
from agenthop.harness.storage import LocalPath, Location, is_remote

from .build_step import build_option
from .core import run_ingest
from .metric_catalogue import parse_direction
from .progress import Progress
from .remove import remove_runs
from .warehouse import default_db_path

_DIR = Location(path_type=Path, file_okay=False, resolve_path=True)  # errors name absolute paths
_FILE = Location(path_type=Path, dir_okay=False, exists=True, resolve_path=True)  # or s3://bucket/key


@click.command(context_settings={"help_option_names": ["-h", "--help"]}, epilog=epilog("agenthop-ingest"))
@click.version_option(package_name="agenthop-warehouse")
@click.option(
    "--db",
    type=LocalPath(path_type=Path, dir_okay=False, resolve_path=True),
    default=None,
    help="Warehouse file (default: $AGENTHOP_DB or warehouse/agenthop.duckdb).",
)
@click.option("--benchmark", type=_DIR, default=None, help="Benchmark release directory (AgentHop: qa/, graphs/, ...; SciExplore: tasks.jsonl) or s3://bucket/prefix.")
@click.option(
    "--runs",
    type=_DIR,
    multiple=True,
    help="A run directory, or a directory of run directories (the harness's --out); local or "
    "s3://bucket/prefix. Repeatable.",
)
@click.option(
    "--reference-json",
    type=_DIR,
    multiple=True,
    help="Reference-harness experiments/ directory or one <model>/ folder; local or s3://bucket/prefix. "
    "Repeatable.",
)
@click.option(
    "--responses",
    type=_FILE,
    multiple=True,
    help="Responses file of systems run elsewhere (SciExplore: docs/sciexplore.md#responses-files); local or s3://bucket/key. Repeatable.",
)
@click.option(
    "--judgments",
    type=_FILE,
    multiple=True,
    help="Judgments file: verdicts of another judge (SciExplore: docs/sciexplore.md#judgments-files); local or s3://bucket/key. Repeatable.",
)
@click.option(
    "--inspect-log",
    type=Location(path_type=Path, resolve_path=True),
    multiple=True,
    help="An Inspect AI log (.eval or .json) or a directory of them (docs/inspect.md); local or "
    "s3://bucket/prefix. Repeatable. Reading is bounded per member in size, compression ratio and "
    "nesting depth (AGENTHOP_INSPECT_MAX_MEMBER_MB, _MAX_RATIO, _MAX_DEPTH; docs/inspect.md#limits).",
)
@click.option("--eee", "eee", type=Location(path_type=Path, resolve_path=True), multiple=True,
              help="Every Eval Ever aggregate records (<uuid>.json, with their _samples.jsonl) or folders of them; "
              "local or s3://bucket/prefix. Repeatable (docs/interchange.md#importing).")
@click.option("--atif", "atif", type=Location(path_type=Path, resolve_path=True), multiple=True,
              help="ATIF trajectory files (.json) or folders of them; local or s3://bucket/prefix. Repeatable "
              "(docs/interchange.md#importing).")
@click.option("--score", "inspect_score", default=None, metavar="SCORER[.KEY]",
              help="The Inspect score that becomes trajectories.score (default: the first scorer, its first key).")
@click.option("--metric-direction", "metric_directions", multiple=True, metavar="NAME=lower|higher|none",
              help="Which way a metric is better (docs/metrics.md#metric-catalogue); alone on a loaded warehouse "
              "or beside inputs; kept through later imports. Repeatable.")
@click.option("--primary-metric", "primary_metrics", multiple=True, metavar="NAME",
              help="The metric pages show by default for its benchmark; alone on a loaded warehouse or beside "
              "inputs; kept through later imports. Repeatable.")
@click.option("--inspect-reader", type=click.Choice(["auto", "builtin", "inspect"]), default="auto",
              show_default=True, help="How Inspect logs are read (docs/inspect.md#readers).")
@click.option("--replace-changed", "inspect_replace_changed", is_flag=True,
              help="Let an Inspect log replace loaded runs of another model or task that share its eval id "
              "(refused by default).")
@click.option("--partial", is_flag=True, help="Also load run directories without _SUCCESS (marked _partial).")
@click.option(
    "--force",
    is_flag=True,
    help="Accept runs made on another benchmark than the loaded one, and replace a benchmark that "
    "loaded runs were made on.",
)
@click.option(
    "--accept-dq",
    is_flag=True,
    help="Load rows that break the data-quality rules (negative counts, totals that disagree, ...) "
    "instead of refusing the ingest; every violation is recorded in raw.dq_issues.",
)
@click.option("--delete-run", "delete_runs", multiple=True, metavar="RUN_ID",
              help="Delete a loaded run (every row of it), alone in its call; the next dbt build drops its "
              "mart rows (docs/ingest.md#incremental-builds). Repeatable.")
@click.option("--labels", "labels", type=_FILE, multiple=True,
              help="Human labels of scanner findings (JSONL; docs/scanners.md#labels) into raw.human_labels, alone "
              "in its call. Repeatable.")
@click.option("--scout-results", "scout_results", type=_DIR, multiple=True,
              help="Inspect Scout scan results (a scan_id=<id>/ folder or a folder of them; docs/scanners.md#inspect-scout) "
              "into raw.scanner_results, alone in its call. Repeatable.")
@click.option("--reindex", is_flag=True,
              help="Rebuild the search index of the transcripts from the loaded runs, alone in its call "
              "(ingest keeps it up to date; docs/search.md#index).")
@click.option("--quiet", "-q", is_flag=True, help="No progress and no summary line (errors only).")
@cli_errors
@build_option  # --build: the dbt build after the load (build_step.py)
def main(
    db: Path | None,
    benchmark: Path | None,
    runs: tuple[Path, ...],
    reference_json: tuple[Path, ...],
    responses: tuple[Path, ...],
    judgments: tuple[Path, ...],
    inspect_log: tuple[Path, ...],
    eee: tuple[Path, ...],
    atif: tuple[Path, ...],
    inspect_score: str | None,
    metric_directions: tuple[str, ...],
    primary_metrics: tuple[str, ...],
    inspect_reader: str,
    inspect_replace_changed: bool,
    partial: bool,
    force: bool,
    accept_dq: bool,
    delete_runs: tuple[str, ...],
    labels: tuple[Path, ...],
    scout_results: tuple[Path, ...],
    reindex: bool,
    quiet: bool,
) -> None:
    """Load the benchmark and trajectories into the warehouse, in one transaction.

    Idempotent: unchanged inputs are skipped, a changed run replaces its previous version whole.
    A bad input leaves the warehouse exactly as it was and names the file and the problem.
    """
    path = db if db is not None else Path(default_db_path()).absolute()
    if reindex:
        if delete_runs or benchmark is not None or runs or reference_json or responses or judgments or inspect_log \
                or metric_directions or primary_metrics:
            raise click.UsageError("--reindex rebuilds the search index in a call of its own, without inputs to load")
        from .transcripts.index import reindex_warehouse

        done = reindex_warehouse(path)
        if not quiet:
            click.echo(f"search index of {path} rebuilt: {done.runs_added} run(s), {done.units_added:,} text units, "
                       f"{done.postings_added:,} word postings")
        return
    if delete_runs:
        if benchmark is not None or runs or reference_json or responses or judgments or inspect_log or eee or atif \
                or metric_directions or primary_metrics:
            raise click.UsageError("--delete-run deletes runs in a call of its own, without inputs to load")
        deleted = remove_runs(path, delete_runs)
        if not quiet:
            click.echo(f"deleted {len(delete_runs)} run(s) from {path}: "
                       + " ".join(f"{t}={n}" for t, n in deleted.items()))
        return
    if labels or scout_results:
        if benchmark is not None or runs or reference_json or responses or judgments or inspect_log \
                or metric_directions or primary_metrics or (labels and scout_results):
            raise click.UsageError("--labels and --scout-results each load in a call of their own, without other "
                                   "inputs to load")
        with ExitStack() as stack:
            from agenthop.harness.store_mirror import local_copy

            files = [Path(stack.enter_context(local_copy(f))) for f in (labels or scout_results)]
            if labels:
                from .labels import load_labels

                text = f"loaded {load_labels(path, files)} label(s) into raw.human_labels of {path}"
            else:
                from .scanners.scout import load_scout_results

                text = load_scout_results(path, files).summary()
        if not quiet:
            click.echo(text)
        return
    directions = [parse_direction(d) for d in metric_directions]
    if benchmark is None and not runs and not reference_json and not responses and not judgments and not inspect_log \
            and not eee and not atif and not directions and not primary_metrics:
        raise click.UsageError("nothing to load: give --benchmark, --runs, --reference-json, --responses, "
                               "--judgments, --inspect-log, --eee and/or --atif (or a metric setting)")
    with ExitStack() as stack:
        names: dict[str, str] = {}  # temporary copy of an s3:// input -> its URL

        def local(location: Path | str, copy_of: Callable[[Path | str], Any] | None = None) -> Path:
            if not is_remote(location):
                return Path(location)
            if copy_of is None:  # imported here: only s3:// inputs need the mirror (and the harness writer)
                from agenthop.harness.store_mirror import local_copy as copy_of
            copy = stack.enter_context(copy_of(location))
            names[str(copy)] = str(location)
            return copy

        def rename(text: str) -> str:
            for copy, url in names.items():
                text = text.replace(copy, url)
            return text

        release = None
        if benchmark is not None:
            from agenthop.harness.release_store import release_copy

            release = local(benchmark, release_copy)  # with its marker
        exchange = {"eee": [local(p) for p in eee], "atif": [local(p) for p in atif]}  # before `names` is read
        try:
            result = run_ingest(
                path,
                benchmark=release,
                runs=[local(r) for r in runs],
                reference_json=[local(r) for r in reference_json],
                inspect_logs=[local(r) for r in inspect_log],
                inspect_score=inspect_score,
                inspect_reader=inspect_reader,
                inspect_replace_changed=inspect_replace_changed,
                partial=partial,
                force=force,
                accept_dq=accept_dq,
                progress=Progress(quiet=quiet),
                rename=rename if names else None,
                imports={"responses": [local(r) for r in responses], "judgments": [local(j) for j in judgments]},
                metric_directions=directions,
                primary_metrics=primary_metrics,
                interchange=exchange,
            )
        except AgentHopError as exc:  # a message naming a temporary copy of an s3:// input names its URL
            if rename(str(exc)) == str(exc):
                raise
            raise AgentHopError(rename(str(exc))) from None
    if not quiet:
        click.echo(result.summary())
