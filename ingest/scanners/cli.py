"""`agenthop-scan`: classify behaviour in the loaded transcripts with a file of scanners (docs/scanners.md)."""

from __future__ import annotations

from pathlib import Path

import click

from agenthop.harness.errors import AgentHopError, cli_errors
from agenthop.harness.shards import Shard, ShardParam
from agenthop.harness.storage import LocalPath


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agenthop-warehouse", prog_name="agenthop-scan")
@click.option("--scanners", "scanner_path", required=True, metavar="FILE|shipped:NAME",
              help="Scanner file (YAML with a top-level 'scanners:' list; docs/scanners.md#scanner-files), or one the "
                   "project ships: shipped:common (every benchmark), shipped:agenthop, shipped:sciexplore.")
@click.option("--runs", "runs", multiple=True, metavar="RUN_ID", help="Only this run (repeatable; default: every run).")
@click.option("--models", "models", multiple=True, metavar="MODEL", help="Only the runs of this model (repeatable).")
@click.option("--db", type=LocalPath(dir_okay=False, path_type=Path), default=None,
              help="Warehouse file (default: $AGENTHOP_DB or warehouse/agenthop.duckdb).")
@click.option("--cache", type=LocalPath(dir_okay=False, path_type=Path), default=None,
              help="Reply cache of llm scanners (JSONL keyed by prompt hash; default: <warehouse>.scan-cache.jsonl). "
                   "A second scan asks only what is not cached, so an interrupted scan resumes.")
@click.option("--max-cost-usd", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Ask no more llm prompts once their estimated cost (the price table's) would pass this; 0: no cap.")
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True,
              help="llm calls in flight.")
@click.option("--shard", type=ShardParam(), default=None,
              help="Scan only this 1/n of the samples (k/n, k from 0), so n machines share a scan.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
@cli_errors
def main(scanner_path: str, runs: tuple[str, ...], models: tuple[str, ...], db: Path | None, cache: Path | None,
         max_cost_usd: float, concurrency: int, shard: Shard | None, quiet: bool) -> None:
    """Run every scanner of a file over the loaded runs and store the results in raw.scanner_results
    (then run dbt build for the scanner marts).

    An unchanged scanner on unchanged runs does no work; a bad scanner file writes nothing.

    \b
    Example:
      agenthop-scan --scanners shipped:common --models gpt-4o
    """
    from agenthop.ingest.warehouse import default_db_path

    from .definitions import load_scanners, scanner_file
    from .scan import LlmSettings, run_scan

    if runs and models:
        raise click.UsageError("give --runs or --models, not both")
    path = (db or Path(default_db_path())).absolute()
    scanners = load_scanners(scanner_file(scanner_path))

    def progress(done: int, total: int) -> None:
        if not quiet and (done == total or done % 50 == 0):
            click.echo(f"agenthop-scan: {done}/{total} prompts answered", err=True)

    llm = LlmSettings(cache=cache or path.with_name(path.name + ".scan-cache.jsonl"), concurrency=concurrency,
                      max_cost_usd=max_cost_usd, progress=progress)
    res = run_scan(path, scanners, runs=runs, models=models, shard=shard, llm=llm)
    click.echo(res.summary())
    for f in res.failed[:5]:
        click.secho(f"warning: {f}", fg="yellow", err=True)
    if res.over_cap:
        raise AgentHopError(f"--max-cost-usd {max_cost_usd:g} reached: {res.over_cap} prompt(s) not asked; their "
                            "units have no result yet: run again with a higher cap to ask only those")
    if res.failed:
        raise AgentHopError(f"{len(res.failed)} call(s) failed; their units have no result yet: run the same command "
                            "again to ask only those")
