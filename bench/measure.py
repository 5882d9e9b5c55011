"""Measure one pipeline stage run as a subprocess: wall time, CPU time, peak RSS of the process tree.

Peak RSS is sampled every 20 ms over the whole process tree (the harness uses a process pool, so a
single process's maxrss would understate it); the largest single-process maxrss from the kernel
(`wait4`) is reported too.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class StageResult:
    name: str
    command: list[str]
    wall_s: float
    cpu_s: float
    peak_rss_mib: float  # sampled sum over the process tree
    max_process_rss_mib: float  # kernel maxrss of the largest process (wait4)
    returncode: int
    extra: dict[str, object] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(x) for x in fh.read().split())
    except OSError:
        pass
    return out


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_kib(root: int) -> int:
    total, stack, seen = 0, [root], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += _rss_kib(pid)
        stack.extend(_children(pid))
    return total


def run_stage(name: str, cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
              log: Path | None = None) -> StageResult:
    # Earlier stages (and the copies of warehouse files between them) leave dirty pages that the
    # kernel writes back later; flushed here, that writeback does not stall this stage's fsyncs.
    os.sync()
    out = open(log, "w") if log else subprocess.DEVNULL
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss_kib(proc.pid))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if log:
        out.close()  # type: ignore[union-attr]
    return StageResult(
        name=name,
        command=cmd,
        wall_s=round(wall, 3),
        cpu_s=round(usage.ru_utime + usage.ru_stime, 3),
        peak_rss_mib=round(peak / 1024, 1),
        max_process_rss_mib=round(usage.ru_maxrss / 1024, 1),
        returncode=proc.returncode,
    )


def best_of(repeats: int, name: str, cmd: list[str], **kwargs: object) -> StageResult:
    """Run a stage `repeats` times and keep the fastest (the least disturbed by a noisy machine);
    every wall time is kept in `extra['walls_s']`."""
    runs = [run_stage(name, cmd, **kwargs) for _ in range(repeats)]  # type: ignore[arg-type]
    best = min(runs, key=lambda r: r.wall_s)
    best.extra["walls_s"] = [r.wall_s for r in runs]
    return best


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0
