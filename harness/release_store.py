"""Benchmark releases in an object store: ``make-benchmark --out s3://…`` publishes one, and every
reader of an ``s3://`` release (``run --data``, ``agenthop-ingest --benchmark``,
``describe-benchmark``) checks it is whole before using it.

A release is many objects, and an upload can be interrupted or still going. Publishing therefore:

1. removes the completion marker (:data:`MARKER`) of a release already at the prefix, so from here
   on readers refuse it;
2. uploads every file of the release, built beforehand in a local temporary directory (each file
   is one PUT, visible whole under its final name);
3. removes the files of the previous release that the new one no longer has;
4. writes the marker LAST: a JSON manifest of every file's size and SHA-256.

A reader refuses a prefix without the marker, and a release whose files differ from the manifest
(missing, another size, or other bytes once downloaded). An empty marker object is accepted as
"complete" without a manifest, for a release someone uploads with other tools (the marker last).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import is_dataclass, replace
from pathlib import Path
from typing import TypeVar

import click

from . import storage
from .errors import AgentHopError
from .temp_dirs import temp_dir

T = TypeVar("T")

MARKER = "_RELEASE_COMPLETE"
MANIFEST_FORMAT = 1


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest(local: Path) -> dict[str, dict[str, int | str]]:
    """Every file below ``local``: relative path -> size and SHA-256, in path order."""
    files = sorted(p for p in local.rglob("*") if p.is_file() and p.name != MARKER)
    return {p.relative_to(local).as_posix(): {"size": p.stat().st_size, "sha256": _sha256(p)} for p in files}


def _published_files(url: str, remote: dict[str, int]) -> dict[str, dict]:
    """The manifest of the release at ``url`` ({} without a marker or with an empty one)."""
    if MARKER not in remote or remote[MARKER] == 0:
        return {}
    raw = storage.read_bytes(f"{url}/{MARKER}")
    try:
        files = json.loads(raw)["files"]
        if not isinstance(files, dict):
            raise TypeError("files is not an object")
    except (ValueError, KeyError, TypeError) as exc:
        raise storage.StorageError(f"{url}/{MARKER}: not a release manifest ({exc})") from None
    return files


def check_target(url: str, force: bool, is_synthetic: Callable[[Path], bool], what: str) -> None:
    """``--out s3://…`` of make-benchmark: an empty prefix or a synthetic release (replaced) is fine;
    other objects need ``--force`` (as a non-empty local directory does)."""
    remote = storage.list_files(url)
    if not remote or force:
        return
    top = [rel for rel in remote if "/" not in rel and rel != MARKER]
    with temp_dir("agenthop-release-check-") as tmp:
        storage.download_files(url, tmp, top)
        if is_synthetic(tmp):
            return
    raise AgentHopError(f"--out {url}: holds {len(remote)} object(s) that are not a {what} "
                        "(README.md marker missing); choose another prefix or pass --force")


def publish(local: Path, url: str) -> tuple[int, int]:
    """Upload the release built in ``local`` to ``url``, the completion marker last (see the module
    docstring); returns (files, bytes) uploaded."""
    remote = storage.list_files(url)
    previous = _published_files(url, remote)
    if MARKER in remote:
        storage.delete(f"{url}/{MARKER}")  # from now on readers refuse the old release
    files = manifest(local)
    for rel in files:
        storage.upload_file(local / rel, f"{url}/{rel}")
    for rel in sorted(set(previous) - set(files)):
        storage.delete(f"{url}/{rel}")
    body = {"format": MANIFEST_FORMAT, "n_files": len(files),
            "bytes": sum(int(f["size"]) for f in files.values()), "files": files}
    storage.write_bytes(f"{url}/{MARKER}", json.dumps(body, indent=1, sort_keys=True).encode())
    return len(files), int(body["bytes"])


@contextmanager
def staged_release(url: str, force: bool, is_synthetic: Callable[[Path], bool], what: str) -> Iterator[Path]:
    """A local temporary directory to build a release in, published to ``url`` when the block ends
    without an error (nothing is uploaded otherwise)."""
    check_target(url, force, is_synthetic, what)
    with temp_dir("agenthop-release-") as tmp:
        local = tmp / "release"
        local.mkdir()
        yield local
        n, size = publish(local, url)
        click.echo(f"uploaded {n} files ({size / 1e6:.1f} MB) to {url}, completion marker {MARKER} last")


def _incomplete(url: str, detail: str) -> storage.StorageError:
    return storage.StorageError(f"{url}: not a complete release: {detail}")


def verified_download(url: str, target: Path) -> None:
    """Download the release at ``url`` into the directory ``target`` after checking its marker, and
    check the copy against the manifest."""
    remote = storage.list_files(url)
    if not remote:
        raise storage.StorageError(f"{url}: no such directory or file (nothing is stored under it)")
    if MARKER not in remote:
        raise _incomplete(url, f"its completion marker {MARKER} is missing (an upload is still going or was "
                               f"interrupted); `make-benchmark --out {url}` writes it last, and after copying "
                               f"a release there with other tools upload an empty {MARKER} last")
    files = _published_files(url, remote)
    if not files:  # an empty marker: complete by the uploader's word, no manifest to check
        storage.download_files(url, target, sorted(rel for rel in remote if rel != MARKER))
        return
    for rel, meta in files.items():
        if rel not in remote:
            raise _incomplete(url, f"{rel} is listed in {MARKER} but missing (is it being rewritten?)")
        if remote[rel] != meta.get("size"):
            raise _incomplete(url, f"{rel} has {remote[rel]} bytes, {MARKER} says {meta.get('size')} "
                                   "(is it being rewritten?)")
    storage.download_files(url, target, list(files))
    for rel, meta in files.items():
        if _sha256(target / rel) != meta.get("sha256"):
            raise _incomplete(url, f"{rel} changed while it was downloaded (is it being rewritten?)")


@contextmanager
def release_copy(location: str | Path) -> Iterator[Path]:
    """A release as a local directory: ``location`` itself, or a checked temporary download of an
    ``s3://`` release (named as its last path part, like the prefix)."""
    if not storage.is_remote(location):
        yield Path(location)
        return
    url = str(location).rstrip("/")
    with temp_dir("agenthop-download-") as tmp:
        target = tmp / url.rsplit("/", 1)[-1]
        target.mkdir()
        verified_download(url, target)
        yield target


def load_at(location: str | Path, load: Callable[[Path], T]) -> T:
    """``load(dir)`` of the release at ``location``: a local directory, or a checked temporary copy of
    an ``s3://`` release (its completion marker and manifest, as :func:`release_copy`), removed once
    ``load`` has read it into memory. An error names the URL, not the copy; a loaded dataclass with a
    ``root`` field gets the URL as its root."""
    with release_copy(location) as local:
        try:
            loaded = load(local)
        except AgentHopError as exc:
            if not storage.is_remote(location):
                raise
            raise AgentHopError(str(exc).replace(str(local), str(location))) from None
    if storage.is_remote(location) and is_dataclass(loaded) and hasattr(loaded, "root"):
        loaded = replace(loaded, root=str(location))  # type: ignore[type-var]
    return loaded
