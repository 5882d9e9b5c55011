"""What one run of an invocation ended as: its status, counts and the line the CLI prints for it."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import AgentHopError
from .panel import RunSpec

COMPLETE, INTERRUPTED, TOKEN_CAP, SKIPPED, FAILED = "complete", "interrupted", "token_cap", "skipped", "failed"
COST_CAP = "cost_cap"
#: a shard ran every sample it owns; the run completes when the other shards have run theirs
SHARD_DONE = "shard_done"


@dataclass
class RunResult:
    run_id: str
    run_dir: str
    model: str
    backend: str
    condition: str
    replicate: int
    status: str
    #: items in scope (after --limit)
    n_scope: int = 0
    #: finished samples in the run directory
    n_done: int = 0
    n_correct: int = 0
    #: total_tokens over every attempt in the run directory
    tokens: int = 0
    #: samples this invocation ran
    n_new: int = 0
    error: str | None = None
    #: the run failed on a user-side problem (full disk, read-only output, a locked run): exit code 2
    user_error: bool = False
    #: the signal that interrupted the run ("SIGINT" or "SIGTERM"; None when none did)
    stopped_by: str | None = None

    @property
    def accuracy(self) -> float | None:
        return self.n_correct / self.n_done if self.n_done else None

    def line(self) -> str:
        acc = f"{self.accuracy:.3f}" if self.accuracy is not None else "n/a"
        tail = "" if self.status == COMPLETE else f"  [{self.status}{': ' + self.error if self.error else ''}]"
        return (f"{self.run_id}  {self.run_dir}  n={self.n_done}/{self.n_scope}  accuracy={acc}  "
                f"tokens={self.tokens}{tail}")


class RunCrashed(RuntimeError):
    """A run failed with an unexpected exception in a worker process (picklable, with its traceback)."""

    def __init__(self, summary: str, traceback_text: str) -> None:
        super().__init__(summary, traceback_text)
        self.summary = summary
        self.traceback_text = traceback_text

    def __str__(self) -> str:
        return self.summary


def say(msg: str) -> None:
    """One line for the user on stderr (outside any progress bar)."""
    print(msg, file=sys.stderr, flush=True)


def result_for(r: RunSpec, run_id: str, out: Path, status: str, **fields: object) -> RunResult:
    """The result of run ``r`` (id ``run_id`` under ``out``) with ``status`` and the given fields."""
    return RunResult(run_id=run_id, run_dir=str(out / run_id), model=r.model.name, backend=r.model.backend,
                     condition=r.condition, replicate=r.replicate, status=status, **fields)  # type: ignore[arg-type]


def not_started(r: RunSpec, run_id: str, out: Path, stopped_by: str | None = None) -> RunResult:
    """A run that a Ctrl-C or SIGTERM stopped before it started: interrupted, resumed by a rerun."""
    return result_for(r, run_id, out, INTERRUPTED, stopped_by=stopped_by)


def failed(r: RunSpec, run_id: str, out: Path, exc: BaseException) -> RunResult:
    user = isinstance(exc, AgentHopError)
    return result_for(r, run_id, out, FAILED, error=str(exc) if user else f"{type(exc).__name__}: {exc}",
                      user_error=user)


def report_failure(run_id: str, exc: BaseException) -> None:
    """Print a failed run's traceback (from a worker process too) to stderr."""
    import traceback

    if isinstance(exc, RunCrashed):
        text = exc.traceback_text
    else:
        text = "".join(traceback.format_exception(exc))
    say(f"run {run_id} failed (finished samples are kept):\n{text.rstrip()}")
