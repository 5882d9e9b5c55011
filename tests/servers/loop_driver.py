"""Drive a real backend through the real loop in tests: run coroutines and close the SDK clients on
the same event loop, a no-op sleep that records the waits asked for, and a whole-sample runner."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

from . import tiny_sample


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
