"""Simulated runs of a panel in a process pool (docs/running.md).

Each worker process loads the release once, in its initializer, and plays whole runs; progress comes
back batched through a queue. Worker processes start with SIGINT blocked and then ignore it: a Ctrl-C
at the terminal reaches the whole process group, and only this (parent) process acts on it, even
while the pool is still starting, so a child never prints a KeyboardInterrupt traceback.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from .errors import AgentHopError
from .panel import RunSpec
from .progress import BarProgress, NullProgress, Progress, QueueProgress
from .run_one import run_model
from .run_options import RunOptions
from .run_result import FAILED, INTERRUPTED, RunCrashed, RunResult, report_failure, result_for, say

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
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # also drops a Ctrl-C that arrived while it was blocked
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _WORKER.update(stop=stop, queue=queue)
    try:
        from . import benchmarks

        _WORKER["release"] = benchmarks.load(root, limit=limit)
    except BaseException as exc:  # reported by every job of this process
        _WORKER["error"] = exc


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
    """Items of a release without loading it (non-blank lines of its benchmark's marker file, one item
    per line), capped by limit."""
    from . import benchmarks

    path = Path(root) / benchmarks.detect(Path(root)).release_marker
    try:
        with open(path, "rb") as fh:
            n = sum(1 for line in fh if line.strip())
    except OSError as exc:
        raise AgentHopError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return n if limit is None else min(n, max(0, limit))


def pool_context() -> Any:
    """``spawn``: fresh interpreters (no fork of a threaded parent), direct children of this process,
    so their CPU time and peak RSS show up in ``wait4``/``time -v`` of the command."""
    return mp.get_context("spawn")


def run_pool(
    ctx: Any,
    jobs: list[tuple[int, RunSpec, str]],
    root: str,
    out: Path,
    opts: RunOptions,
    procs: int,
    stop: Any,
    done: Callable[[int, RunResult], None],
) -> str | None:
    """Play ``jobs`` (index, run, run id) in ``procs`` worker processes, calling ``done`` as each ends;
    returns the signal that stopped them (None when none did)."""
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
    received: list[str] = []

    def on_signal(signum: int, frame: Any) -> None:
        name = "SIGTERM" if signum == signal.SIGTERM else "SIGINT"
        if not received:
            say(f"\n{'Ctrl-C' if name == 'SIGINT' else name}: stopping; runs in progress keep their finished "
                "samples")
        received.append(name)
        stop.set()

    def stopped_by() -> str | None:
        return "SIGTERM" if "SIGTERM" in received else (received[0] if received else None)

    in_main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGINT, on_signal) if in_main else None
    old_term = signal.signal(signal.SIGTERM, on_signal) if in_main else None
    # children must not write the unpickled options' progress bar: progress goes through the queue
    child_opts = replace(opts, progress=False)
    try:
        with ProcessPoolExecutor(max_workers=procs, mp_context=ctx, initializer=_pool_init,
                                 initargs=(root, opts.limit, stop, queue, os.getpid())) as pool:
            with sigint_blocked():  # worker processes start (on submit) with SIGINT blocked
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
                    done(i, _pool_result(f, r, rid, out, stop.is_set(), stopped_by()))
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
    return stopped_by()


@contextmanager
def sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread (processes and threads started meanwhile inherit the mask); a Ctrl-C
    that arrives meanwhile is delivered when the block ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _pool_result(f: Future[RunResult], r: RunSpec, rid: str, out: Path, stopping: bool,
                 stopped_by: str | None) -> RunResult:
    """The result of one finished pool job: a run stopped by a signal is interrupted (never failed)."""
    if f.cancelled():
        return result_for(r, rid, out, INTERRUPTED, stopped_by=stopped_by)
    exc = f.exception()
    if exc is None:
        res = f.result()
        if res.status == INTERRUPTED:
            res.stopped_by = stopped_by
        return res
    if stopping and isinstance(exc, BrokenExecutor):  # the pool went down with the interrupt
        return result_for(r, rid, out, INTERRUPTED, stopped_by=stopped_by)
    user = isinstance(exc, AgentHopError)
    if not user:
        report_failure(rid, exc)
    summary = str(exc) if isinstance(exc, (RunCrashed, AgentHopError)) else f"{type(exc).__name__}: {exc}"
    return result_for(r, rid, out, FAILED, error=summary, user_error=user)
