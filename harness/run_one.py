"""One run (model, condition, replicate) played in this process (docs/running.md).

``run_model`` runs or resumes one run: samples already finished in its directory (same run identity)
are skipped, the others go to the worker tasks of harness/sample_driver.py, and the run is complete,
and gets ``_SUCCESS``, exactly when every sample of its scope has a final attempt on disk.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import __version__
from . import benchmarks
from .completion import run_is_complete
from .cost import cost_guard_for
from .errors import AgentHopError
from .limiter import EndpointLimiter, LimitedBackend
from .panel import ModelSpec, RunSpec
from .progress import BarProgress, Progress
from .run_control import RunControl, StopFlag
from .run_identity import config_json, run_id_for
from .run_options import RunOptions
from .run_result import COMPLETE, INTERRUPTED, SHARD_DONE, RunResult, say
from .sample_driver import drive
from .writer import RunWriter

#: a benchmark's loaded release and one of its items (harness/benchmarks: whatever its loader returns)
Release = Any
Item = Any


def _scope(release: Release, limit: int | None) -> list[Item]:
    return list(release.items if limit is None else release.items[: max(0, limit)])


def run_meta(run: RunSpec, opts: RunOptions, benchmark_sha256: str, run_id: str,
             extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``runs`` row (without started_at/finished_at)."""
    m = run.model
    caps = run.caps if run.caps is not None else opts.caps
    return {
        "run_id": run_id,
        "model": m.name,
        "backend": m.backend,
        "condition": run.condition,
        "replicate": run.replicate,
        "benchmark_sha256": benchmark_sha256,
        "budget_total": caps.budget,
        "max_turns": caps.max_turns,
        "max_total_tokens": caps.max_total_tokens,
        "harness_version": __version__,
        "config_json": config_json(run, caps, benchmark_sha256, opts.seed, {
            "record_messages": opts.messages_for(m.backend),
            "max_run_tokens": opts.max_run_tokens,
            **(extra or {}),
        }),
        "family": m.family,
        "tier": m.tier,
        "generation": m.generation,
    }


def run_model(
    run: RunSpec | ModelSpec,
    release: Release,
    out_root: str | Path,
    opts: RunOptions | None = None,
    *,
    stop: StopFlag | None = None,
    progress: Progress | None = None,
    handle_signals: bool = True,
    **overrides: Any,
) -> RunResult:
    """Run (or resume) one run in this process; ``overrides`` replace RunOptions fields (workers=, limit=)."""
    if isinstance(run, ModelSpec):
        run = RunSpec(run, run.conditions[0], 0)
    opts = replace(opts or RunOptions(), **overrides)

    async def go() -> RunResult:
        ctl = RunControl(stop or threading.Event(), max_concurrency=opts.max_concurrency,
                         cost=cost_guard_for(opts.max_cost_usd, opts.strict_cost_cap))
        if handle_signals:
            ctl.install()
        try:
            return await arun_model(run, release, Path(out_root), opts, ctl, progress)
        finally:
            ctl.uninstall()

    return asyncio.run(go())


def make_limiter(model: ModelSpec, max_concurrency: int) -> EndpointLimiter:
    """The endpoint limiter of a real-backend model (its rpm/tpm; concurrency up to ``max_concurrency``)."""
    return EndpointLimiter(rpm=model.rpm, tpm=model.tpm, max_concurrency=max_concurrency)


def settled_status(stopped: str, run_dir: Path, scope: list[str], shard_scope: list[str] | None = None) -> str:
    """The status of a run whose driver stopped for ``stopped``: complete exactly when every sample of
    ``scope`` has a final attempt in ``run_dir`` (on disk, whatever was in flight); otherwise why it
    stopped, and interrupted when the driver had nothing left to start (samples were dropped)."""
    if run_is_complete(run_dir, scope):
        return COMPLETE
    if stopped == COMPLETE and shard_scope is not None and run_is_complete(run_dir, shard_scope):
        return SHARD_DONE
    return INTERRUPTED if stopped == COMPLETE else stopped


