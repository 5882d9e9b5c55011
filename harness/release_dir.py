"""The ``--out`` directory of ``make-benchmark``, for every benchmark's synthetic generator."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .errors import AgentHopError


def prepare_release_dir(out: Path, force: bool, is_synthetic: Callable[[Path], bool],
                        clear: Callable[[Path], None], what: str = "synthetic release") -> None:
    """--out of make-benchmark: a synthetic release there is cleared; another non-empty directory needs --force."""
    if out.exists() and not out.is_dir():
        raise AgentHopError(f"--out {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if is_synthetic(out):
            clear(out)
        elif not force:
            raise AgentHopError(f"--out {out}: directory is not empty and does not hold a {what} "
                                "(README.md marker missing); choose another directory or pass --force")
