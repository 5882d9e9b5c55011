"""``--strict-cost-cap``: when later samples cost far more than the first, the default estimate (a
quantile of the samples seen) lets the spend run past ``--max-cost-usd``; the strict cap, which
reserves every sample's ceiling under its token cap, never does (docs/running.md). What the spend is
comes from the loopback endpoint: the tokens it billed."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from servers.fake_provider import FakeProvider
from servers.sdk_env import isolate

from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
from agenthop.harness.benchmarks.agenthop.loader import load_release
from agenthop.harness.benchmarks.agenthop.model import Release
from agenthop.harness.cost import CostGuard, price_for
from agenthop.harness.panel import ModelSpec, RunSpec
from agenthop.harness.run_identity import RunCaps
from agenthop.harness.runner import COST_CAP, RunOptions, run_model

N_ITEMS = 24
CHEAP, DEAR, COMPLETION = 500, 20_000, 40  # prompt tokens per call of the first conversation / the others
CALLS = 4  # three think calls and the answer
TOKEN_CAP = 85_000  # a dear sample (4 x 20,040 tokens) stays within it
PRICE = price_for("gpt-4.1")


class DearerLater(FakeProvider):
    """The first conversation it sees is billed CHEAP prompt tokens per call, every later one DEAR."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._local = threading.local()
        self._first: str | None = None
        self.billed_usd = 0.0

    def answer(self, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        system, _ = self._system_and_turn(body if isinstance(body, dict) else {})
        with self._lock:
            self._first = self._first if self._first is not None else system
            prompt = CHEAP if system == self._first else DEAR
            assert PRICE is not None
            self.billed_usd += PRICE.usd(prompt, COMPLETION)
        self._local.prompt = prompt
        return super().answer(body, headers)

    def _openai_body(self, text: str, calls: list[tuple[str, str, str]]) -> dict[str, Any]:
        out = super()._openai_body(text, calls)
        prompt = self._local.prompt
        out["usage"] = {"prompt_tokens": prompt, "completion_tokens": COMPLETION, "total_tokens": prompt + COMPLETION}
        return out


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Release:
    root = tmp_path_factory.mktemp("strict") / "bench"
    make_benchmark(root, N_ITEMS, seed=11)
    return load_release(root)


@pytest.fixture()
def release(bench: Release, monkeypatch: pytest.MonkeyPatch) -> Release:
    isolate(monkeypatch)
    return bench


def _opts(cap: float, strict: bool, attempts: int = 1) -> RunOptions:
    return RunOptions(progress=False, workers=8, max_cost_usd=cap, strict_cost_cap=strict,
                      caps=RunCaps(max_total_tokens=TOKEN_CAP),
                      loop_overrides={"error_sleep_cap_s": 0.0, "max_attempts": attempts})


def _gpt(base_url: str) -> RunSpec:
    return RunSpec(ModelSpec(name="m", backend="openai", base_url=base_url, model_id="gpt-4.1"), "full", 0)


def test_later_dearer_samples_pass_the_default_cap_but_not_the_strict_one(release: Release, tmp_path: Path) -> None:
    assert PRICE is not None
    ceiling = PRICE.max_usd(TOKEN_CAP)  # 85,000 tokens at gpt-4.1's dearest rate (output)
    dear_sample = CALLS * PRICE.usd(DEAR, COMPLETION)
    cap = 1.5 * ceiling
    assert cap > 5 * dear_sample  # room for several dear samples, but not for two ceilings

    with DearerLater(latency_s=0.02) as srv:  # the default: after the cheap first sample, 8 start at once
        loose = run_model(_gpt(srv.base_url), release, tmp_path / "loose", _opts(cap, strict=False))
        loose_billed = srv.billed_usd
    assert loose.status == COST_CAP
    assert loose_billed > cap, (loose_billed, cap)  # the estimate was overtaken by the dearer samples

    with DearerLater(latency_s=0.02) as srv:
        strict = run_model(_gpt(srv.base_url), release, tmp_path / "strict", _opts(cap, strict=True))
        strict_billed = srv.billed_usd
    assert strict.status == COST_CAP and strict.n_done >= 2
    assert strict_billed <= cap, (strict_billed, cap)
    assert not (Path(strict.run_dir) / "_SUCCESS").exists()


def test_strict_reserves_the_ceiling_of_every_attempt_and_never_starts_one_alone() -> None:
    assert PRICE is not None
    model = ModelSpec(name="m", backend="openai", model_id="gpt-4.1")
    loose, strict = CostGuard(1.0), CostGuard(1.0, strict=True)
    assert loose.reservation(model, TOKEN_CAP) == (PRICE.max_usd(TOKEN_CAP), True)
    assert strict.reservation(model, TOKEN_CAP, attempts=3) == (3 * PRICE.max_usd(TOKEN_CAP), False)
    # figures of finished samples lower the default reservation, never the strict one
    loose._seen["m"] = [0.001]
    strict._seen["m"] = [0.001]
    assert loose.reservation(model, TOKEN_CAP) == (0.001, False)
    assert strict.reservation(model, TOKEN_CAP)[0] == PRICE.max_usd(TOKEN_CAP)


def test_a_strict_cap_below_one_ceiling_starts_nothing_and_says_why(release: Release, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert PRICE is not None
    with DearerLater() as srv:
        res = run_model(_gpt(srv.base_url), release, tmp_path, _opts(0.5 * PRICE.max_usd(TOKEN_CAP), strict=True))
        assert srv.n_requests == 0
    assert res.status == COST_CAP and res.n_done == 0
    err = capsys.readouterr().err
    assert "--strict-cost-cap: one more sample may cost up to $0.6800 (1 attempt(s) of 85,000 tokens" in err


def test_strict_cost_cap_needs_a_cost_cap(tmp_path: Path) -> None:
    from agenthop.harness.cli import main

    res = CliRunner().invoke(main, ["run", "--data", str(tmp_path), "--model", "verifier", "--strict-cost-cap"])
    assert res.exit_code == 2 and "--strict-cost-cap needs --max-cost-usd USD" in res.output
