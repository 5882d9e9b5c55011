"""The settings of a run that are not part of its model spec (``RunOptions``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from .run_identity import RunCaps
from .shards import Shard

#: (flush_every samples, flush_seconds) by backend kind. Real backends write every finished sample at
#: once (docs/formats.md#trajectory-store: a crash loses at most the samples in flight; they cost money). Simulated runs are
#: free and deterministic to recompute, so they batch (documented deviation, docs/running.md).
FLUSH_DEFAULTS: dict[str, tuple[int, float]] = {"sim": (250, 30.0), "real": (1, 10.0)}

#: defaults of --request-timeout and --max-sample-seconds: a hung endpoint costs a sample minutes, not hours
DEFAULT_REQUEST_TIMEOUT_S = 300.0
DEFAULT_MAX_SAMPLE_SECONDS = 1200.0


@dataclass(frozen=True)
class RunOptions:
    """Settings of a run that are not part of the model spec."""

    caps: RunCaps = field(default_factory=RunCaps)
    seed: int = 0
    #: concurrent samples of a real-backend run (simulated runs use one)
    workers: int = 4
    #: first N items of the release (None: all)
    limit: int | None = None
    #: record the messages table; None: real backends yes, simulated no
    record_messages: bool | None = None
    flush_every: int | None = None
    flush_seconds: float | None = None
    #: run-wide token cap over every attempt of the run, resumed samples included (0: off)
    max_run_tokens: int = 0
    #: rerun samples whose final attempt ended with ``error`` when resuming
    retry_errors: bool = True
    #: progress bar; None: only when stderr is a terminal
    progress: bool | None = None
    #: samples in flight over all concurrent real-backend runs of a panel (0: no global cap)
    max_concurrency: int = 0
    #: stop taking new samples before the estimated cost of this invocation passes this (0: off)
    max_cost_usd: float = 0.0
    #: every sample in flight reserves the most it can cost under its token cap (--strict-cost-cap)
    strict_cost_cap: bool = False
    #: HTTP timeout of one model call of a real backend, seconds (a timeout is retried as transient)
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S
    #: wall-clock cap of one real-backend sample over all its attempts, seconds (0: none); ends it as
    #: ``time_limit``
    max_sample_seconds: float = DEFAULT_MAX_SAMPLE_SECONDS
    #: merge a finished run's part files into one per table
    compact: bool = True
    #: run only this shard's samples of every run (harness/shards.py); None: all
    shard: Shard | None = None
    #: LoopConfig fields to override (e.g. max_attempts, sample_retry_waits), for every run
    loop_overrides: dict[str, Any] = field(default_factory=dict)

    def messages_for(self, backend: str) -> bool:
        return self.record_messages if self.record_messages is not None else backend != "sim"

    def flush_for(self, backend: str) -> tuple[int, float]:
        n, t = FLUSH_DEFAULTS["sim" if backend == "sim" else "real"]
        return (self.flush_every or n, self.flush_seconds if self.flush_seconds is not None else t)

    def show_progress(self) -> bool:
        return self.progress if self.progress is not None else sys.stderr.isatty()

