"""Runner: plays (model, condition, replicate) runs over a release and writes them (docs/running.md).

``run_model`` runs one run in this process: asyncio worker tasks share a deque of the samples still
to do (no poison pills); a run-wide token cap or a second Ctrl-C cancels the workers' tasks, so
nothing can hang waiting for a pill. Samples already finished in the run directory (same run
identity) are skipped; the loop's ``run_sample`` does the per-sample attempts.

``run_panel`` runs every (model, condition, replicate) of a panel: simulated runs in a
``ProcessPoolExecutor`` (each worker process loads the release once, in its initializer, and runs
whole runs), real-backend runs one after another in this process with ``workers`` concurrent
samples each.

Ctrl-C (SIGINT): the first one stops taking new samples; in-flight samples finish and are written.
A second one cancels the in-flight samples (they are dropped and rerun on resume). Everything
finished is flushed; the CLI then exits 130 and says how to resume (rerun the same command).
"""

from __future__ import annotations

import asyncio
import hashlib
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from . import __version__
from .benchmark.model import Item, Release
from .cost import attempts_usd, model_price
from .errors import AgentHopError
from .limiter import EndpointLimiter, LimitedBackend, endpoint_key
from .panel import ModelSpec, Panel, RunSpec
from .run_identity import RunCaps, config_json, run_id_for
from .writer import RunWriter

#: (flush_every samples, flush_seconds) by backend kind. Real backends write every finished sample at
#: once (docs/formats.md#trajectory-store: a crash loses at most the samples in flight; they cost money). Simulated runs are
#: free and deterministic to recompute, so they batch (documented deviation, docs/running.md).
FLUSH_DEFAULTS: dict[str, tuple[int, float]] = {"sim": (250, 30.0), "real": (1, 10.0)}

COMPLETE, INTERRUPTED, TOKEN_CAP, SKIPPED, FAILED = "complete", "interrupted", "token_cap", "skipped", "failed"
COST_CAP = "cost_cap"


class StopFlag(Protocol):
    def is_set(self) -> bool: ...

    def set(self) -> None: ...


@dataclass(frozen=True)
class RunOptions:
    """Settings of a run that are not part of the model spec."""

    caps: RunCaps = field(default_factory=RunCaps)
    seed: int = 0
    #: concurrent samples of a real-backend run (simulated runs use one)
    workers: int = 4
    #: first N items of the release (None: all)
    limit: int | None = None
    #: record the messages table; None: real backends yes, simulated no
    record_messages: bool | None = None
    flush_every: int | None = None
    flush_seconds: float | None = None
    #: run-wide token cap over every attempt of the run, resumed samples included (0: off)
    max_run_tokens: int = 0
    #: rerun samples whose final attempt ended with ``error`` when resuming
    retry_errors: bool = True
    #: progress bar; None: only when stderr is a terminal
    progress: bool | None = None
    #: samples in flight over all concurrent real-backend runs of a panel (0: no global cap)
    max_concurrency: int = 0
    #: stop taking new samples before the estimated cost of this invocation passes this (0: off)
    max_cost_usd: float = 0.0
    #: merge a finished run's part files into one per table
    compact: bool = True
    #: LoopConfig fields to override (e.g. max_attempts, sample_retry_waits), for every run
    loop_overrides: dict[str, Any] = field(default_factory=dict)

    def messages_for(self, backend: str) -> bool:
        return self.record_messages if self.record_messages is not None else backend != "sim"

    def flush_for(self, backend: str) -> tuple[int, float]:
        n, t = FLUSH_DEFAULTS["sim" if backend == "sim" else "real"]
        return (self.flush_every or n, self.flush_seconds if self.flush_seconds is not None else t)

    def show_progress(self) -> bool:
        return self.progress if self.progress is not None else sys.stderr.isatty()


