"""`agenthop-harness run`: run one model or a panel over a release (docs/running.md)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import click

from . import benchmarks
from .cli_examples import ExamplesCommand
from .errors import AgentHopError, cli_errors
from .panel import BACKENDS, ModelSpec, RunSpec, load_panel, looks_like_real_model
from .run_help import RegistryChoice, RegistryHelpOption
from .run_identity import RunCaps
from .run_options import DEFAULT_MAX_SAMPLE_SECONDS, DEFAULT_REQUEST_TIMEOUT_S
from .run_result import SHARD_DONE
from .shards import Shard, ShardParam
from .store_mirror import panel_run_ids, run_store, settle_shards
from .storage import LocalPath, Location, is_remote

EXIT_INTERRUPTED = 130
#: 128 + SIGTERM, as a shell reports a process that SIGTERM ended
EXIT_TERMINATED = 143
EXIT_TOKEN_CAP = 3
EXIT_FAILED = 1


_MODEL_OPTIONS = ("backend", "model_id", "base_url", "api_key_env", "sim_archetype", "condition", "replicate")


def _benchmark_of(given: str | None, panel: str | None, data: Path | None) -> str:
    """The benchmark of a run command: ``--benchmark``, else the panel's, else the release's (local
    ``--data``), else the default; a contradiction is an error."""
    from agenthop.schemas.names import DEFAULT_BENCHMARK

    if given is not None and given not in benchmarks.names():
        raise AgentHopError(f"--benchmark: unknown benchmark {given!r}; known: {', '.join(benchmarks.names())}")
    if given is not None and panel is not None and given != panel:
        raise AgentHopError(f"--benchmark {given}: the panel is for benchmark {panel}")
    name = given or panel
    if name is None and data is not None and not is_remote(data) and Path(data).is_dir():
        try:
            name = benchmarks.detect(Path(data)).name
        except AgentHopError:
            name = None  # reported with the release check
    return name or DEFAULT_BENCHMARK


def _single_model(name: str, backend: str | None, model_id: str | None, base_url: str | None,
                  api_key_env: str | None, sim_archetype: str | None, benchmark: str | None = None) -> ModelSpec:
    from .providers import cli_preset, detect_for_cli

    if backend is None and sim_archetype is None:
        detected = detect_for_cli(model_id or name, base_url, api_key_env)
        if detected is not None:  # a real model id: backend, endpoint, key variable (docs/backends.md)
            click.echo(detected.note, err=True)
            backend, base_url, api_key_env = detected.backend, detected.base_url, detected.api_key_env
    backend = backend or "sim"
    if backend == "sim":
        for opt, value in (("--model-id", model_id), ("--base-url", base_url), ("--api-key-env", api_key_env)):
            if value is not None:
                raise AgentHopError(f"{opt} does not apply to --backend sim")
        if looks_like_real_model(name):
            raise AgentHopError(f"--model {name!r} looks like a real model's name; simulated models must not carry "
                                "one (for a real model pass --backend)")
        from agenthop.schemas.names import DEFAULT_BENCHMARK

        ARCHETYPES = benchmarks.get(benchmark or DEFAULT_BENCHMARK).policies  # noqa: N806 - the simulated agents

        archetype = (sim_archetype or name).replace("-", "_")  # early-committer = early_committer
        if archetype not in ARCHETYPES:
            hint = "" if sim_archetype else f" (--model {name!r} is not an archetype name; pass --sim-archetype)"
            raise AgentHopError(
                f"--sim-archetype: unknown archetype {archetype!r}{hint}; known: {', '.join(sorted(ARCHETYPES))}"
            )
        return ModelSpec(name=name, backend="sim", sim={"archetype": archetype})
    if sim_archetype is not None:
        raise AgentHopError(f"--sim-archetype only applies to --backend sim, not {backend}")
    sampling, note = cli_preset(model_id or name)
    if note is not None:
        click.echo(note, err=True)
    return ModelSpec(name=name, backend=backend, model_id=model_id, base_url=base_url, api_key_env=api_key_env,
                     sampling=sampling)


def _dry_run(runs: list[RunSpec]) -> None:
    from .dry_run import dry_run

    models = list({r.model.name: r.model for r in runs}.values())  # each model once, in file order
    lines, missing = dry_run(models)
    for line in lines:
        click.echo(line)
    for line in missing:
        click.secho(f"missing key: {line}", fg="red", err=True)
    if missing:
        raise AgentHopError(f"{len(missing)} of {len(models)} models have no API key set (see above); nothing was "
                            "called")
    click.echo(f"dry run: {len(models)} models, every key needed is set; nothing was called")


def _require_keys(runs: list[RunSpec]) -> None:
    """Fail before starting when a model's key is missing (one line per model; see --dry-run)."""
    from .dry_run import dry_run

    models = list({r.model.name: r.model for r in runs}.values())  # each model once, in file order
    _, missing = dry_run(models)
    for line in missing:
        click.secho(f"missing key: {line}", fg="red", err=True)
    if missing:
        raise AgentHopError(f"{len(missing)} of {len(models)} models have no API key set (see above); nothing was "
                            "run")


