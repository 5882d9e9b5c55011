"""The samples of one run played by asyncio worker tasks (docs/running.md).

Workers share a deque of the samples still to do (no poison pills); a run-wide token cap or a second
Ctrl-C / SIGTERM cancels the workers' tasks, so nothing can hang waiting for a pill. What the driver
returns is why it stopped; whether the run is complete is decided from the run directory afterwards
(harness/completion.py).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
from collections import deque
from typing import Any

from . import benchmarks
from .cost import attempts_usd, price_or_none
from .panel import RunSpec
from .progress import Progress
from .reservations import Reservations, estimate
from .run_control import RunControl
from .run_options import RunOptions
from .run_result import COMPLETE, COST_CAP, INTERRUPTED, TOKEN_CAP, say
from .writer import RunWriter

#: a benchmark's loaded release and one of its items (harness/benchmarks: whatever its loader returns)
Release = Any
Item = Any


def sample_seed(seed: int, replicate: int, sample_id: str) -> int:
    """Per-sample seed: independent of scheduling, shared across models and conditions."""
    digest = hashlib.sha256(f"sample/{seed}/{replicate}/{sample_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


async def drive(
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
    """Run ``todo`` with worker tasks; returns why they stopped: complete (nothing left to start) /
    interrupted / token_cap / cost_cap.

    The coordinator waits (``asyncio.wait``) only on tasks that are still running and on the abort
    events, so it sleeps until something happens: no CPU is spent while the workers wait for models.
    """
    from .loop import run_sample

    pending = deque(todo)
    abort = asyncio.Event()  # this run only (token cap)
    in_flight: set[str] = set()
    state: dict[str, Any] = {"cap": False, "cost": False, "dropped": 0}
    n_workers = 1 if run.model.backend == "sim" else max(1, opts.workers)
    parts = functools.partial(benchmarks.of_release(release).sample_parts, release)  # (item) -> its parts
    seed, replicate = opts.seed, run.replicate
    cap = opts.max_run_tokens
    stop = ctl.stop
    cost = ctl.cost
    price = price_or_none(run.model)

    token_cap = cfg.caps.max_total_tokens  # what one attempt may spend: the provisional reservation
    tokens = Reservations(cap, spent=writer.state.tokens) if cap else None
    seen_tokens: list[float] = []  # total_tokens of the samples this invocation finished

    def over_cap() -> bool:
        return bool(cap) and writer.state.tokens > cap

    def halted() -> bool:
        return stop.is_set() or abort.is_set() or ctl.abort.is_set()

    async def one(item: Item, tickets: tuple[int | None, int | None]) -> None:
        sid = item.id
        tok_ticket, usd_ticket = tickets
        in_flight.add(sid)
        ctl.in_flight += 1
        try:
            attempts = await run_sample(*parts(item), backend, cfg,
                                        sample_seed(seed, replicate, sid),
                                        first_attempt=writer.state.next_attempt.get(sid, 0))
        except BaseException:
            state["dropped"] += 1  # cancelled or failed: not written, runs again on resume
            release(tickets)
            raise
        finally:
            in_flight.discard(sid)
            ctl.in_flight -= 1
        writer.add(sid, attempts)  # no await between the result and the buffer: never half-added
        n_tokens = sum(int(a.trajectory.get("total_tokens") or 0) for a in attempts)
        seen_tokens.append(n_tokens)
        if tokens is not None:
            tokens.settle(tok_ticket, n_tokens)
        usd = cost.spent(run.model, attempts, usd_ticket) if cost is not None else attempts_usd(price, attempts)
        progress.sample(bool(attempts[-1].trajectory.get("is_correct")), n_tokens, usd)

    def release(tickets: tuple[int | None, int | None]) -> None:
        if tokens is not None:
            tokens.release(tickets[0])
        if cost is not None:
            cost.dropped(tickets[1])

    async def reserve() -> tuple[int | None, int | None] | None:
        """Reservations of the run-wide token cap and of the cost cap for one more sample (None: a cap
        is reached; ``state`` says which)."""
        tok_ticket = usd_ticket = None
        if tokens is not None:
            tok_ticket = await tokens.reserve(lambda: estimate(seen_tokens, token_cap))
            if tok_ticket is None:
                state["cap"] = True
                return None
        if cost is not None:
            usd_ticket = await cost.reserve(run.model, token_cap, cfg.max_attempts)
            if usd_ticket is None:
                release((tok_ticket, None))
                state["cost"] = True
                return None
        return tok_ticket, usd_ticket

    async def worker() -> None:
        while pending and not halted():
            if over_cap():  # resumed samples alone may already exceed the cap
                state["cap"] = True
                abort.set()
                return
            tickets = await reserve()
            if tickets is None:
                return
            if not pending or halted():
                release(tickets)  # reserved while another worker took the last sample or Ctrl-C came
                return
            if ctl.gate is not None:
                async with ctl.gate:
                    if not pending or halted():
                        release(tickets)
                        return
                    await one(pending.popleft(), tickets)
            else:
                await one(pending.popleft(), tickets)
            if over_cap():
                state["cap"] = True
                say(f"{writer.run_id}: run-wide token cap reached ({writer.state.tokens:,} > {cap:,}); "
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
    if not pending and not in_flight and not state["dropped"]:
        return COMPLETE
    if state["cost"] and not stop.is_set() and not ctl.abort.is_set():
        return COST_CAP
    return INTERRUPTED
