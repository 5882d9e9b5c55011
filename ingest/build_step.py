"""`agenthop-ingest --build`: the dbt build after the ingest, with progress and a one-line summary.

The build runs through the same command line as `agenthop-dbt build` (dbt_command.py: any folder, dbt's
target and logs beside the warehouse). dbt's own output is read as JSON events: on a terminal a line
shows the nodes done out of the total; off a terminal nothing is printed until the summary. The summary
and any failure come from dbt's `run_results.json` (docs/ingest.md#building-the-marts).
"""

from __future__ import annotations

import functools
import json
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import click

from agenthop.harness.errors import AgentHopError

from .dbt_command import dbt_command, dbt_env, dbt_workdir, existing_warehouse

#: dbt events that report one node finished (or skipped); their data carries the index and the total
NODE_DONE_EVENTS = frozenset({"LogModelResult", "LogTestResult", "LogSeedResult", "LogSnapshotResult",
                              "LogNodeNoOpResult", "LogFunctionResult", "SkippingDetails"})
FAILED = ("error", "fail")


class BuildFailed(AgentHopError):
    """The dbt build after a committed ingest failed (dbt's exit code)."""

    exit_code = 1


@dataclass
class BuildOutcome:
    """What one dbt build did, from its run_results.json (by resource type and status)."""

    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    warned: list[str] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (unique_id, status, first message line)

    def n(self, resource: str, *statuses: str) -> int:
        return sum(v for (r, s), v in self.counts.items() if r == resource and s in statuses)

    def summary(self, seconds: float, db: Path) -> str:
        """One line, e.g. `built 63 models, 221 tests passed in 31 s; warehouse: PATH`."""
        tests = self.n("test", "pass") + self.n("unit_test", "pass")
        parts = [f"built {_count(self.n('model', 'success'), 'model')}"]
        if self.n("seed", "success"):
            parts.append(_count(self.n("seed", "success"), "seed"))
        parts.append(f"{_count(tests, 'test')} passed")
        if self.warned:
            parts.append(f"{len(self.warned)} warned ({', '.join(self.warned)})")
        return f"{', '.join(parts)} in {seconds:.0f} s; warehouse: {db}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def read_outcome(run_results: Path) -> BuildOutcome | None:
    """The outcome recorded in dbt's run_results.json, or None when dbt wrote none (it stopped before)."""
    if not run_results.is_file():
        return None
    out = BuildOutcome()
    for r in json.loads(run_results.read_text(encoding="utf-8")).get("results", []):
        uid, status = str(r.get("unique_id", "")), str(r.get("status", ""))
        key = (uid.split(".", 1)[0], status)
        out.counts[key] = out.counts.get(key, 0) + 1
        name = uid.rsplit(".", 1)[-1]
        if status == "warn":
            out.warned.append(name)
        elif status in FAILED:
            message = (r.get("message") or "").strip().splitlines()
            out.failed.append((uid, status, message[0] if message else ""))
    return out


class NodeProgress:
    """Counts finished nodes from dbt's JSON events; on a terminal, one line rewritten in place."""

    def __init__(self, stream: TextIO, show: bool) -> None:
        self.stream, self.show = stream, show
        self.done, self.total = 0, 0
        self.errors: list[str] = []  # dbt's error-level messages (what failed before any node ran)
        self.t0 = time.monotonic()

    def feed(self, line: str) -> None:
        try:
            event = json.loads(line)
            info, data = event["info"], event.get("data") or {}
        except (ValueError, KeyError, TypeError):
            return  # not an event (a library printing to stdout)
        if info.get("level") == "error" and info.get("msg"):
            self.errors.append(str(info["msg"]).strip())
        if info.get("name") in NODE_DONE_EVENTS:
            self.done += 1
            self.total = max(self.total, int(data.get("total") or data.get("num_models") or 0))
            self.show_line(f"{self.done}/{self.total} nodes")
        elif not self.done:  # dbt reads the project and runs its start hooks first (a while without a saved parse)
            self.show_line("preparing")

    def show_line(self, what: str) -> None:
        if self.show:
            self.stream.write(f"\r\033[Kdbt build: {what} ({time.monotonic() - self.t0:.0f} s)")
            self.stream.flush()

    def close(self) -> None:
        if self.show:
            self.stream.write("\r\033[K")
            self.stream.flush()


def build_marts(db: Path, *, stream: TextIO, progress: bool) -> tuple[BuildOutcome, float]:
    """Run `dbt build` on the warehouse `db`; the outcome and the seconds it took. Raises BuildFailed
    naming the failing node (or dbt's error) and the log file when dbt exits non-zero."""
    work = dbt_workdir(db)
    run_results = work / "target" / "run_results.json"
    run_results.unlink(missing_ok=True)  # a stale file would report an earlier build
    cmd = dbt_command(["build", "--log-format", "json", "--log-level", "info"], db)
    watcher = NodeProgress(stream, progress)
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, env=dbt_env(db), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                encoding="utf-8", errors="replace")
    except OSError as exc:
        raise BuildFailed(f"cannot run dbt ({cmd[0]}): {exc.strerror}; the ingest is committed") from None
    with proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            watcher.feed(line)
        code = proc.wait()
    watcher.close()
    seconds = time.monotonic() - t0
    outcome = read_outcome(run_results)
    if code != 0:
        raise BuildFailed(failure_line(outcome, watcher.errors, work / "logs" / "dbt.log"))
    return outcome or BuildOutcome(), seconds


def failure_line(outcome: BuildOutcome | None, errors: Iterable[str], log: Path) -> str:
    """One line: the failing node (or dbt's own error), that the ingest is committed, and the log."""
    if outcome is not None and outcome.failed:
        uid, status, message = outcome.failed[0]
        more = f" (and {len(outcome.failed) - 1} more)" if len(outcome.failed) > 1 else ""
        what = f"{uid} {status}ed{more}: {message}" if message else f"{uid} {status}ed{more}"
    else:
        errs = [e.splitlines()[0] for e in errors if e.strip()]
        what = errs[-1] if errs else "dbt stopped before running a node"
    return (f"dbt build failed: {what}; the ingest is committed (rerun the build with agenthop-dbt build); "
            f"log: {log}")


def build_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add `--build` to the ingest command: when given, the dbt build runs after the command's work
    (a load or a --delete-run), with the command's --db and --quiet."""

    @click.option("--build", is_flag=True,
                  help="Then build the marts (dbt build, as agenthop-dbt build): progress on a terminal, a "
                  "one-line summary (docs/ingest.md#building-the-marts).")
    @functools.wraps(command)
    def wrapper(*args: Any, build: bool, **kwargs: Any) -> Any:
        result = command(*args, **kwargs)
        if build:
            run_build_step(kwargs.get("db"), quiet=bool(kwargs.get("quiet")))
        return result

    return wrapper


def run_build_step(db: Path | str | None, *, quiet: bool) -> None:
    path = existing_warehouse(db)
    stream = click.get_text_stream("stderr")
    tty = stream.isatty() and not quiet
    if tty:
        click.echo(f"agenthop-ingest: building the marts (dbt build; log: {dbt_workdir(path) / 'logs' / 'dbt.log'})",
                   err=True)
    outcome, seconds = build_marts(path, stream=stream, progress=tty)
    if not quiet:
        click.echo(outcome.summary(seconds, path))
