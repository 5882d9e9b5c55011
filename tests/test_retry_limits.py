"""Retry delays (pure functions) and the endpoint limiter (token buckets, pause after 429, AIMD)."""

from __future__ import annotations

import asyncio
import random

import pytest

from agenthop.harness.backends.retry import (
    MAX_SERVER_DELAY_S,
    backoff_delay,
    delay_from_headers,
    parse_duration,
)
from agenthop.harness.limiter import EndpointLimiter


@pytest.mark.parametrize("text,seconds", [
    ("2", 2.0), ("1.5s", 1.5), ("20ms", 0.02), ("6m0s", 360.0), ("1h2m3.5s", 3723.5), (".5s", 0.5),
    (" 3s ", 3.0), (7, 7.0), ("soon", None), ("", None), ("5x", None), ("s", None), (True, None), (None, None),
])
def test_parse_duration(text: object, seconds: float | None) -> None:
    assert parse_duration(text) == seconds


NOW = 1_445_412_470.0  # 2015-10-21T07:27:50Z


@pytest.mark.parametrize("headers,seconds", [
    ({"Retry-After": "0"}, 0.0),
    ({"retry-after-ms": "120", "retry-after": "1"}, 0.12),  # the finer one wins
    ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 10.0),
    ({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s",
      "x-ratelimit-remaining-requests": "0", "x-ratelimit-remaining-tokens": "900"}, 1.0),  # the exhausted one
    ({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "250ms"}, 1.0),  # none exhausted: longest
    ({"anthropic-ratelimit-tokens-reset": "2015-10-21T07:28:05Z", "anthropic-ratelimit-tokens-remaining": "0",
      "anthropic-ratelimit-requests-reset": "2015-10-21T07:28:20Z"}, 15.0),
    ({"retry-after": "garbage"}, None),
    ({"content-type": "application/json"}, None),
    ({}, None),
])
def test_delay_from_headers(headers: dict[str, str], seconds: float | None) -> None:
    got = delay_from_headers(headers, now=NOW)
    assert got == (pytest.approx(seconds) if seconds is not None else None)


def test_backoff_honours_the_server_capped_else_full_jitter() -> None:
    assert backoff_delay(3, 0.25) == 0.25
    assert backoff_delay(1, 0.0) == 0.0
    assert backoff_delay(1, 10_000.0) == MAX_SERVER_DELAY_S
    rng = random.Random(1)
    draws = [[backoff_delay(k, None, rng=rng.random) for _ in range(200)] for k in (1, 2, 3, 8)]
    for bound, ds in zip((1.0, 2.0, 4.0, 60.0), draws):
        assert all(0.0 <= d <= bound for d in ds) and max(ds) > bound * 0.8  # full jitter: the whole range
    assert backoff_delay(1, None, rng=lambda: 1.0) == 1.0 and backoff_delay(40, None, rng=lambda: 1.0) == 60.0


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_request_bucket_spaces_calls_after_one_second_of_burst() -> None:
    clock = Clock()
    lim = EndpointLimiter(rpm=120, max_concurrency=50, clock=clock)  # 2 per second, burst 2

    async def go() -> list[float]:
        out = []
        for _ in range(2):
            waited, started = await lim.acquire()
            out.append(waited)
            await lim.release(started)
        return out

    assert asyncio.run(go()) == [0.0, 0.0]
    assert lim._delay(clock()) == pytest.approx(0.5)  # the third call waits for half a second's refill
    clock.t += 0.5
    lim._refill(clock())
    assert lim._delay(clock()) == pytest.approx(0.0)


def test_token_bucket_is_charged_after_the_call_and_may_go_into_debt() -> None:
    clock = Clock()
    lim = EndpointLimiter(tpm=6000, max_concurrency=4, clock=clock)  # 100 tokens per second

    async def go() -> None:
        _, started = await lim.acquire()
        await lim.release(started, tokens=400)

    asyncio.run(go())
    assert lim._delay(clock()) == pytest.approx(3.0)  # 300 tokens of debt at 100/s


def test_a_429_pauses_the_endpoint_and_halves_the_window_once_per_round() -> None:
    clock = Clock()
    lim = EndpointLimiter(max_concurrency=8, clock=clock)

    async def go() -> None:
        tickets = [await lim.acquire() for _ in range(4)]
        assert lim.in_flight == 4
        for _, started in tickets[:3]:  # three calls of the same round see the limit: one decrease
            await lim.release(started, rate_limited=True, retry_after=5.0, success=False)
        assert lim.window == 4.0 and lim.n_decreases == 1 and lim.n_rate_limited == 3
        assert lim._delay(clock()) == pytest.approx(5.0)
        clock.t += 1.0
        _, later = tickets[3]
        await lim.release(later)  # a success: additive increase of 1/window
        assert lim.window == pytest.approx(4.25)
        clock.t += 5.0
        _, started = await lim.acquire()  # a call started after the decrease: the next 429 halves again
        await lim.release(started, rate_limited=True, retry_after=None, success=False)
        assert lim.window == pytest.approx(2.125) and lim.n_decreases == 2
        for _ in range(200):
            _, started = await lim.acquire()
            await lim.release(started)
        assert lim.window == 8.0  # grows back to the ceiling, never above

    asyncio.run(go())


def test_the_window_bounds_calls_in_flight() -> None:
    lim = EndpointLimiter(max_concurrency=2)
    peak = 0

    async def call() -> None:
        nonlocal peak
        _, started = await lim.acquire()
        peak = max(peak, lim.in_flight)
        await asyncio.sleep(0)
        await lim.release(started)

    async def go() -> None:
        await asyncio.gather(*(call() for _ in range(10)))

    asyncio.run(go())
    assert peak == 2 and lim.in_flight == 0 and lim.n_calls == 10
