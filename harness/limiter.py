"""One rate limiter per endpoint, shared by every worker that calls it (docs/backends.md).

An :class:`EndpointLimiter` holds back model calls so that an endpoint's limits are kept instead of
discovered through 429s:

- ``rpm``: requests per minute, a token bucket with one second of burst (rpm/60 requests);
- ``tpm``: tokens per minute, charged after each call with the tokens it reported (the bucket may go
  into debt; the next call waits until it is paid back);
- concurrency: at most ``window`` calls in flight, AIMD: the window grows by 1/window after each
  successful call (additive increase, up to ``max_concurrency``) and halves after a rate limit (429)
  of a call started since the last decrease (multiplicative decrease, down to 1);
- a 429 that names a delay pauses the whole endpoint until then, so one worker's 429 keeps the others
  from walking into the same limit.

:class:`LimitedBackend` wraps any backend (``start(ctx)`` -> conversation) so that each
``complete()`` goes through the limiter; the seconds a conversation spent waiting for it are in
``conversation.waited_s`` (the loop adds them to the trajectory's ``wait_s``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .backends.base import ModelResponse, SampleContext, ToolCall, TransientBackendError


@dataclass(frozen=True)
class LimitSettings:
    """Limits of one endpoint (None: no limit of that kind)."""

    rpm: float | None = None
    tpm: float | None = None


class EndpointLimiter:
    def __init__(self, *, rpm: float | None = None, tpm: float | None = None, max_concurrency: int = 4,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rpm = rpm if rpm else None
        self.tpm = tpm if tpm else None
        self.max_concurrency = max(1, int(max_concurrency))
        self.window = float(self.max_concurrency)
        self.in_flight = 0
        self._clock = clock
        now = clock()
        self._req_rate = self.rpm / 60.0 if self.rpm else 0.0
        self._req_cap = max(1.0, self._req_rate)
        self._req = self._req_cap
        self._tok_rate = self.tpm / 60.0 if self.tpm else 0.0
        self._tok = self._tok_rate  # one second's worth to start with
        self._t = now
        self._paused_until = now
        self._last_decrease = now - 1e9
        self._cond: asyncio.Condition | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: statistics
        self.n_calls = 0
        self.n_rate_limited = 0
        self.n_decreases = 0
        self.waited_s = 0.0

    def grow_to(self, max_concurrency: int) -> None:
        """Raise the concurrency ceiling (another run now shares this endpoint)."""
        self.max_concurrency = max(self.max_concurrency, int(max_concurrency))

    # -- internals -------------------------------------------------------------------------
    def _condition(self) -> asyncio.Condition:
        loop = asyncio.get_running_loop()
        if self._cond is None or self._loop is not loop:
            self._cond = asyncio.Condition()
            self._loop = loop
        return self._cond

    def _refill(self, now: float) -> None:
        dt = max(0.0, now - self._t)
        self._t = now
        if self._req_rate:
            self._req = min(self._req_cap, self._req + dt * self._req_rate)
        if self._tok_rate:
            self._tok = min(self._tok_rate, self._tok + dt * self._tok_rate)

    def _delay(self, now: float) -> float:
        """Seconds until a call may start (0: now), ignoring the concurrency window."""
        waits = [self._paused_until - now]
        if self._req_rate and self._req < 1.0:
            waits.append((1.0 - self._req) / self._req_rate)
        if self._tok_rate and self._tok < 0.0:
            waits.append(-self._tok / self._tok_rate)
        return max(0.0, *waits)

    # -- API ---------------------------------------------------------------------------------
    async def acquire(self) -> tuple[float, float]:
        """Wait until a call may start; returns (seconds waited, start time) for :meth:`release`."""
        cond = self._condition()
        t0 = self._clock()
        async with cond:
            while True:
                if self.in_flight < max(1, int(self.window)):
                    now = self._clock()
                    self._refill(now)
                    delay = self._delay(now)
                    if delay <= 0:
                        break
                    try:  # sleep outside the window check, but wake early on a release
                        await asyncio.wait_for(cond.wait(), timeout=delay)
                    except asyncio.TimeoutError:
                        pass
                else:
                    await cond.wait()
            if self._req_rate:
                self._req -= 1.0
            self.in_flight += 1
            self.n_calls += 1
        start = self._clock()
        waited = start - t0
        self.waited_s += waited
        return waited, start

    async def release(self, started: float, *, tokens: int = 0, rate_limited: bool = False,
                      retry_after: float | None = None, success: bool = True) -> None:
        """A call that began at ``started`` ended: answered (``success``), rate limited (a 429), or
        failed otherwise (neither: the window stays as it is)."""
        cond = self._condition()
        async with cond:
            self.in_flight = max(0, self.in_flight - 1)
            now = self._clock()
            self._refill(now)
            if self._tok_rate and tokens:
                self._tok -= tokens
            if rate_limited:
                self.n_rate_limited += 1
                if started > self._last_decrease:  # one decrease per round of calls that saw the limit
                    self.window = max(1.0, self.window / 2.0)
                    self._last_decrease = now
                    self.n_decreases += 1
                if retry_after:
                    self._paused_until = max(self._paused_until, now + retry_after)
            elif success:
                self.window = min(float(self.max_concurrency), self.window + 1.0 / max(1.0, self.window))
            cond.notify_all()


def endpoint_key(backend: str, base_url: str | None, key_env: str | None) -> tuple[str, str, str]:
    """Runs with the same key have one limiter (never written: the base URL is part of the key)."""
    return (backend, base_url or "", key_env or "")


class LimitedConversation:
    """A conversation whose ``complete()`` calls go through an endpoint limiter."""

    def __init__(self, inner: Any, limiter: EndpointLimiter) -> None:
        self._inner = inner
        self._limiter = limiter
        self.waited_s = 0.0

    async def complete(self) -> ModelResponse:
        limiter = self._limiter
        waited, started = await limiter.acquire()
        self.waited_s += waited
        try:
            resp = await self._inner.complete()
        except TransientBackendError as exc:
            await limiter.release(started, rate_limited=exc.rate_limited, retry_after=exc.retry_after,
                                  success=False)
            raise
        except BaseException:
            await asyncio.shield(limiter.release(started, success=False))
            raise
        await limiter.release(started, tokens=resp.prompt_tokens + resp.completion_tokens + resp.cache_read_tokens
                              + resp.cache_creation_tokens)
        return resp

    def add_assistant(self, response: ModelResponse) -> None:
        self._inner.add_assistant(response)

    def add_tool_results(self, results: list[tuple[ToolCall, str]]) -> None:
        self._inner.add_tool_results(results)

    def add_user(self, text: str) -> None:
        self._inner.add_user(text)

    def transcript(self) -> list[dict[str, Any]]:
        return self._inner.transcript()


class LimitedBackend:
    """``backend`` with every conversation's model calls behind ``limiter``."""

    def __init__(self, backend: Any, limiter: EndpointLimiter) -> None:
        self.backend = backend
        self.limiter = limiter
        self.name = backend.name

    def start(self, ctx: SampleContext) -> LimitedConversation:
        return LimitedConversation(self.backend.start(ctx), self.limiter)

    def __getattr__(self, name: str) -> Any:  # config(), secrets(), aclose() of the wrapped backend
        return getattr(self.backend, name)