def with_limits(run: RunSpec, rpm: float | None, tpm: float | None) -> RunSpec:
    """``run`` with the command line's --rpm/--tpm where its real-backend model sets none."""
    m = run.model
    if m.backend == "sim" or (rpm is None and tpm is None):
        return run
    return replace(run, model=replace(m, rpm=m.rpm or rpm, tpm=m.tpm or tpm))


@click.command("run", cls=ExamplesCommand, examples="agenthop-harness run")
@click.option("--data", "data", type=Location(file_okay=False, path_type=Path, resolve_path=True),
              cls=RegistryHelpOption, help_key="data")
@click.option("--model", "model", cls=RegistryHelpOption, help_key="model")
@click.option("--panel", "panel_file", type=LocalPath(dir_okay=False, path_type=Path, resolve_path=True),
              help="Panel YAML: run several models / conditions / replicates.")
@click.option("--backend", type=click.Choice(BACKENDS),
              help="Backend of --model (default: detected from a real model id as the reference does, e.g. "
              "gemini-3* google, gpt-5.x responses, claude-* anthropic; else sim).")
@click.option("--model-id", help="Provider model id of --model (default: the name).")
@click.option("--base-url", help="Endpoint of --model (OpenAI-compatible, Anthropic, Gemini or Responses; "
              "a proxy or a local server).")
@click.option("--api-key-env", help="Environment variable holding the API key. Without it: OPENAI_API_KEY / "
              "ANTHROPIC_API_KEY for the provider's own endpoint only; a --base-url gets a placeholder key.")
@click.option("--rpm", type=click.FloatRange(min=0, min_open=True),
              help="Requests per minute of the endpoint (with --panel: for models that set no rpm:).")
@click.option("--tpm", type=click.FloatRange(min=0, min_open=True),
              help="Tokens per minute of the endpoint (with --panel: for models that set no tpm:).")
@click.option("--sim-archetype", help="Policy archetype of a sim --model (default: the model name).")
@click.option("--benchmark", "benchmark", metavar="NAME",
              cls=RegistryHelpOption, help_key="benchmark")
@click.option("--condition", cls=RegistryHelpOption, help_key="condition")
@click.option("--paradigm", cls=RegistryHelpOption, help_key="paradigm")
@click.option("--search", "search", type=RegistryChoice("search"),
              cls=RegistryHelpOption, help_key="search")
@click.option("--replicate", type=click.IntRange(min=0), help="Replicate number of --model (default 0).")
@click.option("--workers", default=4, show_default=True, type=click.IntRange(min=1),
              help="Concurrent samples of a real-backend run.")
@click.option("--max-concurrency", default=0, show_default=True, type=click.IntRange(min=0),
              help="Samples in flight over all real-backend runs of a panel, which run at the same time "
              "(0 = no global cap; each run still has --workers).")
