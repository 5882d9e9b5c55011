"""Run an ``s3://`` run store through a local working copy of the run directories one invocation writes.

The run writer (harness/writer.py) writes local files with fsync and atomic renames. For an
``s3://bucket/prefix`` store, ``mirrored_store`` gives it a temporary local root that holds what
the store already has of those runs (so they resume), and copies every finished file up while
the runs go on (every ``PUSH_EVERY_S`` seconds) and once more at the end:

- a file is uploaded under its final name once it has its final name locally (the writer renames
  finished files into place, and an S3 PUT is atomic), so a reader never sees half a file;
- a part's ``trajectories`` file goes up after the same part of the other tables, and
  ``_SUCCESS`` goes up last, as the writer orders its renames;
- a file the writer removed (``_SUCCESS`` of a run that starts again) is removed from the store;
- compaction is off: parts stay as written, so no two writers ever rewrite the same object.

Nothing about credentials is stored: harness/storage.py reads them from the environment.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import storage
from .errors import AgentHopError
from .temp_dirs import keep, make_temp_dir, temp_dir

PUSH_EVERY_S = 15.0


def _order(rel: str) -> tuple[int, str]:
    from .writer import SUCCESS_FILE  # the writer (pyarrow) loads when a run is mirrored, not at start-up

    name = rel.rsplit("/", 1)[-1]
    if name == SUCCESS_FILE:
        return 3, rel
    if name.startswith("runs-"):
        return 2, rel
    if name.startswith("trajectories-"):
        return 1, rel
    return 0, rel


class StoreMirror:
    """The local copy of some run directories of ``url`` (see the module docstring)."""

    def __init__(self, url: str, local: Path, run_dirs: set[str]) -> None:
        self.url = url
        self.local = local
        self.run_dirs = run_dirs
        #: relative path -> (size, mtime_ns) of the local file last known equal to the store's
        self._synced: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()

    def pull(self) -> int:
        """Copy what the store holds of these runs into the local copy; returns the file count."""
        files = storage.download_tree(self.url, self.local, only=self.run_dirs)
        for rel in files:
            st = (self.local / rel).stat()
            self._synced[rel] = (st.st_size, st.st_mtime_ns)
        return len(files)

    def _local_files(self) -> dict[str, tuple[int, int]]:
        from .writer import LOCK_FILE, TMP_PREFIX

        out = {}
        for d in self.run_dirs:
            root = self.local / d
            if not root.is_dir():
                continue
            for p in root.iterdir():
                if p.name.startswith((TMP_PREFIX, ".")) or p.name == LOCK_FILE or not p.is_file():
                    continue
                try:
                    st = p.stat()
                except FileNotFoundError:  # replaced or removed while listing
                    continue
                out[f"{d}/{p.name}"] = (st.st_size, st.st_mtime_ns)
        return out

    def push(self) -> int:
        """Upload what changed locally and remove what the writer removed; returns files uploaded."""
        with self._lock:
            now = self._local_files()
            changed = sorted((rel for rel, st in now.items() if self._synced.get(rel) != st), key=_order)
            uploaded = 0
            for rel in changed:
                if _order(rel)[0] == 1:  # the part's other tables first, even if they appeared late
                    uploaded += self._companions(rel)
                uploaded += self._upload(rel, now[rel])
            for rel in sorted(set(self._synced) - set(now)):
                if not (self.local / rel).exists():
                    storage.delete(f"{self.url}/{rel}")
                    del self._synced[rel]
            return uploaded

    def settle(self, run_id: str, scope: list[str]) -> bool:
        """Whether run ``run_id`` is complete in the store, counting what other shards uploaded
        meanwhile; if so and nobody has marked it yet, mark it (``_SUCCESS``) and upload that."""
        from .completion import run_is_complete
        from .writer import SUCCESS_FILE, finish_from_disk

        remote = storage.list_files(f"{self.url}/{run_id}")
        if SUCCESS_FILE in remote:
            return True
        for rel in sorted(remote):
            target = self.local / run_id / rel
            if not target.exists():
                storage.download_tree(f"{self.url}/{run_id}", self.local / run_id, only={rel})
                st = target.stat()
                self._synced[f"{run_id}/{rel}"] = (st.st_size, st.st_mtime_ns)
        run_dir = self.local / run_id
        if not run_is_complete(run_dir, scope):
            return False
        finish_from_disk(run_dir, completed_by="shard")
        self.push()
        return True

    def _companions(self, trajectories_rel: str) -> int:
        d, name = trajectories_rel.rsplit("/", 1)
        suffix = name[len("trajectories"):]
        n = 0
        for p in (self.local / d).glob(f"*{suffix}"):
            rel = f"{d}/{p.name}"
            if p.name != name and not p.name.startswith("."):
                st = p.stat()
                if self._synced.get(rel) != (st.st_size, st.st_mtime_ns):
                    n += self._upload(rel, (st.st_size, st.st_mtime_ns))
        return n

    def _upload(self, rel: str, st: tuple[int, int]) -> int:
        path = self.local / rel
        if not path.exists():
            return 0
        storage.upload_file(path, f"{self.url}/{rel}")
        self._synced[rel] = st
        return 1


class _Pusher(threading.Thread):
    def __init__(self, mirror: StoreMirror, every: float) -> None:
        super().__init__(name="agenthop-s3-push", daemon=True)
        self.mirror, self.every = mirror, every
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        while not self.stop.wait(self.every):
            try:
                self.mirror.push()
            except storage.StorageError as exc:  # kept locally; the final push reports it
                self.error = exc


@contextmanager
def mirrored_store(url: str, run_dirs: set[str], every: float = PUSH_EVERY_S) -> Iterator[StoreMirror]:
    """A local root for ``run_dirs`` of the store ``url``, pushed while in use and at the end."""
    local = make_temp_dir("agenthop-store-")  # a killed process's copy goes at the next start
    mirror = StoreMirror(url, local, run_dirs)
    pusher = _Pusher(mirror, every)
    try:
        mirror.pull()
        pusher.start()
        yield mirror
    finally:
        pusher.stop.set()
        if pusher.is_alive():
            pusher.join()
        try:
            mirror.push()
        except storage.StorageError as exc:
            kept = keep(local, "agenthop-kept-store-")  # under a name no later run removes
            raise storage.StorageError(f"{exc}; the runs' files are kept in {kept}") from None
        shutil.rmtree(local, ignore_errors=True)


@contextmanager
def local_copy(location: str | Path) -> Iterator[Path]:
    """``location`` as a local path: itself, or a temporary download of an ``s3://`` URL (the
    objects below it as a directory, or the one object it names as a file)."""
    if not storage.is_remote(location):
        yield Path(location)
        return
    url = str(location)
    with temp_dir("agenthop-download-") as tmp:
        target = tmp / url.rstrip("/").rsplit("/", 1)[-1]
        target.mkdir()
        if not storage.download_tree(url, target):
            target.rmdir()
            if not storage.download_file(url, target):
                raise storage.StorageError(f"{url}: no such directory or file (nothing is stored under it)")
        yield target


class StoreRun:
    """What ``agenthop-harness run`` works with locally: the release and the output root, and the
    store they stand for (``mirror`` is None for a local output root)."""

    def __init__(self, release: Path, root: Path, mirror: StoreMirror | None) -> None:
        self.release, self.root, self.mirror = release, root, mirror

    def show(self, path: str) -> str:
        """A local run directory under the name the user gave (its s3:// URL)."""
        if self.mirror is None or not path.startswith(str(self.root)):
            return path
        return self.mirror.url + path[len(str(self.root)):]

    def settle(self, run_id: str, scope: list[str]) -> bool:
        """After a shard's own last write: is the run complete in the store? (marks it if so)."""
        from .completion import run_is_complete
        from .writer import SUCCESS_FILE, finish_from_disk

        if self.mirror is None:
            run_dir = self.root / run_id
            if not run_is_complete(run_dir, scope):
                return False
            if not (run_dir / SUCCESS_FILE).exists():
                finish_from_disk(run_dir, completed_by="shard")
            return True
        self.mirror.push()
        return self.mirror.settle(run_id, scope)


@contextmanager
def run_store(data: str | Path, out: str | Path, run_ids: Callable[[Path], list[str]]) -> Iterator[StoreRun]:
    """The local release and output root of ``agenthop-harness run``: ``s3://`` ones are downloaded /
    mirrored (``run_ids(release)`` names the run directories the panel writes)."""
    from .release_store import release_copy

    with release_copy(data) as release:  # an s3:// release only with its completion marker
        try:
            if not storage.is_remote(out):
                yield StoreRun(release, Path(out), None)
                return
            with mirrored_store(str(out), set(run_ids(release))) as mirror:
                yield StoreRun(release, mirror.local, mirror)
        except AgentHopError as exc:  # a message naming the release's temporary copy names its URL
            if not storage.is_remote(data) or str(release) not in str(exc):
                raise
            raise AgentHopError(str(exc).replace(str(release), str(data))) from None


def scope_ids(release: Path, limit: int | None) -> list[str]:
    """The sample ids of a release's first ``limit`` items (all when None), in file order."""
    import orjson

    ids = []
    with open(release / __import__("agenthop.harness.benchmarks", fromlist=["detect"]).detect(release).release_marker, "rb") as fh:
        for line in fh:
            if line.strip():
                ids.append(orjson.loads(line)["id"])
                if limit is not None and len(ids) >= limit:
                    break
    return ids


def panel_run_ids(runs: Sequence[Any], release: Path, opts: Any) -> list[str]:
    """The run directory names a panel writes (the runner derives the same ones)."""
    from . import benchmarks
    from .run_identity import run_id_for

    try:
        sha = benchmarks.release_sha256(release)
    except AgentHopError:
        return []  # not a release: the caller reports it
    return [run_id_for(r, opts.caps, sha, opts.seed) for r in runs]


def settle_shards(results: Sequence[Any], store: StoreRun, opts: Any) -> None:
    """Give each result the name the user gave its directory, and turn a shard's finished share of
    a run into ``complete`` when the store shows every sample of the run final (marking it)."""
    from .run_result import COMPLETE, SHARD_DONE

    scope: list[str] | None = None
    for res in results:
        if res.status == SHARD_DONE:
            scope = scope if scope is not None else scope_ids(store.release, opts.limit)
            if store.settle(res.run_id, scope):
                res.status = COMPLETE
        res.run_dir = store.show(res.run_dir)
