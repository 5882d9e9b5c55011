"""Interrupts as a user sends them, with every remaining sample in flight or the pool still starting.

A run is complete exactly when every sample of its scope has a final attempt on disk: a SIGTERM or a
second Ctrl-C that drops the in-flight samples leaves an interrupted run (exit 143 / 130, no
``_SUCCESS``) that a rerun finishes. A Ctrl-C while the process pool starts is one clean interrupt.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from servers.fake_provider import FakeProvider

from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
from agenthop.harness.completion import missing_samples, run_is_complete
from agenthop.harness.run_one import settled_status
from agenthop.harness.run_result import COMPLETE, COST_CAP, INTERRUPTED
from agenthop.harness.writer import finished_samples

BIN = Path(sys.executable).parent
N_ITEMS = 12
IN_FLIGHT = 4


def harness() -> list[str]:
    exe = BIN / "agenthop-harness"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "agenthop.harness.cli"]


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "ANTHROPIC_")) and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    return env


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("interrupts") / "bench"
    make_benchmark(root, N_ITEMS, seed=3)
    return root


def real_args(bench: Path, out: Path, base_url: str) -> list[str]:
    return ["run", "--data", str(bench), "--model", "slow-model", "--backend", "openai", "--base-url", base_url,
            "--limit", str(IN_FLIGHT), "--workers", str(IN_FLIGHT), "--out", str(out), "--no-progress"]


def start(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([*harness(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=clean_env(), start_new_session=True)


def wait_until_all_in_flight(srv: FakeProvider, proc: subprocess.Popen[str], timeout: float = 120) -> None:
    """Every sample of the scope has sent its first request (and the server holds them all)."""
    deadline = time.monotonic() + timeout
    while srv.n_requests < IN_FLIGHT:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"run ended ({proc.returncode}) early:\n{out}\n{err}")
        assert time.monotonic() < deadline, "the samples never all started"
        time.sleep(0.01)


def run_dir_of(out: Path) -> Path:
    dirs = [p for p in out.iterdir() if p.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def assert_interrupted_then_resumes(bench: Path, out: Path, stdout: str, stderr: str) -> None:
    run_dir = run_dir_of(out)
    assert "Traceback" not in stderr, stderr
    assert "rerun the same command to resume" in stderr
    assert f"n=0/{IN_FLIGHT}" in stdout and "[interrupted]" in stdout, stdout
    assert not (run_dir / "_SUCCESS").exists()
    assert pq.read_table(run_dir / "runs-00000.parquet").column("finished_at")[0].as_py() is None
    assert finished_samples(run_dir) == set()
    with FakeProvider(think_turns=0) as fast:
        again = subprocess.run([*harness(), *real_args(bench, out, fast.base_url)], capture_output=True, text=True,
                               env=clean_env(), timeout=300)
    assert again.returncode == 0, again.stderr
    assert run_dir_of(out) == run_dir
    assert f"n={IN_FLIGHT}/{IN_FLIGHT}" in again.stdout and "[" not in again.stdout.split("tokens=")[-1]
    assert json.loads((run_dir / "_SUCCESS").read_text())["n_samples"] == IN_FLIGHT


def test_sigterm_with_every_sample_in_flight_is_an_interrupted_run(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    with FakeProvider(latency_s=30, think_turns=0) as slow:
        proc = start(real_args(bench, out, slow.base_url))
        wait_until_all_in_flight(slow, proc)
        proc.send_signal(signal.SIGTERM)  # as a scheduler or `kill` sends it: the main process only
        stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, (stdout, stderr)
    assert_interrupted_then_resumes(bench, out, stdout, stderr)


def test_double_ctrl_c_with_every_sample_in_flight_is_an_interrupted_run(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    with FakeProvider(latency_s=30, think_turns=0) as slow:
        proc = start(real_args(bench, out, slow.base_url))
        wait_until_all_in_flight(slow, proc)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal reaches the whole process group
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, (stdout, stderr)
    assert "Ctrl-C again: dropping in-flight samples" in stderr
    assert_interrupted_then_resumes(bench, out, stdout, stderr)


def pool_workers(pid: int) -> list[int]:
    """Children of ``pid`` that are multiprocessing spawn workers (not the resource tracker)."""
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids += [int(k) for k in (task / "children").read_text().split()]
        except OSError:
            continue
    out = []
    for k in kids:
        try:
            if b"spawn_main" in Path(f"/proc/{k}/cmdline").read_bytes():
                out.append(k)
        except OSError:
            continue
    return out


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc to see the pool start")
def test_ctrl_c_while_the_process_pool_starts(bench: Path, tmp_path: Path) -> None:
    panel = tmp_path / "panel.yaml"
    archetypes = ("over_searcher", "greedy_reader", "verifier")
    panel.write_text("models:\n" + "".join(f"  - {{name: {a.replace('_', '-')}, sim: {{archetype: {a}}}}}\n"
                                           for a in archetypes))
    out = tmp_path / "runs"
    args = ["run", "--data", str(bench), "--panel", str(panel), "--out", str(out), "--processes", "2",
            "--no-progress"]
    proc = start(args)
    deadline = time.monotonic() + 120
    while not pool_workers(proc.pid):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the pool never started"
        time.sleep(0.001)
    os.killpg(proc.pid, signal.SIGINT)  # a worker is still importing: Ctrl-C reaches it too
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, (stdout, stderr)
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert stderr.count("Ctrl-C") == 1, stderr
    lines = stdout.strip().splitlines()
    assert len(lines) == 3 and all(line.endswith("[interrupted]") for line in lines), stdout
    assert not list(out.glob("*/_SUCCESS"))
    again = subprocess.run([*harness(), *args], capture_output=True, text=True, env=clean_env(), timeout=300)
    assert again.returncode == 0, again.stderr
    assert len(list(out.glob("*/_SUCCESS"))) == 3


def test_completion_is_read_from_the_part_files(bench: Path, tmp_path: Path) -> None:
    from agenthop.harness.benchmarks.agenthop.loader import load_release
    from agenthop.harness.panel import ModelSpec
    from agenthop.harness.runner import run_model

    release = load_release(bench)
    ids = [it.id for it in release.items]
    res = run_model(ModelSpec(name="verifier", backend="sim", sim={"archetype": "verifier"}), release, tmp_path,
                    limit=3)
    run_dir = Path(res.run_dir)
    assert res.status == COMPLETE and run_is_complete(run_dir, ids[:3])
    assert missing_samples(run_dir, ids[:5]) == ids[3:5]
    # the driver had nothing left to start, yet samples are missing on disk: they were dropped
    assert settled_status(COMPLETE, run_dir, ids[:5]) == INTERRUPTED
    assert settled_status(COST_CAP, run_dir, ids[:5]) == COST_CAP
    assert settled_status(INTERRUPTED, run_dir, ids[:3]) == COMPLETE
