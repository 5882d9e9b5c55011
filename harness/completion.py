"""When a run is complete: exactly when every sample of its scope has a final attempt on disk.

The rule reads the run directory's ``trajectories`` part files, never what a process holds in memory
(samples in flight, buffers), so it gives the same answer for an interrupted run, a resumed one and
the shards of one run writing into one directory, whichever process asks.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .writer import finished_samples


def missing_samples(run_dir: str | Path, scope: Iterable[str]) -> list[str]:
    """The sample ids of ``scope`` (in its order) without a final attempt in ``run_dir``'s part files."""
    done = finished_samples(run_dir)
    return [s for s in scope if s not in done]


def run_is_complete(run_dir: str | Path, scope: Iterable[str]) -> bool:
    return not missing_samples(run_dir, scope)