@dataclass
class RunResult:
    run_id: str
    run_dir: str
    model: str
    backend: str
    condition: str
    replicate: int
    status: str
    #: items in scope (after --limit)
    n_scope: int = 0
    #: finished samples in the run directory
    n_done: int = 0
    n_correct: int = 0
    #: total_tokens over every attempt in the run directory
    tokens: int = 0
    #: samples this invocation ran
    n_new: int = 0
    error: str | None = None
    #: the run failed on a user-side problem (full disk, read-only output, a locked run): exit code 2
    user_error: bool = False

    @property
    def accuracy(self) -> float | None:
        return self.n_correct / self.n_done if self.n_done else None

    def line(self) -> str:
        acc = f"{self.accuracy:.3f}" if self.accuracy is not None else "n/a"
        tail = "" if self.status == COMPLETE else f"  [{self.status}{': ' + self.error if self.error else ''}]"
        return (f"{self.run_id}  {self.run_dir}  n={self.n_done}/{self.n_scope}  accuracy={acc}  "
                f"tokens={self.tokens}{tail}")


def sample_seed(seed: int, replicate: int, sample_id: str) -> int:
    """Per-sample seed: independent of scheduling, shared across models and conditions."""
    digest = hashlib.sha256(f"sample/{seed}/{replicate}/{sample_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def _fmt_tokens(n: int) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= div:
            return f"{n / div:.2f}{unit}"
    return str(n)


def progress_postfix(done: int, correct: int, tokens: int, usd: float) -> str:
    """The tail of a progress line: accuracy so far, tokens, estimated USD (when any was spent)."""
    acc = f"{correct / done:.3f}" if done else "-"
    tail = f" ~${usd:,.2f}" if usd else ""
    return f"acc={acc} tok={_fmt_tokens(tokens)}{tail}"


# --------------------------------------------------------------------------------------- progress
class Progress(Protocol):
    def start(self, total: int, done: int, correct: int, tokens: int) -> None: ...

    def sample(self, correct: bool, tokens: int, usd: float = 0.0) -> None: ...

    def close(self) -> None: ...


class NullProgress:
    def start(self, total: int, done: int, correct: int, tokens: int) -> None:
        pass

    def sample(self, correct: bool, tokens: int, usd: float = 0.0) -> None:
        pass

    def close(self) -> None:
        pass


class BarProgress:
    """One live tqdm line: items done/total, rate, ETA, accuracy so far, tokens and (real backends) the
    estimated USD of this invocation's samples. ``fixed_total`` for panels."""

    def __init__(self, desc: str, enabled: bool, fixed_total: int | None = None,
                 position: int | None = None) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=fixed_total, desc=desc, unit="item", disable=not enabled, file=sys.stderr,
                        mininterval=0.5, dynamic_ncols=True, smoothing=0.05, position=position)
        self.enabled = enabled
        self.fixed = fixed_total is not None
        self.done = self.correct = self.tokens = 0
        self.usd = 0.0

    def start(self, total: int, done: int, correct: int, tokens: int) -> None:
        """Samples already finished (resume): shown as done, but not counted in the rate / ETA."""
        if not self.fixed:
            self.bar.total = total
        self.done += done
        self.correct += correct
        self.tokens += tokens
        if done and self.enabled:
            self.bar.initial += done
            self.bar.n += done
            self.bar.last_print_n = self.bar.n
        self._postfix()
        if self.enabled:
            self.bar.refresh()

    def add(self, n: int, correct: int, tokens: int) -> None:
        self.done += n
        self.correct += correct
        self.tokens += tokens
        if self.enabled:
            self._postfix()
            self.bar.update(n)

    def sample(self, correct: bool, tokens: int, usd: float = 0.0) -> None:
        self.usd += usd
        self.add(1, int(correct), tokens)

    def _postfix(self) -> None:
        if self.enabled:
            self.bar.set_postfix_str(progress_postfix(self.done, self.correct, self.tokens, self.usd), refresh=False)

    def write(self, msg: str) -> None:
        self.bar.write(msg, file=sys.stderr)

    def close(self) -> None:
        self.bar.close()


class QueueProgress:
    """Progress of a run in a worker process, batched into a multiprocessing queue."""

    def __init__(self, queue: Any, interval: float = 0.5) -> None:
        self.queue = queue
        self.interval = interval
        self.n = self.correct = self.tokens = 0
        self.last = time.monotonic()

    def start(self, total: int, done: int, correct: int, tokens: int) -> None:
        self.queue.put(("resumed", done, correct, tokens))

    def sample(self, correct: bool, tokens: int, usd: float = 0.0) -> None:
        self.n += 1
        self.correct += int(correct)
        self.tokens += tokens
        now = time.monotonic()
        if now - self.last >= self.interval:
            self._send()
            self.last = now

    def _send(self) -> None:
        if self.n:
            self.queue.put(("add", self.n, self.correct, self.tokens))
            self.n = self.correct = self.tokens = 0

    def close(self) -> None:
        self._send()


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------- one run
def _scope(release: Release, limit: int | None) -> list[Item]:
    return list(release.items if limit is None else release.items[: max(0, limit)])


