"""A hung endpoint costs a sample minutes, not hours: ``--request-timeout`` bounds one model call and
``--max-sample-seconds`` the whole sample, which then ends as ``terminated_by = 'time_limit'``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from servers.fake_provider import FakeProvider
from servers.loop_driver import Waits, run_loop
from servers.openai_server import OpenAIServer, completion, tool_call
from servers.scripted_http import Reply
from servers.sdk_env import FAKE_KEY, isolate

from agenthop.harness.backends.openai import OpenAIBackend
from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
from agenthop.harness.cli import main as cli_main
from agenthop.harness.run_options import DEFAULT_MAX_SAMPLE_SECONDS, DEFAULT_REQUEST_TIMEOUT_S, RunOptions

BIN = Path(sys.executable).parent


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch)


def answer() -> Reply:
    return completion(tool_calls=[tool_call("c1", "submit_answer", {"answer": "C", "reasoning": "r"})],
                      prompt_tokens=100, completion_tokens=10)


def test_a_call_that_never_answers_ends_the_sample_as_time_limit() -> None:
    hung = answer()
    hung.delay_s = 30.0
    with OpenAIServer([hung, answer()]) as srv:
        t0 = time.monotonic()
        results = run_loop(OpenAIBackend("test-model", base_url=srv.base_url, api_key=FAKE_KEY), Waits(),
                           max_sample_seconds=0.5)
        took = time.monotonic() - t0
    (r,) = results  # one attempt: time_limit is not an error, so the sample is not retried
    t = r.trajectory
    assert (t["terminated_by"], t["is_final"], t["total_turns"], t["total_tokens"]) == ("time_limit", True, 0, 0)
    assert took < 10  # abandoned at the cap, not after the server's 30 s


def test_retries_that_would_pass_the_cap_are_not_begun() -> None:
    # a server error every time: the loop would retry for minutes; the cap ends it first
    with OpenAIServer([Reply(500, {"error": {"message": "boom"}})] * 40) as srv:
        waits = Waits()
        results = run_loop(OpenAIBackend("test-model", base_url=srv.base_url, api_key=FAKE_KEY), waits,
                           max_sample_seconds=0.0001)
    assert [r.trajectory["terminated_by"] for r in results] == ["time_limit"]


def test_defaults_bound_a_sample_to_minutes() -> None:
    opts = RunOptions()
    assert opts.request_timeout_s == DEFAULT_REQUEST_TIMEOUT_S <= 300
    assert 0 < opts.max_sample_seconds == DEFAULT_MAX_SAMPLE_SECONDS <= 30 * 60
    text = CliRunner().invoke(cli_main, ["run", "--help"], terminal_width=200).output
    assert "--request-timeout" in text and "--max-sample-seconds" in text
    assert f"default: {DEFAULT_MAX_SAMPLE_SECONDS}" in text and f"default: {DEFAULT_REQUEST_TIMEOUT_S}" in text


def test_the_command_line_caps_a_hung_endpoint(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    make_benchmark(bench, 3, seed=2)
    out = tmp_path / "runs"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    exe = BIN / "agenthop-harness"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "agenthop.harness.cli"]
    with FakeProvider(latency_s=60, think_turns=0) as srv:
        t0 = time.monotonic()
        proc = subprocess.run([*cmd, "run", "--data", str(bench), "--model", "hung", "--backend", "openai",
                               "--base-url", srv.base_url, "--limit", "2", "--workers", "2", "--out", str(out),
                               "--request-timeout", "0.5", "--max-sample-seconds", "2", "--no-progress"],
                              capture_output=True, text=True, env=env, timeout=120)
        took = time.monotonic() - t0
        n_requests = srv.n_requests
    assert proc.returncode == 0, proc.stderr
    assert took < 60 and n_requests >= 2  # the 0.5 s request timeout retried calls within the 2 s cap
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    rows = [r for p in sorted(run_dir.glob("trajectories-*.parquet")) for r in pq.read_table(p).to_pylist()]
    assert len(rows) == 2 and all(r["terminated_by"] == "time_limit" and r["is_final"] for r in rows)
    assert all(r["wall_time_s"] < 10 for r in rows)
    assert (run_dir / "_SUCCESS").exists()  # every sample has a final attempt: the run is complete
