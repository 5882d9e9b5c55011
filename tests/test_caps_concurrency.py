"""``--max-cost-usd`` and ``--max-run-tokens`` hold whatever ``--workers``: each sample in flight reserves
what it may spend before it starts, so what the endpoint really served (counted by the loopback server)
stays within the cap plus one sample's cost (docs/running.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from servers.fake_provider import FakeProvider
from servers.sdk_env import isolate

from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
from agenthop.harness.benchmarks.agenthop.loader import load_release
from agenthop.harness.benchmarks.agenthop.model import Release
from agenthop.harness.cost import price_for
from agenthop.harness.panel import ModelSpec, RunSpec
from agenthop.harness.reservations import Reservations, estimate, high_quantile
from agenthop.harness.runner import COMPLETE, COST_CAP, TOKEN_CAP, RunOptions, run_model

N_ITEMS = 16
#: the loopback agent: four calls of 500 prompt + 40 completion tokens per sample
CALLS, PROMPT, COMPLETION = 4, 500, 40
SAMPLE_TOKENS = CALLS * (PROMPT + COMPLETION)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Release:
    root = tmp_path_factory.mktemp("caps") / "bench"
    make_benchmark(root, N_ITEMS, seed=8)
    return load_release(root)


@pytest.fixture()
def release(bench: Release, monkeypatch: pytest.MonkeyPatch) -> Release:
    """The release, with no provider key or proxy of the environment in reach."""
    isolate(monkeypatch)
    return bench


def opts(**caps: Any) -> RunOptions:
    return RunOptions(progress=False, loop_overrides={"error_sleep_cap_s": 0.0}, **caps)


def gpt(base_url: str) -> RunSpec:
    return RunSpec(ModelSpec(name="m", backend="openai", base_url=base_url, model_id="gpt-4.1"), "full", 0)


@pytest.mark.parametrize("workers", [1, 8])
def test_the_cost_cap_holds_with_many_workers(release: Release, tmp_path: Path, workers: int) -> None:
    price = price_for("gpt-4.1")
    assert price is not None
    per_sample = CALLS * price.usd(PROMPT, COMPLETION)
    cap = 2.5 * per_sample
    with FakeProvider(latency_s=0.05) as srv:
        res = run_model(gpt(srv.base_url), release, tmp_path, opts(workers=workers, max_cost_usd=cap))
        served = srv.n_requests * price.usd(PROMPT, COMPLETION)  # what the endpoint billed
    assert res.status == COST_CAP and res.n_done >= 1
    assert served <= cap + per_sample + 1e-12, (served, cap)
    assert not (Path(res.run_dir) / "_SUCCESS").exists()


@pytest.mark.parametrize("workers", [1, 8])
def test_the_run_wide_token_cap_holds_with_many_workers(release: Release, tmp_path: Path, workers: int) -> None:
    cap = int(2.5 * SAMPLE_TOKENS)
    with FakeProvider(latency_s=0.05) as srv:
        res = run_model(gpt(srv.base_url), release, tmp_path, opts(workers=workers, max_run_tokens=cap))
        served = srv.n_requests * (PROMPT + COMPLETION)
    assert res.status == TOKEN_CAP and res.n_done >= 1
    assert served <= cap + SAMPLE_TOKENS, (served, cap)
    assert res.tokens <= cap


def test_caps_far_above_the_spend_do_not_slow_a_run_down(release: Release, tmp_path: Path) -> None:
    """Once a sample has finished, reservations are the samples' own figures: all workers run."""
    with FakeProvider(latency_s=0.05) as srv:
        res = run_model(gpt(srv.base_url), release, tmp_path,
                        opts(workers=4, max_cost_usd=100.0, max_run_tokens=10**9))
    assert res.status == COMPLETE and res.n_done == N_ITEMS


def test_reservations_by_hand() -> None:
    assert high_quantile([5.0, 1.0, 3.0]) == 5.0  # fewer than 20 values: the largest
    assert high_quantile([float(i) for i in range(1, 101)]) == 95.0
    assert estimate([], 7.0) == (7.0, True) and estimate([2.0, 4.0], 7.0) == (4.0, False)

    async def scenario() -> None:
        budget = Reservations(10.0)
        a = budget.try_reserve(20.0, provisional=True)  # no figures yet: one may start alone
        assert a is not None and budget.try_reserve(20.0, provisional=True) is None
        budget.settle(a, 3.0)
        b, c = budget.try_reserve(3.0), budget.try_reserve(3.0)
        assert b is not None and c is not None and budget.try_reserve(3.0) is None  # 3 + 6 + 3 > 10
        waiter = asyncio.create_task(budget.reserve(lambda: (3.0, False)))
        await asyncio.sleep(0)
        assert not waiter.done()  # waits for the samples in flight
        budget.settle(b, 3.0)  # 6 spent + 3 held + 3 > 10: still waiting
        await asyncio.sleep(0)
        assert not waiter.done()
        budget.release(c)  # c was cancelled: 6 + 0 + 3 <= 10
        d = await waiter
        assert d is not None
        budget.settle(d, 0.0)
        assert budget.spent == 6.0
        # with figures and nothing in flight, a sample the cap cannot pay for is refused: the cap is reached
        assert await budget.reserve(lambda: (5.0, False)) is None

    asyncio.run(scenario())
