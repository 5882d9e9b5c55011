"""Process and disk hygiene of `agenthop-harness run`: pool workers die with their parent; a full disk or a
read-only output directory is one clear line per run and exit code 2, and what was written stays intact."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
from agenthop.harness.cli import main as cli_main
from agenthop.harness.writer import finished_samples

N_ITEMS = 120
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hygiene") / "bench"
    make_benchmark(root, N_ITEMS, seed=3)
    return root


def harness() -> list[str]:
    exe = BIN / "agenthop-harness"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "agenthop.harness.cli"]


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkill_of_the_main_pid_leaves_no_process_behind(bench: Path, tmp_path: Path) -> None:
    panel = tmp_path / "panel.yaml"
    panel.write_text("defaults: {replicates: 3}\nmodels:\n"
                     "  - {name: over-searcher, sim: {archetype: over_searcher}}\n"
                     "  - {name: greedy-reader, sim: {archetype: greedy_reader}}\n")
    out = tmp_path / "runs"
    proc = subprocess.Popen([*harness(), "run", "--data", str(bench), "--panel", str(panel), "--out", str(out),
                             "--processes", "2", "--flush-every", "2", "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not list(out.glob("*/trajectories-00000.parquet")):
            assert proc.poll() is None, "the panel finished before it could be killed"
            time.sleep(0.05)
        family = descendants(proc.pid)
        assert len(family) >= 2  # the pool's workers (and multiprocessing's helper) are running
        os.kill(proc.pid, signal.SIGKILL)  # only the main PID, as an OOM killer or `kill -9 PID` does
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(alive(p) for p in family):
            time.sleep(0.1)
        left = [p for p in family if alive(p)]
        assert not left, f"processes left behind: {left}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for p in descendants(proc.pid):
            os.kill(p, signal.SIGKILL)


def _run(bench: Path, out: Path, *extra: str) -> object:
    return CliRunner().invoke(cli_main, ["run", "--data", str(bench), "--model", "balanced", "--out", str(out),
                                         "--limit", "30", "--flush-every", "5", "--no-progress", *extra])


def test_a_full_disk_is_one_clear_line_exit_2_and_what_was_written_is_intact(
        bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agenthop.harness import writer

    real = writer.pq.write_table
    calls = 0

    def write_table(table: object, where: object, **kw: object) -> None:
        nonlocal calls
        calls += 1
        if calls > 1 + 2 * 3:  # the runs row, then two parts of three tables; then the disk is full
            Path(str(where)).write_bytes(b"PAR1 half a file")  # a partial temp file, as ENOSPC leaves it
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(where))
        real(table, where, **kw)

    out = tmp_path / "runs"
    monkeypatch.setattr(writer.pq, "write_table", write_table)
    res = _run(bench, out)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and isinstance(res.exception, SystemExit)
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "No space left on device" in errors[0] and "rerun to resume" in errors[0]
    (run_dir,) = out.iterdir()
    assert not list(run_dir.glob(".tmp-*"))  # no half-written file is left
    assert len(finished_samples(run_dir)) == 10  # the two parts written before the disk filled up
    for p in run_dir.glob("*.parquet"):
        pq.read_table(p)  # every file that is there is whole
    monkeypatch.setattr(writer.pq, "write_table", real)
    again = _run(bench, out)  # space again: the rerun resumes and finishes
    assert again.exit_code == 0, again.output
    assert len(finished_samples(run_dir)) == 30 and (run_dir / "_SUCCESS").exists()


def test_a_read_only_output_directory_is_one_clear_line_exit_2(bench: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "runs"
    out.mkdir()
    if os.geteuid() == 0:  # root writes through permission bits: make every open for writing fail as EROFS
        from agenthop.harness import writer

        def read_only(*args: object, **kw: object) -> object:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(args[0]))

        monkeypatch.setattr(writer.Path, "mkdir", read_only)
    else:
        out.chmod(0o555)
    res = _run(bench, out)
    out.chmod(0o755)
    assert res.exit_code == 2, res.output
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and ("Read-only file system" in errors[0] or "Permission denied" in errors[0])
    assert "Traceback" not in res.output
    assert not any(out.iterdir())


def test_ctrl_c_during_a_concurrent_real_backend_panel(bench: Path, tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from servers.fake_provider import FakeProvider

    out = tmp_path / "runs"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    with FakeProvider(latency_s=0.1) as a, FakeProvider("anthropic", latency_s=0.1) as b:
        panel = tmp_path / "panel.yaml"
        panel.write_text(f"models:\n  - {{name: one, backend: openai, base_url: '{a.base_url}'}}\n"
                         f"  - {{name: two, backend: anthropic, base_url: '{b.base_url}'}}\n")
        proc = subprocess.Popen([*harness(), "run", "--data", str(bench), "--panel", str(panel), "--out", str(out),
                                 "--workers", "2", "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len({p.parent for p in out.glob("*/trajectories-*.parquet")}) < 2:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "rerun the same command to resume" in stderr
    lines = stdout.strip().splitlines()
    assert len(lines) == 2 and all("[interrupted]" in line for line in lines)
    for run_dir in out.iterdir():
        done = finished_samples(run_dir)
        assert 0 < len(done) < N_ITEMS and not (run_dir / "_SUCCESS").exists()