@click.option("--max-cost-usd", default=0.0, show_default=True, type=click.FloatRange(min=0),
              help="Stop taking new samples before the estimated cost of this invocation (price table) "
              "passes this many USD (0 = off); rerun to continue.")
@click.option("--strict-cost-cap", is_flag=True,
              help="With --max-cost-usd: every sample in flight reserves the most it can cost under its token "
              "cap, never an estimate from earlier samples (fewer samples run at once).")
@click.option("--request-timeout", "request_timeout", default=DEFAULT_REQUEST_TIMEOUT_S, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Seconds one model call may take before it is abandoned and retried (as a transient error).")
@click.option("--max-sample-seconds", default=None, type=click.FloatRange(min=0),
              cls=RegistryHelpOption, help_key="max_sample_seconds")
@click.option("--processes", type=click.IntRange(min=1),
              help="Worker processes for simulated runs of a panel (default: CPU count).")
@click.option("--limit", type=click.IntRange(min=1),
              help="Only the first N items of the release (default: all). The limit is not part of the "
              "run identity: a limited run resumes into the same directory as the full one.")
@click.option("--out", "out", default="out/runs", show_default=True,
              type=Location(file_okay=False, path_type=Path),
              help="Output root, a directory or s3://bucket/prefix; one directory per run.")
@click.option("--budget", default=None, type=click.IntRange(min=1),
              cls=RegistryHelpOption, help_key="budget")
@click.option("--max-turns", default=None, type=click.IntRange(min=1),
              cls=RegistryHelpOption, help_key="max_turns")
@click.option("--max-total-tokens", default=None, type=click.IntRange(min=1),
              cls=RegistryHelpOption, help_key="max_total_tokens")
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
@click.option("--shard", type=ShardParam(), default=None,
              help="Run only shard K of N (K from 0): a fixed 1/N of the samples of every run, by a hash of "
              "the sample id. Shards may run at the same time, on any machines, into the same --out; the run "
              "gets _SUCCESS when its last sample is on disk (docs/running.md#shards).")
@click.option("--dry-run", "dry_run", is_flag=True,
              help="Print per model the backend, endpoint host, key variable (and whether it is set) and "
              "sampling, call nothing; exit 2 when a key is missing.")
@cli_errors
def run(data: Path | None, model: str | None, panel_file: Path | None, backend: str | None, model_id: str | None,
        base_url: str | None, api_key_env: str | None, rpm: float | None, tpm: float | None,
        sim_archetype: str | None, benchmark: str | None, condition: str | None, paradigm: str | None,
        search: str | None, replicate: int | None, workers: int,
        max_concurrency: int, max_cost_usd: float, strict_cost_cap: bool, request_timeout: float,
        max_sample_seconds: float | None,
        processes: int | None, limit: int | None, out: Path, budget: int | None,
        max_turns: int | None, max_total_tokens: int | None, max_run_tokens: int, seed: int, messages: bool | None,
        progress: bool | None, flush_every: int | None, retry_errors: bool, shard: Shard | None,
        dry_run: bool) -> None:
    """Run agents over a release; resumes finished samples of the same run identity.

    Prints one line per run: run_id, directory, finished/requested items, accuracy, tokens.
    """
    from .runner import COMPLETE, COST_CAP, FAILED, TOKEN_CAP, RunOptions, run_panel

    from .run_plan import plan_run

    if (model is None) == (panel_file is None):
        raise AgentHopError("give exactly one of --model NAME or --panel FILE")
    if condition is not None and paradigm is not None and condition != paradigm:
        raise AgentHopError("--condition and --paradigm name the same setting; give one")
    condition = condition or paradigm
    if strict_cost_cap and not max_cost_usd:
        raise AgentHopError("--strict-cost-cap needs --max-cost-usd USD")
    runs: list[RunSpec]
    if panel_file is not None:
        given = [o for o, v in zip(_MODEL_OPTIONS, (backend, model_id, base_url, api_key_env, sim_archetype,
                                                     condition, replicate)) if v is not None]
        if given:
            flags = ", ".join("--" + g.replace("_", "-") for g in given)
            raise AgentHopError(f"{flags}: not with --panel (set them per model in {panel_file})")
        panel = load_panel(panel_file)
        bench_name = _benchmark_of(benchmark, panel.benchmark, data)
        runs = panel.runs()
    else:
        assert model is not None
        bench_name = _benchmark_of(benchmark, None, data)
        spec = _single_model(model, backend, model_id, base_url, api_key_env, sim_archetype, bench_name)
        if spec.backend == "sim" and (rpm or tpm):
            raise AgentHopError("--rpm/--tpm do not apply to --backend sim")
        runs = [RunSpec(spec, condition or benchmarks.get(bench_name).conditions[0], replicate or 0,
                        benchmark=bench_name)]
    explicit = {"budget": budget, "max_turns": max_turns, "max_total_tokens": max_total_tokens,
                "max_sample_seconds": max_sample_seconds}
    runs = [with_limits(plan_run(r, explicit, {"search": search}), rpm, tpm) for r in runs]
    if dry_run:
        _dry_run(runs)
        return
    _require_keys(runs)
    if data is None:
        raise AgentHopError("--data is required (a release directory), except with --dry-run")
    opts = RunOptions(
        caps=RunCaps(budget or 30, max_turns or 20, max_total_tokens or 200_000), seed=seed, workers=workers, limit=limit,
        record_messages=messages, flush_every=flush_every, max_run_tokens=max_run_tokens,
        retry_errors=retry_errors, progress=progress, max_concurrency=max_concurrency, max_cost_usd=max_cost_usd,
        strict_cost_cap=strict_cost_cap,
        request_timeout_s=request_timeout,
        max_sample_seconds=DEFAULT_MAX_SAMPLE_SECONDS if max_sample_seconds is None else max_sample_seconds,
        compact=not is_remote(out),  # an object store keeps parts as written (harness/store_mirror.py)
        shard=shard,
    )
    try:
        with run_store(data, out, lambda release: panel_run_ids(runs, release, opts)) as store:
            found = benchmarks.get(bench_name)
            if not found.is_release(store.release):
                raise AgentHopError(f"{data}: not a {bench_name} release ({found.release_marker} missing)")
            results = run_panel(runs, store.release, store.root, opts, processes=processes)
            settle_shards(results, store, opts)
    except KeyboardInterrupt:  # outside the runs' own handlers (e.g. while loading the release)
        click.echo(f"interrupted: finished samples are kept under {out}; rerun the same command to resume.",
                   err=True)
        sys.exit(EXIT_INTERRUPTED)
    for res in results:
        click.echo(res.line())
    user_errors = [r for r in results if r.user_error]
    for res in user_errors:
        click.secho(f"error: {res.run_id}: {res.error}", fg="red", err=True)
    if user_errors:
        sys.exit(AgentHopError.exit_code)
    statuses = {r.status for r in results}
    if statuses - {COMPLETE, SHARD_DONE, TOKEN_CAP, COST_CAP, FAILED}:
        click.echo(f"interrupted: finished samples are kept under {out}; rerun the same command to resume.",
                   err=True)
        sys.exit(EXIT_TERMINATED if any(r.stopped_by == "SIGTERM" for r in results) else EXIT_INTERRUPTED)
    if FAILED in statuses:
        click.echo("some runs failed (see above); rerun the same command to resume them.", err=True)
        sys.exit(EXIT_FAILED)
    if TOKEN_CAP in statuses:
        click.echo("run-wide token cap reached; raise --max-run-tokens and rerun the same command to continue.",
                   err=True)
        sys.exit(EXIT_TOKEN_CAP)
    if COST_CAP in statuses:
        click.echo(f"--max-cost-usd {max_cost_usd:g} reached (estimate from the price table); finished samples "
                   "are kept, rerun the same command to continue.", err=True)
        sys.exit(EXIT_TOKEN_CAP)