def run_meta(run: RunSpec, opts: RunOptions, benchmark_sha256: str, run_id: str,
             extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``runs`` row (without started_at/finished_at)."""
    m = run.model
    caps = opts.caps
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
        ctl = RunControl(stop or threading.Event(), max_concurrency=opts.max_concurrency, cost=make_cost_guard(opts))
        if handle_signals:
            ctl.install()
        try:
            return await _arun_model(run, release, Path(out_root), opts, ctl, progress)
        finally:
            ctl.uninstall()

    return asyncio.run(go())


class RunControl:
    """What the runs of one event loop share: the stop flag, Ctrl-C / SIGTERM handling, the global cap
    on samples in flight (``--max-concurrency``) and the cost guard (``--max-cost-usd``).

    Ctrl-C once sets ``stop`` (no new samples); again, or SIGTERM, sets ``abort`` (in-flight samples are
    cancelled). Handlers are installed once per event loop, however many runs share it.
    """

    def __init__(self, stop: StopFlag, *, max_concurrency: int = 0, cost: Any = None) -> None:
        self.stop = stop
        self.abort = asyncio.Event()
        self.sigints = 0
        self.in_flight = 0
        self.gate = asyncio.Semaphore(max_concurrency) if max_concurrency else None
        self.cost = cost
        self._installed: list[int] = []

    def on_sigint(self) -> None:
        self.sigints += 1
        if self.sigints == 1:
            self.stop.set()
            _say(f"\nCtrl-C: taking no new samples; finishing {self.in_flight} in-flight sample(s) "
                 "(press Ctrl-C again to drop them)")
        else:
            _say("Ctrl-C again: dropping in-flight samples")
            self.abort.set()

    def on_sigterm(self) -> None:
        self.stop.set()
        self.abort.set()

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        loop = asyncio.get_running_loop()
        for sig, fn in ((signal.SIGINT, self.on_sigint), (signal.SIGTERM, self.on_sigterm)):
            try:
                loop.add_signal_handler(sig, fn)
                self._installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass

    def uninstall(self) -> None:
        if self._installed:
            loop = asyncio.get_running_loop()
            for sig in self._installed:
                loop.remove_signal_handler(sig)
            self._installed = []


def _price_or_none(model: ModelSpec) -> Any:
    """The price-table row of a real-backend model, for the progress line (None: unknown or sim)."""
    if model.backend == "sim":
        return None
    try:
        return model_price(model)
    except AgentHopError:
        return None


def make_cost_guard(opts: RunOptions) -> Any:
    """The cost guard of ``--max-cost-usd`` (None when off)."""
    if not opts.max_cost_usd:
        return None
    from .cost import CostGuard

    return CostGuard(opts.max_cost_usd)


def make_limiter(model: ModelSpec, max_concurrency: int) -> EndpointLimiter:
    """The endpoint limiter of a real-backend model (its rpm/tpm; concurrency up to ``max_concurrency``)."""
    return EndpointLimiter(rpm=model.rpm, tpm=model.tpm, max_concurrency=max_concurrency)


async def _arun_model(
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
    run_id = run_id_for(run, opts.caps, sha, opts.seed)
    result = RunResult(run_id=run_id, run_dir=str(out_root / run_id), model=m.name, backend=m.backend,
                       condition=run.condition, replicate=run.replicate, status=SKIPPED)
    if ctl.stop.is_set():
        return result
    backend: Any = make_backend(m, seed=opts.seed, replicate=run.replicate)  # fails before touching the disk
    if m.backend != "sim":
        backend = LimitedBackend(backend, limiter or make_limiter(m, opts.workers))
    record_messages = opts.messages_for(m.backend)
    caps = opts.caps
    cfg = LoopConfig(
        caps=Caps(caps.budget, caps.max_turns, caps.max_total_tokens),
        condition=run.condition,
        sleep=no_sleep if m.backend == "sim" else asyncio.sleep,
        record_messages=record_messages,
        **opts.loop_overrides,
    )
    backend_cfg = backend.config() if callable(getattr(backend, "config", None)) else None
    extra = {"loop": {"max_attempts": cfg.max_attempts, "max_transient_retries": cfg.max_transient_retries,
                      "max_rate_limit_retries": cfg.max_rate_limit_retries,
                      "max_consecutive_errors": cfg.max_consecutive_errors}}
    if m.backend != "sim":  # the endpoint's configured limits (never its URL)
        extra["limits"] = {"rpm": m.rpm, "tpm": m.tpm}
    if backend_cfg is not None and m.backend != "sim":
        extra["backend_config"] = backend_cfg
    meta = run_meta(run, opts, sha, run_id, extra)
    items = _scope(release, opts.limit)
    flush_every, flush_seconds = opts.flush_for(m.backend)
    writer = RunWriter(out_root, meta, record_messages=record_messages, flush_every=flush_every,
                       flush_seconds=flush_seconds, retry_errors=opts.retry_errors,
                       extra_success={"n_items_requested": len(items), "limit": opts.limit},
                       secrets=backend.secrets() if callable(getattr(backend, "secrets", None)) else (),
                       repair_text=m.backend != "sim", compact=opts.compact)
    if writer.state.retried_error_samples:
        _say(f"{run_id}: rerunning {len(writer.state.retried_error_samples)} sample(s) whose final attempt "
             "ended with 'error'")
    own_progress = progress is None
    if progress is None:
        progress = BarProgress(f"{m.name}/{run.condition}/r{run.replicate}", opts.show_progress(),
                               fixed_total=len(items), position=position)
    result.n_scope = len(items)
    try:
        finals = writer.state.finals
        todo = [it for it in items if it.id not in finals]
        in_scope = [finals[it.id] for it in items if it.id in finals]
        progress.start(len(items), len(in_scope), sum(1 for ok, _ in in_scope if ok), writer.state.tokens)
        if not todo and writer.succeeded:
            writer.close(complete=False)  # nothing to do: leave the finished run untouched
            status = COMPLETE
        else:
            writer.begin()
            status = await _drive(todo, release, backend, cfg, writer, opts, run, ctl, progress)
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
    result.n_done = len(st.finals)
    result.n_correct = st.n_correct
    result.tokens = st.tokens
    result.n_new = writer.n_added
    return result


async def _drive(
    todo: list[Item],
    release: Release,
    backend: Any,
    cfg: Any,
    writer: RunWriter,
    opts: RunOptions,
    run: RunSpec,
    ctl: RunControl,
    progress: Progress,
) -> str:
    """Run ``todo`` with worker tasks; returns complete / interrupted / token_cap / cost_cap.

    The coordinator waits (``asyncio.wait``) only on tasks that are still running and on the abort
    events, so it sleeps until something happens: no CPU is spent while the workers wait for models.
    """
    from .loop import run_sample

    pending = deque(todo)
    abort = asyncio.Event()  # this run only (token cap)
    in_flight: set[str] = set()
    state = {"cap": False, "cost": False}
    n_workers = 1 if run.model.backend == "sim" else max(1, opts.workers)
    graphs, papers, labels = release.graphs, release.papers, release.labels
    seed, replicate = opts.seed, run.replicate
    cap = opts.max_run_tokens
    stop = ctl.stop
    cost = ctl.cost
    price = _price_or_none(run.model)

    def over_cap() -> bool:
        return bool(cap) and writer.state.tokens > cap

    def halted() -> bool:
        return stop.is_set() or abort.is_set() or ctl.abort.is_set()

    async def one(item: Item) -> None:
        sid = item.id
        in_flight.add(sid)
        ctl.in_flight += 1
        try:
            attempts = await run_sample(item, graphs[sid], papers, labels.get(sid, []), backend, cfg,
                                        sample_seed(seed, replicate, sid),
                                        first_attempt=writer.state.next_attempt.get(sid, 0))
        except BaseException:
            if cost is not None:
                cost.dropped(run.model)
            raise
        finally:
            in_flight.discard(sid)
            ctl.in_flight -= 1
        writer.add(sid, attempts)  # no await between the result and the buffer: never half-added
        usd = cost.spent(run.model, attempts) if cost is not None else attempts_usd(price, attempts)
        progress.sample(bool(attempts[-1].trajectory.get("is_correct")),
                        sum(int(a.trajectory.get("total_tokens") or 0) for a in attempts), usd)

    async def worker() -> None:
        while pending and not halted():
            if over_cap():  # resumed samples alone may already exceed the cap
                state["cap"] = True
                abort.set()
                return
            if cost is not None and not cost.may_start(run.model, len(in_flight)):
                state["cost"] = True
                return
            if ctl.gate is not None:
                async with ctl.gate:
                    if not pending or halted():
                        if cost is not None:
                            cost.dropped(run.model)  # the sample counted by may_start was not taken
                        return
                    await one(pending.popleft())
            else:
                await one(pending.popleft())
            if over_cap():
                state["cap"] = True
                _say(f"{writer.run_id}: run-wide token cap reached ({writer.state.tokens:,} > {cap:,}); "
                     f"cancelling {len(in_flight)} in-flight sample(s)")
                abort.set()
                return
            await asyncio.sleep(0)  # let signal handlers and other workers run

    async def ticker() -> None:  # a finished sample never waits long for the next one to be flushed
        while True:
            await asyncio.sleep(max(0.05, writer.flush_seconds / 2))
            writer.flush_if_due()

    tasks = {asyncio.create_task(worker()) for _ in range(min(n_workers, len(pending)))}
    abort_wait = asyncio.create_task(abort.wait())
    global_abort = asyncio.create_task(ctl.abort.wait())
    tick = asyncio.create_task(ticker())
    running = set(tasks)
    try:
        while running:
            done, _ = await asyncio.wait(running | {abort_wait, global_abort, tick},
                                         return_when=asyncio.FIRST_COMPLETED)
            running -= done
            failed = [t for t in done if t in tasks or t is tick]
            failed = [t for t in failed if not t.cancelled() and t.exception() is not None]
            if failed or abort_wait in done or global_abort in done:
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                if failed:
                    raise failed[0].exception()  # type: ignore[misc]
                break
    finally:
        for t in (abort_wait, global_abort, tick):
            t.cancel()
    if state["cap"]:
        return TOKEN_CAP
    if not pending and not in_flight:
        return COMPLETE
    if state["cost"] and not stop.is_set() and not ctl.abort.is_set():
        return COST_CAP
    return INTERRUPTED


# --------------------------------------------------------------------------------------- panels
_WORKER: dict[str, Any] = {}


#: how often a pool worker checks that its parent is alive
PARENT_POLL_S = 0.25


def die_with_parent(parent_pid: int, poll_s: float = PARENT_POLL_S) -> None:
    """Make this (pool worker) process end when ``parent_pid`` dies, even by SIGKILL.

    On Linux the kernel sends SIGKILL at the parent's death (``prctl(PR_SET_PDEATHSIG)``); everywhere a
    daemon thread also polls ``getppid()`` (the kernel's signal is tied to the parent *thread* that
    forked, and a parent that died before the call would go unnoticed) and exits the process.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(poll_s)
            if os.getppid() != parent_pid:
                os._exit(1)  # orphaned: what was written is intact (atomic renames); stop here

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _pool_init(root: str, limit: int | None, stop: Any, queue: Any, parent_pid: int | None = None) -> None:
    """Worker-process initializer: die with the parent, ignore SIGINT (the parent coordinates), load the
    release once."""
    if parent_pid is not None:
        die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER.update(stop=stop, queue=queue)
    try:
        from .benchmark.loader import load_release

        _WORKER["release"] = load_release(root, limit=limit)
    except BaseException as exc:  # reported by every job of this process
        _WORKER["error"] = exc


class RunCrashed(RuntimeError):
    """A run failed with an unexpected exception in a worker process (picklable, with its traceback)."""

    def __init__(self, summary: str, traceback_text: str) -> None:
        super().__init__(summary, traceback_text)
        self.summary = summary
        self.traceback_text = traceback_text

    def __str__(self) -> str:
        return self.summary


def _pool_job(run: RunSpec, out_root: str, opts: RunOptions) -> RunResult:
    """One whole run in a worker process; exceptions come back in a form that always unpickles."""
    import traceback

    queue = _WORKER["queue"]
    progress: Progress = QueueProgress(queue) if queue is not None else NullProgress()
    try:
        if "error" in _WORKER:
            raise _WORKER["error"]
        return run_model(run, _WORKER["release"], out_root, opts, stop=_WORKER["stop"], progress=progress,
                         handle_signals=False)
    except AgentHopError as exc:
        raise AgentHopError(str(exc)) from None
    except Exception as exc:
        raise RunCrashed(f"{type(exc).__name__}: {exc}", traceback.format_exc()) from None
    finally:
        progress.close()


def count_items(root: str | Path, limit: int | None) -> int:
    """Items of a release without loading it (non-blank lines of qa/full.jsonl), capped by limit."""
    path = Path(root) / "qa" / "full.jsonl"
    try:
        with open(path, "rb") as fh:
            n = sum(1 for line in fh if line.strip())
    except OSError as exc:
        raise AgentHopError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return n if limit is None else min(n, max(0, limit))


def _pool_context() -> Any:
    """``spawn``: fresh interpreters (no fork of a threaded parent), direct children of this process,
    so their CPU time and peak RSS show up in ``wait4``/``time -v`` of the command."""
    return mp.get_context("spawn")


def _release_sha(release: Release | str | Path) -> tuple[str, str]:
    if isinstance(release, Release):
        return release.root, release.benchmark_sha256
    from .benchmark.loader import benchmark_sha256

    return str(release), benchmark_sha256(release)


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
    ctx = _pool_context() if use_pool else None
    stop: StopFlag = ctx.Event() if ctx is not None else threading.Event()
    loaded: Release | None = release if isinstance(release, Release) else None

    def done(i: int, res: RunResult) -> None:
        results[i] = res
        if on_result is not None:
            on_result(res)

    if use_pool:
        assert ctx is not None
        _run_pool(ctx, [(i, runs[i], ids[i]) for i in sim_idx], root, out, opts, min(procs, len(sim_idx)),
                  stop, done)
        rest = [i for i in range(len(runs)) if i not in results]
    else:
        rest = list(range(len(runs)))
    real_rest = [i for i in rest if runs[i].model.backend != "sim"]
    for i in rest:
        r = runs[i]
        if r.model.backend != "sim":
            continue
        if stop.is_set():
            done(i, _skipped(r, ids[i], out))
            continue
        if loaded is None:
            from .benchmark.loader import load_release

            loaded = load_release(root, limit=opts.limit)
        try:
            done(i, run_model(r, loaded, out, opts, stop=stop))
        except KeyboardInterrupt:
            raise
        except AgentHopError as exc:  # one clear line for this run (e.g. a full disk); the others go on
            done(i, _failed(r, ids[i], out, exc))
        except Exception as exc:  # a bug: report it, keep what finished, go on with the other runs
            _report_failure(ids[i], exc)
            done(i, _failed(r, ids[i], out, exc))
    if real_rest:
        if stop.is_set():
            for i in real_rest:
                done(i, _skipped(runs[i], ids[i], out))
        else:
            if loaded is None:
                from .benchmark.loader import load_release

                loaded = load_release(root, limit=opts.limit)
            asyncio.run(_arun_concurrent([(i, runs[i], ids[i]) for i in real_rest], loaded, out, opts, stop, done))
    return [results[i] for i in range(len(runs))]


def _skipped(r: RunSpec, run_id: str, out: Path) -> RunResult:
    return RunResult(run_id=run_id, run_dir=str(out / run_id), model=r.model.name, backend=r.model.backend,
                     condition=r.condition, replicate=r.replicate, status=SKIPPED)


def _failed(r: RunSpec, run_id: str, out: Path, exc: BaseException) -> RunResult:
    user = isinstance(exc, AgentHopError)
    return RunResult(run_id=run_id, run_dir=str(out / run_id), model=r.model.name, backend=r.model.backend,
                     condition=r.condition, replicate=r.replicate, status=FAILED,
                     error=str(exc) if user else f"{type(exc).__name__}: {exc}", user_error=user)


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
    ctl = RunControl(stop, max_concurrency=opts.max_concurrency, cost=make_cost_guard(opts))
    ctl.install()
    limiters = endpoint_limiters([r for _, r, _ in jobs], max(1, opts.workers))

    async def one(k: int, i: int, r: RunSpec, rid: str) -> None:
        try:
            res = await _arun_model(r, release, out, opts, ctl, None, limiters[k], position=k)
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except AgentHopError as exc:  # one clear line for this run (e.g. a full disk); the others go on
            res = _failed(r, rid, out, exc)
        except Exception as exc:  # a bug: report it, keep what finished, go on with the other runs
            _report_failure(rid, exc)
            res = _failed(r, rid, out, exc)
        done(i, res)

    try:
        outcomes = await asyncio.gather(*(one(k, i, r, rid) for k, (i, r, rid) in enumerate(jobs)),
                                        return_exceptions=True)
    finally:
        ctl.uninstall()
    errors = [e for e in outcomes if isinstance(e, BaseException)]
    if errors:
        raise errors[0]


def _report_failure(run_id: str, exc: BaseException) -> None:
    """Print a failed run's traceback (from a worker process too) to stderr."""
    import traceback

    if isinstance(exc, RunCrashed):
        text = exc.traceback_text
    else:
        text = "".join(traceback.format_exception(exc))
    _say(f"run {run_id} failed (finished samples are kept):\n{text.rstrip()}")


def _run_pool(
    ctx: Any,
    jobs: list[tuple[int, RunSpec, str]],
    root: str,
    out: Path,
    opts: RunOptions,
    procs: int,
    stop: Any,
    done: Callable[[int, RunResult], None],
) -> None:
    show = opts.show_progress()
    n_items = count_items(root, opts.limit)
    queue = ctx.Queue() if show else None
    bar = BarProgress(f"{len(jobs)} sim runs", show, fixed_total=n_items * len(jobs))
    drainer: threading.Thread | None = None
    if queue is not None:
        def drain() -> None:
            while True:
                msg = queue.get()
                if msg is None:
                    return
                kind, n, correct, tokens = msg
                if kind == "resumed":
                    bar.start(0, n, correct, tokens)
                else:
                    bar.add(n, correct, tokens)

        drainer = threading.Thread(target=drain, name="progress-drain", daemon=True)
        drainer.start()
    sigints = 0

    def on_sigint(signum: int, frame: Any) -> None:
        nonlocal sigints
        sigints += 1
        stop.set()
        if sigints == 1:
            _say("\nCtrl-C: stopping; runs in progress keep their finished samples")

    in_main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGINT, on_sigint) if in_main else None
    old_term = signal.signal(signal.SIGTERM, on_sigint) if in_main else None
    # children must not write the unpickled options' progress bar: progress goes through the queue
    child_opts = replace(opts, progress=False)
    try:
        with ProcessPoolExecutor(max_workers=procs, mp_context=ctx, initializer=_pool_init,
                                 initargs=(root, opts.limit, stop, queue, os.getpid())) as pool:
            futures: dict[Future[RunResult], tuple[int, RunSpec, str]] = {
                pool.submit(_pool_job, r, str(out), child_opts): (i, r, rid) for i, r, rid in jobs
            }
            remaining = set(futures)
            while remaining:
                finished, remaining = wait(remaining, timeout=0.5, return_when=FIRST_COMPLETED)
                if stop.is_set():
                    for f in remaining:
                        f.cancel()
                for f in finished:
                    i, r, rid = futures[f]
                    base = {"run_id": rid, "run_dir": str(out / rid), "model": r.model.name,
                            "backend": r.model.backend, "condition": r.condition, "replicate": r.replicate}
                    if f.cancelled():
                        done(i, RunResult(**base, status=SKIPPED))
                        continue
                    exc = f.exception()
                    if exc is None:
                        done(i, f.result())
                        continue
                    user = isinstance(exc, AgentHopError)
                    if not user:
                        _report_failure(rid, exc)
                    summary = str(exc) if isinstance(exc, (RunCrashed, AgentHopError)) else f"{type(exc).__name__}: {exc}"
                    done(i, RunResult(**base, status=FAILED, error=summary, user_error=user))
    finally:
        if old is not None:
            signal.signal(signal.SIGINT, old)
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
        if queue is not None:
            queue.put(None)
            if drainer is not None:
                drainer.join(timeout=5)
        bar.close()