async def arun_model(
    run: RunSpec,
    release: Release,
    out_root: Path,
    opts: RunOptions,
    ctl: RunControl,
    progress: Progress | None,
    limiter: EndpointLimiter | None = None,
    position: int | None = None,
) -> RunResult:
    from .backends import make_backend
    from .loop import Caps, LoopConfig, no_sleep

    m = run.model
    sha = release.benchmark_sha256
    if not sha:
        raise AgentHopError(f"{release.root}: release has no benchmark_sha256 (load it with load_release)")
    run_id = run_id_for(run, opts.caps, sha, opts.seed)  # the run's own caps when it has them
    result = RunResult(run_id=run_id, run_dir=str(out_root / run_id), model=m.name, backend=m.backend,
                       condition=run.condition, replicate=run.replicate, status=INTERRUPTED)
    if ctl.stop.is_set():  # stopped before it started: interrupted, a rerun resumes it
        result.stopped_by = ctl.stopped_by
        return result
    bench = benchmarks.of_release(release)
    real = m.backend != "sim"
    backend: Any = make_backend(m, seed=opts.seed, replicate=run.replicate, benchmark=bench.name,  # fails before
                                request_timeout_s=opts.request_timeout_s if real else None)  # touching the disk
    if real:
        backend = LimitedBackend(backend, limiter or make_limiter(m, opts.workers))
    record_messages = opts.messages_for(m.backend)
    caps = run.caps if run.caps is not None else opts.caps
    sample_seconds = run.max_sample_seconds if run.max_sample_seconds is not None else opts.max_sample_seconds
    cfg = LoopConfig(
        caps=Caps(caps.budget, caps.max_turns, caps.max_total_tokens),
        condition=run.condition,
        sleep=no_sleep if m.backend == "sim" else asyncio.sleep,
        record_messages=record_messages,
        benchmark=bench.name,
        options=dict(run.options),
        **{"max_sample_seconds": sample_seconds if real else 0.0, **opts.loop_overrides},
    )
    backend_cfg = backend.config() if callable(getattr(backend, "config", None)) else None
    extra = {"loop": {"max_attempts": cfg.max_attempts, "max_transient_retries": cfg.max_transient_retries,
                      "max_rate_limit_retries": cfg.max_rate_limit_retries,
                      "max_consecutive_errors": cfg.max_consecutive_errors}}
    if m.backend != "sim":  # the endpoint's configured limits (never its URL)
        extra["limits"] = {"rpm": m.rpm, "tpm": m.tpm, "max_sample_seconds": cfg.max_sample_seconds}
    if backend_cfg is not None and m.backend != "sim":
        extra["backend_config"] = backend_cfg
    meta = run_meta(run, opts, sha, run_id, extra)
    meta["benchmark"] = bench.name
    if bench.run_columns is not None:
        meta.update(bench.run_columns(run.condition, run.options))
    items = _scope(release, opts.limit)
    mine = items if opts.shard is None else [it for it in items if opts.shard.owns(it.id)]  # --shard
    flush_every, flush_seconds = opts.flush_for(m.backend)
    writer = RunWriter(out_root, meta, record_messages=record_messages, flush_every=flush_every,
                       flush_seconds=flush_seconds, retry_errors=opts.retry_errors,
                       extra_success={"n_items_requested": len(items), "limit": opts.limit},
                       secrets=backend.secrets() if callable(getattr(backend, "secrets", None)) else (),
                       repair_text=m.backend != "sim", compact=opts.compact, shard=opts.shard)
    if writer.state.retried_error_samples:
        say(f"{run_id}: rerunning {len(writer.state.retried_error_samples)} sample(s) whose final attempt "
            "ended with 'error'")
    own_progress = progress is None
    if progress is None:
        progress = BarProgress(f"{m.name}/{run.condition}/r{run.replicate}", opts.show_progress(),
                               fixed_total=len(mine), position=position)
    result.n_scope = len(items)
    try:
        finals = writer.state.finals
        todo = [it for it in mine if it.id not in finals]
        in_scope = [finals[it.id] for it in mine if it.id in finals]  # a shard's bar counts its own samples
        progress.start(len(mine), len(in_scope), sum(1 for ok, _ in in_scope if ok), writer.state.tokens)
        if not todo and writer.succeeded:
            writer.close(complete=False)  # nothing to do: leave the finished run untouched
            status = COMPLETE
        else:
            writer.begin()
            stopped = await drive(todo, release, backend, cfg, writer, opts, run, ctl, progress)
            writer.flush()  # what finished is on disk before the directory is asked whether it is complete
            status = settled_status(stopped, writer.run_dir, [it.id for it in items],
                                    [it.id for it in mine] if opts.shard is not None else None)
            writer.close(complete=status == COMPLETE)
    except BaseException:
        try:
            writer.close(complete=False)  # keep what finished
        except AgentHopError:
            pass  # the disk that failed the run fails the last flush too; the first error is the one to show
        raise
    finally:
        if own_progress:
            progress.close()
        if callable(getattr(backend, "aclose", None)):
            await backend.aclose()  # the SDK client's pooled connections, on this event loop
    st = writer.state
    result.status = status
    if status == INTERRUPTED:
        result.stopped_by = ctl.stopped_by
    result.n_done = len(st.finals)
    result.n_correct = st.n_correct
    result.tokens = st.tokens
    result.n_new = writer.n_added
    return result
