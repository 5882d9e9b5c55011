"""Every (model, condition, replicate) of a panel (docs/running.md).

Simulated runs go to a process pool (harness/process_pool.py) when there are at least two of them;
real-backend runs follow, all at the same time in one event loop of this process, each with its own
workers and its endpoint's limiter, under ``--max-concurrency`` and the cost guard.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import benchmarks
from .cost import cost_guard_for
from .errors import AgentHopError
from .limiter import EndpointLimiter, endpoint_key
from .panel import Panel, RunSpec
from .process_pool import pool_context, run_pool
from .run_control import RunControl, StopFlag
from .run_identity import run_id_for
from .run_one import arun_model, run_model
from .run_options import RunOptions
from .run_result import RunResult, failed, not_started, report_failure


#: a benchmark's loaded release (harness/benchmarks: whatever its loader returns)
Release = Any


def _release_sha(release: Release | str | Path) -> tuple[str, str]:
    if not isinstance(release, (str, Path)):
        return release.root, release.benchmark_sha256
    return str(release), benchmarks.release_sha256(release)


def run_panel(
    panel: Panel | Sequence[RunSpec],
    release: Release | str | Path,
    out_root: str | Path,
    opts: RunOptions | None = None,
    *,
    processes: int | None = None,
    on_result: Callable[[RunResult], None] | None = None,
    **overrides: Any,
) -> list[RunResult]:
    """Run every (model, condition, replicate) of ``panel``; results in panel order.

    Simulated runs go to a process pool of ``processes`` (default ``os.cpu_count()``) when there
    are at least two of them; real-backend runs follow, one at a time, in this process.
    """
    opts = replace(opts or RunOptions(), **overrides)
    runs = panel.runs() if isinstance(panel, Panel) else list(panel)
    out = Path(out_root)
    root, sha = _release_sha(release)
    if not sha:
        raise AgentHopError(f"{root}: release has no benchmark_sha256")
    from .backends import make_backend

    for r in runs:  # fail fast on missing keys / bad specs, before any run starts
        if r.model.backend != "sim":
            make_backend(r.model, seed=opts.seed, replicate=r.replicate)
    ids = [run_id_for(r, opts.caps, sha, opts.seed) for r in runs]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise AgentHopError(f"the panel lists the same run twice: {', '.join(sorted(dupes))}")
    procs = max(1, processes or os.cpu_count() or 1)
    sim_idx = [i for i, r in enumerate(runs) if r.model.backend == "sim"]
    results: dict[int, RunResult] = {}
    use_pool = len(sim_idx) >= 2 and procs > 1
    ctx = pool_context() if use_pool else None
    stop: StopFlag = ctx.Event() if ctx is not None else threading.Event()
    loaded: Release | None = None if isinstance(release, (str, Path)) else release

    stopped_by: str | None = None

    def done(i: int, res: RunResult) -> None:
        results[i] = res
        if on_result is not None:
            on_result(res)

    if use_pool:
        assert ctx is not None
        stopped_by = run_pool(ctx, [(i, runs[i], ids[i]) for i in sim_idx], root, out, opts,
                              min(procs, len(sim_idx)), stop, done)
        rest = [i for i in range(len(runs)) if i not in results]
    else:
        rest = list(range(len(runs)))
    real_rest = [i for i in rest if runs[i].model.backend != "sim"]
    for i in rest:
        r = runs[i]
        if r.model.backend != "sim":
            continue
        if stop.is_set():
            done(i, not_started(r, ids[i], out, stopped_by))
            continue
        if loaded is None:
            loaded = benchmarks.load(root, limit=opts.limit)
        try:
            done(i, run_model(r, loaded, out, opts, stop=stop))
        except KeyboardInterrupt:
            raise
        except AgentHopError as exc:  # one clear line for this run (e.g. a full disk); the others go on
            done(i, failed(r, ids[i], out, exc))
        except Exception as exc:  # a bug: report it, keep what finished, go on with the other runs
            report_failure(ids[i], exc)
            done(i, failed(r, ids[i], out, exc))
    if real_rest:
        if stop.is_set():
            for i in real_rest:
                done(i, not_started(runs[i], ids[i], out, stopped_by))
        else:
            if loaded is None:
                loaded = benchmarks.load(root, limit=opts.limit)
            asyncio.run(_arun_concurrent([(i, runs[i], ids[i]) for i in real_rest], loaded, out, opts, stop, done))
    return [results[i] for i in range(len(runs))]


def endpoint_limiters(runs: Sequence[RunSpec], workers: int) -> list[EndpointLimiter]:
    """One limiter per endpoint (backend, base URL, key variable), shared by the runs that call it: its
    concurrency ceiling is the sum of their workers, its rpm/tpm the smallest they set."""
    by_key: dict[tuple[str, str, str], list[int]] = {}
    for k, r in enumerate(runs):
        by_key.setdefault(endpoint_key(r.model.backend, r.model.base_url, r.model.api_key_env), []).append(k)
    out: list[EndpointLimiter | None] = [None] * len(runs)
    for members in by_key.values():
        rpms = [runs[k].model.rpm for k in members if runs[k].model.rpm]
        tpms = [runs[k].model.tpm for k in members if runs[k].model.tpm]
        lim = EndpointLimiter(rpm=min(rpms) if rpms else None, tpm=min(tpms) if tpms else None,
                              max_concurrency=workers * len(members))
        for k in members:
            out[k] = lim
    return [lim for lim in out if lim is not None]


async def _arun_concurrent(
    jobs: list[tuple[int, RunSpec, str]],
    release: Release,
    out: Path,
    opts: RunOptions,
    stop: StopFlag,
    done: Callable[[int, RunResult], None],
) -> None:
    """The real-backend runs of a panel at the same time in this event loop: each with its own workers
    and its endpoint's limiter, all under ``--max-concurrency`` samples in flight and the cost guard."""
    ctl = RunControl(stop, max_concurrency=opts.max_concurrency, cost=cost_guard_for(opts.max_cost_usd, opts.strict_cost_cap))
    ctl.install()
    limiters = endpoint_limiters([r for _, r, _ in jobs], max(1, opts.workers))

    async def one(k: int, i: int, r: RunSpec, rid: str) -> None:
        try:
            res = await arun_model(r, release, out, opts, ctl, None, limiters[k], position=k)
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except AgentHopError as exc:  # one clear line for this run (e.g. a full disk); the others go on
            res = failed(r, rid, out, exc)
        except Exception as exc:  # a bug: report it, keep what finished, go on with the other runs
            report_failure(rid, exc)
            res = failed(r, rid, out, exc)
        done(i, res)

    try:
        outcomes = await asyncio.gather(*(one(k, i, r, rid) for k, (i, r, rid) in enumerate(jobs)),
                                        return_exceptions=True)
    finally:
        ctl.uninstall()
    errors = [e for e in outcomes if isinstance(e, BaseException)]
    if errors:
        raise errors[0]
