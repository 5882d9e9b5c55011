"""Real-backend runs through the runner against loopback providers: keys stay home, faults stay in
their sample, rate limits, concurrent panels, compaction (docs/backends.md, docs/running.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from servers.fake_provider import FakeProvider
from servers.sdk_env import FAKE_KEY, isolate

from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
from agenthop.harness.benchmarks.agenthop.loader import load_release
from agenthop.harness.benchmarks.agenthop.model import Release
from agenthop.harness.errors import AgentHopError
from agenthop.harness.panel import ModelSpec, RunSpec
from agenthop.harness.runner import COMPLETE, RunOptions, run_model
from run_files import written_bytes

N_ITEMS = 12
#: no waiting between error turns and attempts (the policy's numbers are tested in test_loop_rules)
FAST = {"error_sleep_cap_s": 0.0, "sample_retry_waits": (0.0,)}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch)


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    root = tmp_path_factory.mktemp("real") / "bench"
    make_benchmark(root, N_ITEMS, seed=5)
    return load_release(root)


def opts(**kw: Any) -> RunOptions:
    base: dict[str, Any] = {"progress": False, "workers": 4, "loop_overrides": FAST}
    base.update(kw)
    return RunOptions(**base)


def spec(name: str, backend: str, base_url: str | None, **kw: Any) -> RunSpec:
    return RunSpec(ModelSpec(name=name, backend=backend, base_url=base_url, **kw), "full", 0)



def table(run_dir: Path, name: str) -> list[dict[str, Any]]:
    return pq.ParquetDataset(sorted(run_dir.glob(f"{name}-*.parquet"))).read().to_pylist()


# --------------------------------------------------------------------------------------------- keys
@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_explicit_base_url_never_receives_the_default_key(backend: str, release: Release, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-secret-org")
    with FakeProvider(backend) as srv:
        res = run_model(spec("m", backend, srv.base_url), release, tmp_path, opts(), limit=3)
    assert res.status == COMPLETE and res.n_done == 3
    assert srv.n_requests == 3 * 4
    sent = json.dumps(srv.headers)
    assert FAKE_KEY not in sent and "org-secret-org" not in sent
    auth = {h.get("authorization") or h.get("x-api-key") for h in srv.headers}
    assert auth in ({"Bearer EMPTY"}, {"EMPTY"})


@pytest.mark.parametrize("backend,var", [("openai", "OPENAI_BASE_URL"), ("anthropic", "ANTHROPIC_BASE_URL")])
def test_sdk_endpoint_variables_are_refused(backend: str, var: str, release: Release, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(var, "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    with pytest.raises(AgentHopError, match=f"{var} is set"):
        run_model(spec("m", backend, None), release, tmp_path, opts(), limit=1)
    assert not any(tmp_path.iterdir())  # refused before touching the disk


def test_custom_header_variables_are_refused_for_an_explicit_base_url(release: Release, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_CUSTOM_HEADERS", "Authorization: Bearer sk-live")
    with pytest.raises(AgentHopError, match="OPENAI_CUSTOM_HEADERS is set"):
        run_model(spec("m", "openai", "http://127.0.0.1:9/v1"), release, tmp_path, opts(), limit=1)


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_a_key_echoed_in_content_is_written_nowhere(backend: str, release: Release, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_PROVIDER_KEY", FAKE_KEY)
    with FakeProvider(backend, fault=lambda system: "echo") as srv:
        res = run_model(spec("m", backend, srv.base_url, api_key_env="MY_PROVIDER_KEY"), release, tmp_path,
                        opts(), limit=3)
        host = srv.base_url.split("//", 1)[1].split("/", 1)[0]
    assert res.status == COMPLETE and res.n_done == 3
    sent = {h.get("authorization") or h.get("x-api-key") for h in srv.headers}
    assert sent in ({f"Bearer {FAKE_KEY}"}, {FAKE_KEY})  # the named key went to its endpoint ...
    data = written_bytes(tmp_path)
    assert FAKE_KEY.encode() not in data and host.encode() not in data  # ... and was written nowhere
    run_dir = Path(res.run_dir)
    assert any("[redacted]" in (m["content"] or "") for m in table(run_dir, "messages"))
    assert all("[redacted]" in r["reasoning"] for r in table(run_dir, "trajectories"))


# --------------------------------------------------------------------------------------------- faults
@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_faults_stay_in_their_sample(backend: str, release: Release, tmp_path: Path,
                                     capfd: pytest.CaptureFixture[str]) -> None:
    items = release.items[:8]
    kinds = {items[1].question: "surrogate", items[3].question: "html", items[4].question: "truncated",
             items[6].question: "empty"}
    by_sample = {it.id: kinds.get(it.question) for it in items}

    def fault(system: str) -> str | None:
        return next((k for q, k in kinds.items() if q in system), None)

    with FakeProvider(backend, fault=fault) as srv:
        res = run_model(spec("m", backend, srv.base_url), release, tmp_path, opts(), limit=8)
    assert res.status == COMPLETE and res.n_done == 8
    run_dir = Path(res.run_dir)
    assert (run_dir / "_SUCCESS").exists()
    trajs = table(run_dir, "trajectories")
    finals = {t["sample_id"]: t for t in trajs if t["is_final"]}
    assert len(finals) == 8
    for sid, kind in by_sample.items():
        t = finals[sid]
        attempts = sorted(x["attempt"] for x in trajs if x["sample_id"] == sid)
        if kind in ("html", "truncated", "empty"):  # the fault repeats on every retry
            assert (t["terminated_by"], attempts, t["api_error_count"]) == ("error", [0, 1, 2], 5)
        else:
            assert t["terminated_by"] == "answer" and attempts == [0]
            # every turn's text has one lone surrogate, every think argument (openai) one more
            assert t["repaired_chars"] == (0 if kind is None else (7 if backend == "openai" else 4))
    errors = [r for r in table(run_dir, "turns") if r["role"] == "error"]
    assert len(errors) == 3 * 3 * 5
    surrogate_sid = items[1].id
    msgs = [m["content"] or "" for m in table(run_dir, "messages") if m["sample_id"] == surrogate_sid]
    assert any("thinking \ufffd hard" in m for m in msgs)
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err + captured.out


# --------------------------------------------------------------------------------------------- concurrency
class Meter:
    """Requests in flight over several loopback providers (a shared high-water mark)."""

    def __init__(self) -> None:
        import threading

        self.lock = threading.Lock()
        self.now = self.peak = 0

    def wrap(self, srv: FakeProvider) -> FakeProvider:
        inner = srv.answer

        def answer(body: Any, headers: dict[str, str]) -> Any:
            with self.lock:
                self.now += 1
                self.peak = max(self.peak, self.now)
            try:
                return inner(body, headers)
            finally:
                with self.lock:
                    self.now -= 1

        srv.answer = answer  # type: ignore[method-assign]
        return srv


@pytest.mark.parametrize("max_concurrency,peak", [(0, 3), (2, 2)])
def test_real_runs_of_a_panel_run_at_the_same_time(max_concurrency: int, peak: int, release: Release,
                                                   tmp_path: Path) -> None:
    from agenthop.harness.runner import run_panel

    meter = Meter()
    with FakeProvider(latency_s=0.15) as a, FakeProvider(latency_s=0.15) as b, \
            FakeProvider("anthropic", latency_s=0.15) as c:
        for srv in (a, b, c):
            meter.wrap(srv)
        runs = [spec("model-a", "openai", a.base_url), spec("model-b", "openai", b.base_url),
                spec("model-c", "anthropic", c.base_url)]
        results = run_panel(runs, release, tmp_path, opts(workers=1, limit=2, max_concurrency=max_concurrency))
    assert [r.status for r in results] == [COMPLETE] * 3 and all(r.n_done == 2 for r in results)
    assert meter.peak == peak  # one worker each: overlap only when the runs run together


def test_the_coordinator_sleeps_while_workers_wait(release: Release, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from agenthop.harness import sample_driver

    calls = 0
    real_wait = asyncio.wait

    async def counting_wait(*args: Any, **kw: Any) -> Any:
        nonlocal calls
        calls += 1
        return await real_wait(*args, **kw)

    monkeypatch.setattr(sample_driver.asyncio, "wait", counting_wait)
    with FakeProvider(latency_s=0.1) as srv:
        res = run_model(spec("m", "openai", srv.base_url), release, tmp_path, opts(workers=2), limit=2)
    assert res.status == COMPLETE
    assert calls <= 4  # woken once per finished worker (a busy loop waits thousands of times)


def test_max_cost_stops_before_the_estimate_passes_it_and_resume_continues(release: Release,
                                                                           tmp_path: Path) -> None:
    from agenthop.harness.cost import price_for
    from agenthop.harness.runner import COST_CAP

    price = price_for("gpt-4.1")
    assert price is not None
    per_sample = 4 * price.usd(500, 40)  # the loopback agent: four calls of 500 + 40 tokens
    cap = 3.2 * per_sample
    with FakeProvider() as srv:
        run = spec("m", "openai", srv.base_url, model_id="gpt-4.1")
        first = run_model(run, release, tmp_path, opts(workers=1, max_cost_usd=cap))
        again = run_model(run, release, tmp_path, opts(workers=1, max_cost_usd=cap))
    assert (first.status, first.n_done, first.n_new) == (COST_CAP, 3, 3)
    assert (again.status, again.n_done, again.n_new) == (COST_CAP, 6, 3)
    assert not (Path(first.run_dir) / "_SUCCESS").exists()


# --------------------------------------------------------------------------------------------- rate limits
def test_a_rate_limited_endpoint_is_retried_as_the_server_asks_and_waits_are_recorded(
        release: Release, tmp_path: Path) -> None:
    with FakeProvider(rpm=300) as srv:  # 5 requests per second, burst 5: the 8 workers meet 429s
        res = run_model(spec("m", "openai", srv.base_url), release, tmp_path, opts(workers=8), limit=6)
        n_429 = srv.n_429
    assert res.status == COMPLETE and res.n_done == 6
    trajs = table(Path(res.run_dir), "trajectories")
    assert all(t["terminated_by"] == "answer" and t["attempt"] == 0 for t in trajs)  # no attempt was lost
    assert n_429 > 0 and sum(t["transient_retry_count"] for t in trajs) == n_429
    assert sum(t["wait_s"] for t in trajs) > 0 and all(t["wait_s"] >= 0 for t in trajs)


def test_panel_rpm_and_tpm(tmp_path: Path) -> None:
    from agenthop.harness.panel import load_panel
    from agenthop.harness.runner import endpoint_limiters

    p = tmp_path / "p.yaml"
    p.write_text("defaults: {backend: openai, base_url: 'http://127.0.0.1:1/v1'}\nmodels:\n"
                 "  - {name: a, rpm: 500, tpm: 100000}\n  - {name: b, rpm: 300}\n"
                 "  - {name: c, base_url: 'http://127.0.0.1:2/v1'}\n")
    models = load_panel(p).models
    assert [(m.rpm, m.tpm) for m in models] == [(500.0, 100000.0), (300.0, None), (None, None)]
    runs = [RunSpec(m, "full", 0) for m in models]
    la, lb, lc = endpoint_limiters(runs, workers=4)
    assert la is lb and la is not lc  # one limiter per endpoint, shared by its runs
    assert (la.rpm, la.tpm, la.max_concurrency, lc.rpm, lc.max_concurrency) == (300.0, 100000.0, 8, None, 4)
    p.write_text("models:\n  - {name: a, backend: openai, rpm: fast}\n")
    with pytest.raises(AgentHopError, match=r"p.yaml:2: models\[0\] \(a\).rpm: must be a positive number"):
        load_panel(p)


def test_progress_line_tail_and_the_writers_last_guard(tmp_path: Path) -> None:
    from agenthop.harness.runner import progress_postfix
    from agenthop.harness.writer import RunWriter

    assert progress_postfix(4, 3, 12_345, 0.5) == "acc=0.750 tok=12.35k ~$0.50"
    assert progress_postfix(0, 0, 0, 0.0) == "acc=- tok=0"  # simulated runs show no dollars

    class Attempt:
        trajectory = {"sample_id": "s1", "attempt": 0, "is_final": True, "predicted_answer": "A\ud800",
                      "predicted_index": 0, "is_correct": True, "terminated_by": "answer", "total_turns": 1,
                      "budget_used": 0, "total_prompt_tokens": 1, "total_completion_tokens": 1,
                      "cache_read_tokens": 0, "cache_creation_tokens": 0, "total_tokens": 2, "tool_errors": 0,
                      "api_error_count": 0, "transient_retry_count": 0, "wall_time_s": 0.1,
                      "reasoning": f"key {FAKE_KEY}"}
        turns: list[dict[str, Any]] = []
        tool_calls: list[dict[str, Any]] = []
        messages = [{"sample_id": "s1", "attempt": 0, "idx": 0, "role": "assistant", "name": None,
                     "tool_call_id": None, "content": f"\udc00 {FAKE_KEY}"}]

    from agenthop.harness.runner import run_meta

    meta = run_meta(spec("m", "openai", "http://127.0.0.1:1/v1"), RunOptions(), "abc", "m__full__r0__00000000")
    w = RunWriter(tmp_path, meta, secrets=[FAKE_KEY], repair_text=True)
    w.begin()
    w.add("s1", [Attempt()])
    w.close(complete=True)
    run_dir = tmp_path / "m__full__r0__00000000"
    (traj,) = table(run_dir, "trajectories")
    (msg,) = table(run_dir, "messages")
    assert (traj["predicted_answer"], traj["reasoning"], msg["content"]) == (
        "A\ufffd", "key [redacted]", "\ufffd [redacted]")
