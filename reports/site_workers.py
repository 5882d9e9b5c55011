"""The pages of `agenthop-report site` rendered in worker processes (``--workers N``).

Most of a site's time is Python rendering its pages one at a time, on one core. With N workers the pages go to
N processes forked from the builder once its plan is made, so each starts with what the plan loaded (the runs,
the leaderboard kept on the warehouse) and opens the warehouse itself, read-only: the builder closes its own
connection before forking (a DuckDB connection must not cross a fork) and opens it again when the pages are
done, for the index. A page is rendered by the same code as in one process, into the same staging folder, so the
files are the same whatever the number of workers or the order the pages finish in.

The builder hands out the pages in the plan's order, one to each worker that is free, and prints a page's
progress line as it hands it out: the same lines, in the same order, as one process prints. A page that links to
other pages of the site (a model page: to the leaderboard and reruns pages written) waits for every earlier page
but those that wait like it (the model pages render side by side once the pages before them are done).

A page the warehouse cannot give is listed on the index as in one process (``Entry.problem``). Any other failure
of a worker (an exception, or the process killed, as by the kernel out of memory) stops the build with an
:class:`AgentHopError` naming the page; the staging folder is removed, so the site is left as it was.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING

from agenthop.harness.errors import AgentHopError

if TYPE_CHECKING:
    from .site_build import Entry, SiteBuilder

#: The environment variable giving the number of workers when ``--workers`` is not given.
ENV = "AGENTHOP_SITE_WORKERS"
#: Most workers by default, whatever the cores: each holds its own DuckDB cache (site_build.MEMORY_LIMIT) and the
#: page it renders
MAX_DEFAULT = 4

#: What the worker processes share with the builder that forked them (set before the fork, read after it).
_builder: SiteBuilder | None = None
_entries: Sequence[Entry] = ()


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def default_workers(env: dict[str, str] | None = None) -> int:
    """$AGENTHOP_SITE_WORKERS when set, else the cores this process may use, at most :data:`MAX_DEFAULT`."""
    raw = (os.environ if env is None else env).get(ENV, "").strip()
    if raw:
        try:
            n = int(raw)
        except ValueError:
            n = 0
        if n < 1:
            raise AgentHopError(f"${ENV}={raw!r}: give a whole number of worker processes, 1 or more")
        return n
    return max(1, min(available_cpus(), MAX_DEFAULT))


#: The least DuckDB memory a worker is given (its share of the site's MEMORY_LIMIT), in MB
MIN_WORKER_MB = 128


def worker_memory_limit(limit_mb: int, workers: int) -> str:
    """Each worker's DuckDB memory_limit: the site's `limit_mb` shared among the `workers`, at least
    :data:`MIN_WORKER_MB`, so the workers together hold about the cache one process holds."""
    return f"{max(MIN_WORKER_MB, limit_mb // max(1, workers))}MB"


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _start_worker(memory_limit: str) -> None:
    """In a new worker: its own connection to the warehouse, capped as the builder's."""
    assert _builder is not None
    _builder.wh.reconnect()
    _builder.wh.con.execute(f"SET memory_limit = '{memory_limit}'")
    _builder.wh.con.execute("SET enable_progress_bar = false")  # two workers' bars would cut into the page lines


def _render_one(index: int, written: frozenset[str]) -> tuple[bool, str, str]:
    """Render entry `index` of the plan, knowing the pages written so far; (written, problem, failure): failure is
    the exception's type and words when the page failed in a way the index cannot list."""
    assert _builder is not None
    entry = _entries[index]
    _builder.written = set(written)
    try:
        _builder._render(entry)
    except Exception as exc:  # noqa: BLE001 -- told to the builder, which stops with its page named
        return False, "", f"{type(exc).__name__}: {exc}".strip()
    return entry.written, entry.problem, ""


def render_all(builder: SiteBuilder, entries: Sequence[Entry], workers: int, memory_limit: str,
               announce: Callable[[int, Entry], None], worker_limit: str | None = None) -> None:
    """Render `entries` in `workers` forked processes (module docstring), calling `announce(i, entry)` as entry i (from
    1) is handed out; each entry's ``written`` and ``problem`` and the builder's ``written`` set as in one process.
    Each worker's DuckDB memory_limit is `worker_limit` (default `memory_limit`); the builder's connection, opened
    again after, gets `memory_limit`."""
    global _builder, _entries
    _builder, _entries = builder, entries
    wh = builder.wh
    wh.close()  # not to cross the fork; opened again below
    pending: dict[Future[tuple[bool, str, str]], int] = {}

    def collect() -> None:
        """Take in the pages finished (at least one), in the plan's order."""
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        for fut in sorted(done, key=pending.__getitem__):  # in the plan's order
            i = pending.pop(fut)
            entry = entries[i]
            try:
                written, problem, failure = fut.result()
            except BrokenProcessPool:
                busy = sorted([i, *pending.values()])
                which = " or ".join(f"{entries[k].kind} page {entries[k].rel}" for k in busy)
                raise AgentHopError(f"site: a worker process ended while rendering {which} (killed, or out of "
                                    f"memory?); nothing was written. Retry with fewer workers (--workers, ${ENV})"
                                    ) from None
            if failure:
                raise AgentHopError(f"site: rendering {entry.kind} page {entry.rel} failed in a worker process "
                                    f"({failure}); nothing was written. --workers 1 renders in this process, with "
                                    "the full error") from None
            entry.written, entry.problem = written, problem
            if written:
                builder.written.add(entry.rel)

    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_start_worker,
                                 initargs=(worker_limit or memory_limit,)) as pool:
            try:
                for i, entry in enumerate(entries):
                    if entry.after_earlier:  # the pages it may link to first; those waiting like it go on
                        while any(not entries[k].after_earlier for k in pending.values()):
                            collect()
                    while len(pending) >= workers:
                        collect()
                    announce(i + 1, entry)
                    pending[pool.submit(_render_one, i, frozenset(builder.written))] = i
                while pending:
                    collect()
            except BaseException:
                for fut in pending:
                    fut.cancel()
                raise
    finally:
        _builder, _entries = None, ()
        wh.reconnect()
        wh.con.execute(f"SET memory_limit = '{memory_limit}'")


__all__ = ["ENV", "MAX_DEFAULT", "MIN_WORKER_MB", "available_cpus", "can_fork", "default_workers", "render_all",
           "worker_memory_limit"]
