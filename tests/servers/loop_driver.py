"""Drive a real backend through the real loop in tests: run coroutines and close the SDK clients on
the same event loop, a no-op sleep that records the waits asked for, a whole-sample runner, and the
conversations and error scripts the backend tests share."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from agenthop.harness.backends.base import BackendError, ModelResponse, TransientBackendError

from . import tiny_sample
from .sdk_env import FAKE_KEY

BUDGET_NOTICE = "Budget exhausted. You MUST call submit_answer now with your best guess."


def run(coro: Any, *closing: Any) -> Any:
    """Run ``coro``, then close the backends' SDK clients on the same event loop."""

    async def go() -> Any:
        try:
            return await coro
        finally:
            for backend in closing:
                await backend.aclose()

    return asyncio.run(go())


class Waits:
    """A no-op ``sleep`` that remembers what the loop asked for."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)


def run_loop(backend: Any, waits: Waits, caps: Any = None, **cfg: Any) -> list[Any]:
    """run_sample on the tiny hand-built sample with ``backend``; returns its AttemptResults."""
    from agenthop.harness.loop import Caps, LoopConfig, run_sample

    config = LoopConfig(caps=caps or Caps(), sleep=waits, record_messages=True, **cfg)
    return run(run_sample(tiny_sample.item(), tiny_sample.graph(), tiny_sample.papers(), tiny_sample.labels(),
                          backend, config, seed=0), backend)


def all_text(results: list[Any]) -> str:
    """Every field of every result as one JSON string (for secret greps)."""
    return json.dumps([dataclasses.asdict(r) for r in results], default=str)


async def three_turns(conv: Any, first_results: list[str], nudge: str) -> list[Any]:
    """Turn 1, its tool calls answered with ``first_results`` (in call order), the budget notice;
    turn 2, ``nudge``; turn 3. Turns 1 and 2 are added back to ``conv``; returns the three responses."""
    r1 = await conv.complete()
    conv.add_assistant(r1)
    conv.add_tool_results([(r1.tool_calls[i], text) for i, text in enumerate(first_results)])
    conv.add_user(BUDGET_NOTICE)
    r2 = await conv.complete()
    conv.add_assistant(r2)
    conv.add_user(nudge)
    return [r1, r2, await conv.complete()]


async def refused_resend(backend: Any, doctor: Callable[[Any], Any], result: str) -> BackendError:
    """One turn on the tiny sample's context; its answer added back with ``doctor(raw)`` as the payload
    re-sent and ``result`` for its first call. The next call must fail with a final (non-transient)
    error, which is returned; the backend is closed."""
    conv = backend.start(tiny_sample.context())
    r1 = await conv.complete()
    conv.add_assistant(ModelResponse(r1.text, r1.tool_calls, 0, 0, raw=doctor(r1.raw)))
    conv.add_tool_results([(r1.tool_calls[0], result)])
    try:
        with pytest.raises(BackendError) as info:
            await conv.complete()
    finally:
        await backend.aclose()
    assert not isinstance(info.value, TransientBackendError)
    return info.value


@dataclasses.dataclass
class ServedRun:
    """One sample run through the loop against a loopback server: its results, the waits the loop
    asked for, and the requests the server received on its port."""

    results: list[Any]
    waits: Waits
    requests: list[Any]
    port: int


def run_served(server: Any, backend_for: Callable[[str], Any]) -> ServedRun:
    """run_loop with ``backend_for(base_url)`` while ``server`` serves; the server refused no request."""
    waits = Waits()
    with server as srv:
        results = run_loop(backend_for(srv.base_url), waits)
        requests, port, refused = srv.requests, srv.port, srv.refused
    assert refused == []
    return ServedRun(results, waits, requests, port)


def check_error_recovery(run: ServedRun, hinted_wait: float) -> Any:
    """What every backend shows for the five-reply script: tool calls; a 429 whose wait the server names
    (``hinted_wait`` seconds); a 5xx without a hint; a 400; the answer. Returns the one result."""
    assert len(run.requests) == 5
    (r,) = run.results
    t = r.trajectory
    assert (t["terminated_by"], t["is_correct"], t["total_turns"], t["transient_retry_count"],
            t["api_error_count"], t["budget_used"]) == ("answer", True, 3, 2, 1, 6)
    # the 429 waits as asked; the 5xx (no hint) a jittered backoff; the 400 the error-turn wait
    assert run.waits.asked[0] == hinted_wait and 0 <= run.waits.asked[1] <= 2.0 and run.waits.asked[2:] == [2.0]
    # the transient retries re-sent the same request
    assert run.requests[1].body == run.requests[2].body == run.requests[3].body
    dump = all_text(run.results)
    assert FAKE_KEY not in dump and f"127.0.0.1:{run.port}" not in dump
    return r
