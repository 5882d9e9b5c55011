"""The ``--out`` of ``make-benchmark``, for every benchmark's synthetic generator: a local directory,
or an ``s3://bucket/prefix`` the release is built for locally and then published to
(harness/release_store.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import AgentHopError
from .storage import is_remote


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


@contextmanager
def release_output(out: Path | str, force: bool, is_synthetic: Callable[[Path], bool],
                   clear: Callable[[Path], None], what: str = "synthetic release") -> Iterator[Path]:
    """The local directory to write the release of ``--out`` into: ``out`` itself (prepared as
    :func:`prepare_release_dir` says), or, for ``s3://``, a temporary one that is uploaded when the
    block ends without an error, its completion marker last."""
    if not is_remote(out):
        prepare_release_dir(Path(out), force, is_synthetic, clear, what)
        yield Path(out)
        return
    from .release_store import staged_release

    with staged_release(str(out), force, is_synthetic, what) as local:
        yield local
