"""`agenthop-judge`: add LLM verdicts to the loaded SciExplore runs (docs/sciexplore.md#llm-judge)."""

from __future__ import annotations

from pathlib import Path

import click

from agenthop.harness.errors import AgentHopError, cli_errors
from agenthop.harness.panel import ModelSpec
from agenthop.harness.storage import LocalPath

from .judge_run import run_judge

BACKENDS = ("openai", "anthropic", "google", "responses")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agenthop-warehouse", prog_name="agenthop-judge")
@click.option("--judge-model", required=True, help="Provider model id of the judge (e.g. gpt-4o-mini).")
@click.option("--backend", type=click.Choice(BACKENDS), default="openai", show_default=True,
              help="Which of the harness's backends calls the model.")
@click.option("--base-url", default=None, help="Endpoint of an OpenAI-compatible or other server (default: the provider's).")
@click.option("--api-key-env", default=None, help="Environment variable with the key (default: the backend's usual one).")
@click.option("--judge-name", default=None, help="Name of the verdicts in raw.judgments (default: llm:<judge model>).")
@click.option("--run", "runs", multiple=True, help="Only this run id (repeatable; default: every SciExplore run).")
@click.option("--cache", type=LocalPath(dir_okay=False, path_type=Path), default=None,
              help="Reply cache (JSONL, keyed by prompt hash; default: <warehouse>.judge-cache.jsonl). A second "
                   "call asks only what is not cached, so an interrupted judge resumes.")
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True, help="Calls in flight.")
@click.option("--db", type=LocalPath(dir_okay=False, path_type=Path), default=None,
              help="Warehouse file (default: $AGENTHOP_DB or warehouse/agenthop.duckdb).")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
@cli_errors
def main(judge_model: str, backend: str, base_url: str | None, api_key_env: str | None, judge_name: str | None,
         runs: tuple[str, ...], cache: Path | None, concurrency: int, db: Path | None, quiet: bool) -> None:
    """Judge every loaded SciExplore answer with an LLM and load its verdicts (then run dbt build).

    \b
    Example:
      agenthop-judge --judge-model gpt-4o-mini --backend openai
    """
    from agenthop.ingest.warehouse import default_db_path

    path = (db or Path(default_db_path())).absolute()
    spec = ModelSpec(name=judge_model, backend=backend, model_id=judge_model, base_url=base_url, api_key_env=api_key_env)

    def progress(done: int, total: int) -> None:
        if not quiet and (done == total or done % 50 == 0):
            click.echo(f"agenthop-judge: {done}/{total} prompts answered", err=True)

    res = run_judge(path, spec, judge_name=judge_name, cache=cache, run_ids=list(runs) or None,
                    concurrency=concurrency, progress=progress)
    click.echo(f"{res.units} units: {res.asked} prompts asked, {res.cached} answered from the cache, "
               f"{res.unreadable} replies without a verdict, {len(res.failed)} calls failed")
    for f in res.failed[:5]:
        click.secho(f"warning: {f}", fg="yellow", err=True)
    if res.loaded:
        click.echo(res.loaded)
    if res.failed:
        raise AgentHopError(f"{len(res.failed)} call(s) failed; their units have no verdict yet: run the same command "
                            "again to ask only those")
