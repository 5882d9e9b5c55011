"""`agenthop-harness run`: run one model or a panel over a release (docs/running.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..schemas.trajectory import CONDITIONS
from .cli_examples import epilog
from .errors import AgentHopError, cli_errors
from .panel import BACKENDS, ModelSpec, Panel, RunSpec, load_panel, looks_like_real_model
from .run_identity import RunCaps

EXIT_INTERRUPTED = 130
EXIT_TOKEN_CAP = 3
EXIT_FAILED = 1

_MODEL_OPTIONS = ("backend", "model_id", "base_url", "api_key_env", "sim_archetype", "condition", "replicate")


def _single_model(name: str, backend: str | None, model_id: str | None, base_url: str | None,
                  api_key_env: str | None, sim_archetype: str | None) -> ModelSpec:
    backend = backend or "sim"
    if backend == "sim":
        for opt, value in (("--model-id", model_id), ("--base-url", base_url), ("--api-key-env", api_key_env)):
            if value is not None:
                raise AgentHopError(f"{opt} does not apply to --backend sim")
        if looks_like_real_model(name):
            raise AgentHopError(f"--model {name!r} looks like a real model's name; simulated models must not carry one")
        from .policies.archetypes import ARCHETYPES

        archetype = (sim_archetype or name).replace("-", "_")  # early-committer = early_committer
        if archetype not in ARCHETYPES:
            hint = "" if sim_archetype else f" (--model {name!r} is not an archetype name; pass --sim-archetype)"
            raise AgentHopError(
                f"--sim-archetype: unknown archetype {archetype!r}{hint}; known: {', '.join(sorted(ARCHETYPES))}"
            )
        return ModelSpec(name=name, backend="sim", sim={"archetype": archetype})
    if sim_archetype is not None:
        raise AgentHopError(f"--sim-archetype only applies to --backend sim, not {backend}")
    return ModelSpec(name=name, backend=backend, model_id=model_id, base_url=base_url, api_key_env=api_key_env)


@click.command("run", epilog=epilog("agenthop-harness run"))
@click.option("--data", "data", required=True, type=click.Path(file_okay=False, path_type=Path, resolve_path=True),
              help="Release directory (qa/, graphs/, paper_pool/, audit/).")
@click.option("--model", "model", help="Model name (a sim archetype name such as early-committer, or a label).")
@click.option("--panel", "panel_file", type=click.Path(dir_okay=False, path_type=Path, resolve_path=True),
              help="Panel YAML: run several models / conditions / replicates.")
@click.option("--backend", type=click.Choice(BACKENDS), help="Backend of --model (default sim).")
@click.option("--model-id", help="Provider model id of --model (default: the name).")
@click.option("--base-url", help="OpenAI-compatible or Anthropic endpoint of --model.")
@click.option("--api-key-env", help="Environment variable holding the API key (default OPENAI_API_KEY / "
              "ANTHROPIC_API_KEY). Keys are read from the environment only.")
@click.option("--sim-archetype", help="Policy archetype of a sim --model (default: the model name).")
@click.option("--condition", type=click.Choice(CONDITIONS), help="Ablation condition of --model (default full).")
@click.option("--replicate", type=click.IntRange(min=0), help="Replicate number of --model (default 0).")
@click.option("--workers", default=4, show_default=True, type=click.IntRange(min=1),
              help="Concurrent samples of a real-backend run.")
@click.option("--processes", type=click.IntRange(min=1),
              help="Worker processes for simulated runs of a panel (default: CPU count).")
@click.option("--limit", type=click.IntRange(min=1),
              help="Only the first N items of the release (default: all). The limit is not part of the "
              "run identity: a limited run resumes into the same directory as the full one.")
@click.option("--out", "out", default="out/runs", show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Output root; one directory per run.")
@click.option("--budget", default=30, show_default=True, type=click.IntRange(min=1), help="Tool budget points.")
@click.option("--max-turns", default=20, show_default=True, type=click.IntRange(min=1),
              help="Model calls (turns) per attempt.")
@click.option("--max-total-tokens", default=200_000, show_default=True, type=click.IntRange(min=1),
              help="Per-sample cumulative token cap.")
@click.option("--max-run-tokens", default=0, show_default=True, type=click.IntRange(min=0),
              help="Run-wide token cap, resumed samples included (0 = off).")
@click.option("--seed", default=0, show_default=True, type=int, help="Base seed (part of the run identity).")
@click.option("--messages/--no-messages", "messages", default=None,
              help="Record the messages table (default: real backends yes, sim no).")
@click.option("--progress/--no-progress", "progress", default=None,
              help="Progress bar (default: only when stderr is a terminal).")
@click.option("--flush-every", type=click.IntRange(min=1),
              help="Write a part every N finished samples (default: sim 250, real 10; also every 30/10 s).")
@click.option("--retry-errors/--keep-errors", "retry_errors", default=True, show_default=True,
              help="On resume, rerun samples whose final attempt ended with 'error'.")
@cli_errors
def run(data: Path, model: str | None, panel_file: Path | None, backend: str | None, model_id: str | None,
        base_url: str | None, api_key_env: str | None, sim_archetype: str | None, condition: str | None,
        replicate: int | None, workers: int, processes: int | None, limit: int | None, out: Path, budget: int,
        max_turns: int, max_total_tokens: int, max_run_tokens: int, seed: int, messages: bool | None,
        progress: bool | None, flush_every: int | None, retry_errors: bool) -> None:
    """Run agents over a release; resumes finished samples of the same run identity.

    Prints one line per run: run_id, directory, finished/requested items, accuracy, tokens.
    """
    from .runner import COMPLETE, FAILED, TOKEN_CAP, RunOptions, run_panel

    if (model is None) == (panel_file is None):
        raise AgentHopError("give exactly one of --model NAME or --panel FILE")
    runs: list[RunSpec] | Panel
    if panel_file is not None:
        given = [o for o, v in zip(_MODEL_OPTIONS, (backend, model_id, base_url, api_key_env, sim_archetype,
                                                     condition, replicate)) if v is not None]
        if given:
            flags = ", ".join("--" + g.replace("_", "-") for g in given)
            raise AgentHopError(f"{flags}: not with --panel (set them per model in {panel_file})")
        runs = load_panel(panel_file)
    else:
        assert model is not None
        spec = _single_model(model, backend, model_id, base_url, api_key_env, sim_archetype)
        runs = [RunSpec(spec, condition or "full", replicate or 0)]
    if not (data / "qa" / "full.jsonl").is_file():
        raise AgentHopError(f"{data}: not a release directory (qa/full.jsonl missing)")
    opts = RunOptions(
        caps=RunCaps(budget, max_turns, max_total_tokens), seed=seed, workers=workers, limit=limit,
        record_messages=messages, flush_every=flush_every, max_run_tokens=max_run_tokens,
        retry_errors=retry_errors, progress=progress,
    )
    try:
        results = run_panel(runs, data, out, opts, processes=processes)
    except KeyboardInterrupt:  # outside the runs' own handlers (e.g. while loading the release)
        click.echo(f"interrupted: finished samples are kept under {out}; rerun the same command to resume.",
                   err=True)
        sys.exit(EXIT_INTERRUPTED)
    for res in results:
        click.echo(res.line())
    statuses = {r.status for r in results}
    if statuses - {COMPLETE, TOKEN_CAP, FAILED}:
        click.echo(f"interrupted: finished samples are kept under {out}; rerun the same command to resume.",
                   err=True)
        sys.exit(EXIT_INTERRUPTED)
    if FAILED in statuses:
        click.echo("some runs failed (see above); rerun the same command to resume them.", err=True)
        sys.exit(EXIT_FAILED)
    if TOKEN_CAP in statuses:
        click.echo("run-wide token cap reached; raise --max-run-tokens and rerun the same command to continue.",
                   err=True)
        sys.exit(EXIT_TOKEN_CAP)
