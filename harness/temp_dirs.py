"""Temporary folders and files that are removed on any exit, even one that runs no cleanup code.

A normal exit or an exception removes a temporary folder in a ``finally``. A process killed by
SIGKILL (or the OOM killer, or SIGTERM outside ``agenthop-harness run``) runs no code, so every such
name carries its owner: ``<prefix><pid>@<host>.<random>``. Whenever a new one is made, the leftovers
of processes of this host that no longer exist are removed first (only those owned by this user:
``/tmp`` is shared). The host is part of the name so that a temporary folder on a filesystem shared
by several machines is never judged by a process table it is not in.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: ``<prefix><pid>@<host>.<random>``: the prefix ends with ``-``; ``<random>`` is mkdtemp's; a
#: ``.suffix`` after it is a file another program made beside ours (DuckDB's ``.wal``)
_OWNED_RE = re.compile(r"^(?P<prefix>.*-)(?P<pid>\d+)@(?P<host>[A-Za-z0-9-]*)\.[A-Za-z0-9_]+(?:\.[A-Za-z0-9_.]*)?$")


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:63]


def owner_tag() -> str:
    """``<pid>@<host>.``: what names of this process's temporary folders and files carry."""
    return f"{os.getpid()}@{_host()}."


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (on this host); one of another user counts as alive."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: exists, another user's
        return True
    return True


def stale(name: str, prefix: str) -> bool:
    """Whether ``name`` is a temporary name made with ``prefix`` by a process of this host that is gone."""
    m = _OWNED_RE.match(name)
    if m is None or m.group("prefix") != prefix or m.group("host") != _host():
        return False
    return not pid_alive(int(m.group("pid")))


def remove_stale(parent: Path, prefix: str) -> list[Path]:
    """Remove the leftovers of dead processes named with ``prefix`` in ``parent``; returns them."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    uid = os.getuid()
    for entry in entries:
        if not entry.name.startswith(prefix) or not stale(entry.name, prefix):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid != uid:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:  # removed meanwhile, or not ours to remove
            continue
        removed.append(Path(entry.path))
    return removed


def make_temp_dir(prefix: str) -> Path:
    """A new folder ``<tmp>/<prefix><pid>@<host>.<random>``, after removing dead processes' leftovers."""
    parent = Path(tempfile.gettempdir())
    remove_stale(parent, prefix)
    return Path(tempfile.mkdtemp(prefix=prefix + owner_tag(), dir=parent))


@contextmanager
def temp_dir(prefix: str) -> Iterator[Path]:
    """:func:`make_temp_dir`, removed when the block ends however it ends."""
    path = make_temp_dir(prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def keep(path: Path, prefix: str) -> Path:
    """Rename a temporary folder that must outlive its process (files not yet uploaded) to a name
    without an owner, so no later run removes it; returns the new path."""
    kept = Path(tempfile.mkdtemp(prefix=prefix, dir=path.parent))
    os.replace(path, kept)  # onto the empty folder just made
    return kept
