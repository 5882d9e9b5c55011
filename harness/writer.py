"""Trajectory writer: one directory of Parquet parts per run (docs/formats.md#trajectory-store, docs/running.md).

Layout of ``OUT/<run_id>/``::

    runs-00000.parquet            one row; rewritten (atomically) when the run starts and ends
    trajectories-00000.parquet    part 0: every attempt of the samples flushed first
    turns-00000.parquet           part 0: the turns of exactly those samples
    tool_calls-00000.parquet      ...
    messages-00000.parquet        only when messages are recorded
    trajectories-00001.parquet    part 1 ...
    _SUCCESS                      JSON with row counts, written when the run has finished

Crash safety:
- every file is written to ``.tmp-<name>.<pid>`` in the same directory, fsynced, then ``os.replace``d
  over its final name, and the directory is fsynced;
- one flush writes one part number for every table; all rows of a sample (all attempts, all
  tables) go into the same part number; the ``trajectories`` part is renamed LAST;
- hence a sample is finished iff its final (``is_final``) trajectory row exists. On open, parts of
  other tables whose ``trajectories`` part is missing are orphans of a flush that crashed and are
  deleted, as are rows of other tables whose sample has no trajectory row in the same part number
  (left by an interrupted error-retry rewrite, below), and leftover temp files;
- a crash loses at most the samples in flight plus those finished since the last flush.

Error retry on resume (``retry_errors``, default on): samples whose final attempt ended with
``terminated_by = 'error'`` keep every row they have (failed attempts are kept, docs/harness.md#deliberate-differences: their
tokens were spent), but their trajectory rows are rewritten with ``is_final = false``, so the sample
counts as unfinished and the runner runs it again; the new attempts continue the numbering
(``RunState.next_attempt``), so keys stay unique and tokens are never double counted.

Compaction (:func:`compact_run_dir`, on a complete ``close``): every table's parts are merged into one
part with the next part number; the merged ``trajectories`` part names the parts it replaces in its
metadata and is renamed last, then the old parts are deleted (a crash in between is finished on open).

Write failures (full disk, read-only file system) become one AgentHopError naming the run directory;
temp files are removed, so what was renamed into place before is intact.

A lock file (``.lock``, ``flock``) stops two processes from writing the same run directory. A shard
(``--shard k/n``) locks only its own ``.lock-<k>of<n>``, so shards of a run write it side by side,
while an unsharded run and a shard refuse each other (either would write the other's samples
again); an unsharded run that is refused names the shard locks held.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from ..schemas.evolution import absent, later_fields
from ..schemas.trajectory import RUNS, TABLES
from .errors import AgentHopError
from .shards import SPAN as SHARD_SPAN
from .shards import Shard

#: Per-sample tables, in the order a flush writes them (trajectories LAST).
PART_TABLES: tuple[str, ...] = ("messages", "tool_calls", "turns", "trajectories")
#: Tables every flush writes (``messages`` only when recorded).
REQUIRED_PART_TABLES: tuple[str, ...] = ("tool_calls", "turns", "trajectories")
RUNS_FILE = "runs-00000.parquet"
SUCCESS_FILE = "_SUCCESS"
LOCK_FILE = ".lock"
#: a shard's own lock (harness/shards.py)
SHARD_LOCK_RE = re.compile(r"^\.lock-\d+of\d+$")
TMP_PREFIX = ".tmp-"
COMPRESSION = "zstd"
REDACTED = "[redacted]"

_PART_RE = re.compile(r"^(trajectories|turns|tool_calls|messages)-(\d{5,})\.parquet$")


class AttemptLike(Protocol):
    """What ``loop.run_sample`` returns per attempt: row dicts keyed by schema columns minus run_id."""

    trajectory: dict[str, Any]
    turns: list[dict[str, Any]]
    tool_calls: list[dict[str, Any]]
    messages: list[dict[str, Any]]


def _repair(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)


def part_name(table: str, part: int) -> str:
    return f"{table}-{part:05d}.parquet"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_parquet_atomic(path: Path, table: pa.Table, *, sync_dir: bool = False,
                         compression: str = COMPRESSION) -> None:
    """Write ``table`` to ``path`` via a temp file in the same directory: write, fsync, rename."""
    tmp = path.with_name(f"{TMP_PREFIX}{path.name}.{os.getpid()}")
    try:
        pq.write_table(table, tmp, compression=compression)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    if sync_dir:
        _fsync_dir(path.parent)


def _unlink_quietly(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:  # a read-only directory: the temp file was never created, or stays for recovery
        pass


def write_text_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f"{TMP_PREFIX}{path.name}.{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    _fsync_dir(path.parent)


class _WriteGuard:
    """``with _WriteGuard(run_dir):`` turns an OSError (full disk, read-only file system, no permission)
    into one clear AgentHopError naming the run directory; what was renamed into place before is intact."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir

    def __enter__(self) -> None:
        return None

    def __exit__(self, etype: Any, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, OSError):
            reason = exc.strerror or str(exc)
            raise AgentHopError(
                f"{self.run_dir}: cannot write ({reason}); samples written before are intact, rerun to resume"
            ) from None


def list_parts(run_dir: Path) -> dict[str, dict[int, Path]]:
    """``{table: {part_number: path}}`` of the part files in a run directory."""
    parts: dict[str, dict[int, Path]] = {t: {} for t in PART_TABLES}
    if not run_dir.is_dir():
        return parts
    for entry in os.scandir(run_dir):
        m = _PART_RE.match(entry.name)
        if m:
            parts[m.group(1)][int(m.group(2))] = Path(entry.path)
    return parts


def _read(path: Path, columns: Sequence[str]) -> pa.Table:
    try:
        return pq.read_table(path, columns=list(columns))
    except (OSError, pa.ArrowException) as exc:
        raise AgentHopError(
            f"{path}: unreadable part file ({' '.join(str(exc).split())}); "
            "move it away to run its samples again"
        ) from None


def disk_totals(parts: dict[str, dict[int, Path]]) -> tuple[int, int, int]:
    """(correct finals, total_tokens of every attempt, finals) over the trajectories parts."""
    correct = tokens = n = 0
    for path in parts["trajectories"].values():
        t = _read(path, ["is_final", "is_correct", "total_tokens"])
        for f, ok, tok in zip(*(t.column(c).to_pylist() for c in ("is_final", "is_correct", "total_tokens"))):
            tokens += int(tok or 0)
            if f:
                n += 1
                correct += bool(ok)
    return correct, tokens, n


def finished_samples(run_dir: str | Path) -> set[str]:
    """Sample ids that have a final trajectory row in ``run_dir`` (i.e. are finished)."""
    done: set[str] = set()
    for path in list_parts(Path(run_dir))["trajectories"].values():
        t = _read(path, ["sample_id", "is_final"])
        ids = t.column("sample_id").to_pylist()
        finals = t.column("is_final").to_pylist()
        done.update(s for s, f in zip(ids, finals) if f)
    return done


@dataclass
class RunState:
    """What a run directory already holds (after recovery)."""

    #: sample_id -> (is_correct, terminated_by) of its final attempt
    finals: dict[str, tuple[bool, str]] = field(default_factory=dict)
    #: total_tokens summed over every attempt row (what the run has spent)
    tokens: int = 0
    next_part: int = 0
    removed_orphan_parts: list[str] = field(default_factory=list)
    removed_orphan_rows: int = 0
    retried_error_samples: list[str] = field(default_factory=list)
    #: per sample already in the directory: the attempt number its next attempt gets
    next_attempt: dict[str, int] = field(default_factory=dict)

    @property
    def n_correct(self) -> int:
        return sum(1 for ok, _ in self.finals.values() if ok)


def _own_temp(name: str, shard: Shard | None) -> bool:
    """A temp file this writer may remove: any, or for a shard only those of its own parts."""
    if shard is None:
        return True
    m = _PART_RE.match(name[len(TMP_PREFIX):].rsplit(".", 1)[0])
    return m is not None and shard.owns_part(int(m.group(2)))


def recover_run_dir(run_dir: Path, *, retry_errors: bool = True, shard: Shard | None = None) -> RunState:
    """Make a run directory consistent after a crash and return what it holds (see module doc).

    A shard repairs only the parts it may have written (its own range, and those of an earlier
    unsharded invocation): the other shards may be writing theirs at this moment.
    """
    state = RunState()
    if not run_dir.is_dir():
        return state
    for entry in os.scandir(run_dir):
        if entry.name.startswith(TMP_PREFIX) and _own_temp(entry.name, shard):
            os.unlink(entry.path)
    changed = _finish_compaction(run_dir) if shard is None else False

    def mine(k: int) -> bool:
        return shard is None or shard.owns_part(k) or k < SHARD_SPAN

    parts = list_parts(run_dir)
    traj_parts = parts["trajectories"]
    # 1. orphan parts: other tables' parts whose trajectories part never got written
    for table in ("messages", "tool_calls", "turns"):
        for k, path in sorted(parts[table].items()):
            if k not in traj_parts and mine(k):
                path.unlink()
                state.removed_orphan_parts.append(path.name)
                del parts[table][k]
                changed = True
    # 2. error-terminated samples are removed so that they run again (trajectories first)
    cols = ["sample_id", "attempt", "is_final", "is_correct", "terminated_by", "total_tokens"]
    part_samples: dict[int, set[str]] = {}
    for k, path in sorted(traj_parts.items()):
        t = _read(path, cols)
        ids = t.column("sample_id").to_pylist()
        finals = t.column("is_final").to_pylist()
        term = t.column("terminated_by").to_pylist()
        errors = ({s for s, f, tb in zip(ids, finals, term) if f and tb == "error"}
                  if retry_errors and mine(k) else set())
        for s, a in zip(ids, t.column("attempt").to_pylist()):
            state.next_attempt[s] = max(state.next_attempt.get(s, 0), int(a) + 1)
        if errors:
            (run_dir / SUCCESS_FILE).unlink(missing_ok=True)  # the run is no longer finished
            full = pq.read_table(path)
            col = full.schema.get_field_index("is_final")
            unfinal = pa.array([f and s not in errors for s, f in zip(ids, finals)], pa.bool_())
            write_parquet_atomic(path, full.set_column(col, full.schema.field(col), unfinal), sync_dir=True)
            state.retried_error_samples.extend(sorted(errors))
            t = _read(path, cols)
            changed = True
        part_samples[k] = set(ids)
        for s, f, ok, tb, tok in zip(
            ids, t.column("is_final").to_pylist(), t.column("is_correct").to_pylist(),
            t.column("terminated_by").to_pylist(), t.column("total_tokens").to_pylist(),
        ):
            state.tokens += int(tok or 0)
            if f:
                if s in state.finals:
                    raise AgentHopError(f"{path}: sample {s} has a final trajectory row in two parts")
                state.finals[s] = (bool(ok), str(tb))
    # 3. orphan rows: rows of other tables whose sample has no trajectory row in the same part
    for table in ("messages", "tool_calls", "turns"):
        for k, path in sorted(parts[table].items()):
            if not mine(k):
                continue
            ids = _read(path, ["sample_id"]).column("sample_id").to_pylist()
            allowed = part_samples.get(k, set())
            if any(s not in allowed for s in ids):
                full = pq.read_table(path)
                keep = pa.array([s in allowed for s in ids], pa.bool_())
                state.removed_orphan_rows += len(ids) - sum(1 for s in ids if s in allowed)
                write_parquet_atomic(path, full.filter(keep))
                changed = True
    if changed:
        _fsync_dir(run_dir)
    numbers = [k for table in parts.values() for k in table if shard is None or shard.owns_part(k)]
    base = shard.part_base if shard is not None else 0
    state.next_part = max(numbers) + 1 if numbers else base
    return state


#: Parquet key-value metadata of a compacted ``trajectories`` part: the part numbers it replaces
COMPACTED_FROM = b"agenthop.compacted_from"


def _finish_compaction(run_dir: Path) -> bool:
    """Delete the parts a compacted part replaces (a compaction that crashed before deleting them)."""
    parts = list_parts(run_dir)
    replaced: set[int] = set()
    for k, path in parts["trajectories"].items():
        try:
            meta = pq.read_schema(path).metadata or {}
        except (OSError, pa.ArrowException):
            continue  # unreadable parts are reported by the reads that follow
        if COMPACTED_FROM in meta:
            replaced.update(int(n) for n in json.loads(meta[COMPACTED_FROM]) if int(n) != k)
    if not replaced:
        return False
    for table in ("messages", "tool_calls", "turns", "trajectories"):  # trajectories last, as always
        for k in sorted(replaced):
            path = parts[table].get(k)
            if path is not None:
                path.unlink(missing_ok=True)
    return True


def compact_run_dir(run_dir: str | Path, cached: Mapping[tuple[str, int], pa.Table] | None = None) -> int:
    """Merge every table's parts into one part each (a new part number); returns the parts replaced.

    Crash-safe like a flush: the merged parts of the other tables are written first (orphans until the
    merged ``trajectories`` part exists), the merged ``trajectories`` part, which names the part numbers
    it replaces in its metadata, is renamed into place last, and only then are the old parts deleted; a
    crash before that deletion is finished by the next open (:func:`recover_run_dir`). Rows are kept as
    they are (same columns, same order), so ingest loads exactly the same rows. ``cached`` holds the
    tables of parts this process wrote (``(table, part) -> Table``), which are then not read back.
    """
    run_dir = Path(run_dir)
    parts = list_parts(run_dir)
    numbers = sorted(parts["trajectories"])
    if len(numbers) <= 1 and all(len(parts[t]) <= 1 for t in PART_TABLES):
        return 0
    k = max(n for table in parts.values() for n in table) + 1
    for table in PART_TABLES:  # trajectories last
        numbers_t = sorted(parts[table])
        if not numbers_t:
            continue
        cache = cached or {}
        tables = [cache[(table, n)] if (table, n) in cache else pq.read_table(parts[table][n]) for n in numbers_t]
        merged = pa.concat_tables(tables, promote_options="default")
        if table == "trajectories":
            _fsync_dir(run_dir)  # the other tables' merged parts are durable before this rename
            meta = dict(merged.schema.metadata or {})
            meta[COMPACTED_FROM] = json.dumps(numbers).encode()
            merged = merged.replace_schema_metadata(meta)
        write_parquet_atomic(run_dir / part_name(table, k), merged, sync_dir=table == "trajectories")
    for table in ("messages", "tool_calls", "turns", "trajectories"):
        for n, path in parts[table].items():
            if n != k:
                path.unlink()
    _fsync_dir(run_dir)
    return len(numbers)


def rows_to_table(rows: Sequence[Mapping[str, Any]], table: str, run_id: str) -> pa.Table:
    """Arrow table of ``rows`` (dicts keyed by the schema's columns minus run_id) plus run_id."""
    schema = TABLES[table]
    idx = schema.get_field_index("run_id")
    body = schema.remove(idx)
    try:
        t = pa.Table.from_pylist(list(rows), schema=body)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise ValueError(f"{table}: rows do not match the Arrow schema: {exc}") from exc
    t = t.add_column(idx, schema.field("run_id"), pa.array([run_id] * t.num_rows, pa.string()))
    for i, fld in enumerate(schema):
        if not fld.nullable and t.column(i).null_count:
            col = t.column(i)
            where = ""
            if "sample_id" in t.column_names:
                bad = next(j for j, v in enumerate(col.to_pylist()) if v is None)
                where = f" (sample {t.column('sample_id')[bad].as_py()})"
            raise ValueError(f"{table}.{fld.name}: missing value in a non-nullable column{where}")
    return t


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class RunWriter:
    """Buffers finished samples and flushes them as Parquet parts into ``out_root/<run_id>/``.

    ``run_meta`` holds the ``runs`` row columns except started_at/finished_at. Usage::

        w = RunWriter(out, meta, record_messages=False)   # locks + recovers the directory
        w.finished                                        # sample ids already done
        w.begin()                                         # clears _SUCCESS, writes the runs row
        w.add(sample_id, attempts) ...                    # flushes every flush_every / flush_seconds
        w.close(complete=True)                            # final flush, runs row, _SUCCESS
    """

    def __init__(
        self,
        out_root: str | Path,
        run_meta: Mapping[str, Any],
        *,
        record_messages: bool = True,
        flush_every: int = 200,
        flush_seconds: float = 30.0,
        retry_errors: bool = True,
        extra_success: Mapping[str, Any] | None = None,
        compact: bool = True,
        secrets: Sequence[str] = (),
        repair_text: bool = False,
        shard: Shard | None = None,
    ) -> None:
        self.run_meta = dict(run_meta)
        #: this writer's shard (harness/shards.py): own part numbers and lock, no compaction
        self.shard = shard
        #: strings (API key, base URL, host) replaced by ``[redacted]`` in every row before it is buffered
        self.secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))
        #: replace lone surrogates (which UTF-8 cannot encode) by U+FFFD in every string (real backends)
        self.repair_text = repair_text
        self.run_id: str = self.run_meta["run_id"]
        for f in later_fields(RUNS):  # columns added later have a declared value when not given
            how = absent(f)
            if f.name not in self.run_meta and how is not None and how.copy_of is None:
                self.run_meta[f.name] = how.default
        missing = [f.name for f in RUNS if f.name not in self.run_meta and f.name not in ("started_at", "finished_at")]
        if missing:
            raise ValueError(f"run_meta lacks runs columns: {', '.join(missing)}")
        self.run_dir = Path(out_root) / self.run_id
        self.record_messages = record_messages
        self.flush_every = max(1, int(flush_every))
        self.flush_seconds = float(flush_seconds)
        self.extra_success = dict(extra_success or {})
        #: merge the part files into one per table when the run has finished
        self.compact = compact and shard is None
        #: the tables of the parts this writer wrote, so that compaction need not read them back
        self._written: dict[tuple[str, int], pa.Table] = {}
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise AgentHopError(f"{self.run_dir}: cannot create run directory ({exc.strerror or exc})") from None
        #: the lock this writer holds: ``.lock``, or a shard's own (harness/shards.py)
        self._lock_fh = _lock_run_dir(self.run_dir, shard)
        try:
            with _WriteGuard(self.run_dir):
                self.state = recover_run_dir(self.run_dir, retry_errors=retry_errors, shard=shard)
        except BaseException:
            self._release()
            raise
        self._next_part = self.state.next_part
        self._buf: dict[str, list[dict[str, Any]]] = {t: [] for t in PART_TABLES}
        self._pending: list[str] = []
        self._last_flush = time.monotonic()
        self._started_at = self._existing_started_at() or _utcnow()
        self._begun = False
        self._closed = False
        #: samples added by this writer (this invocation)
        self.n_added = 0

    # ----------------------------------------------------------------- state
    @property
    def finished(self) -> set[str]:
        return set(self.state.finals)

    @property
    def succeeded(self) -> bool:
        """The directory carries a ``_SUCCESS`` marker from an earlier finished invocation."""
        return (self.run_dir / SUCCESS_FILE).exists()

    @property
    def pending(self) -> int:
        return len(self._pending)

    def _existing_started_at(self) -> datetime | None:
        path = self.run_dir / RUNS_FILE
        if not path.exists():
            return None
        try:
            value = pq.read_table(path, columns=["started_at"]).column(0)[0].as_py()
        except (OSError, pa.ArrowException, IndexError, KeyError):
            return None
        return value

    # ----------------------------------------------------------------- writing
    def _runs_table(self, finished_at: datetime | None) -> pa.Table:
        row = {f.name: self.run_meta.get(f.name) for f in RUNS}
        row["started_at"] = self._started_at
        row["finished_at"] = finished_at
        return pa.Table.from_pylist([row], schema=RUNS)

    def begin(self) -> None:
        """Mark the run as in progress: drop ``_SUCCESS`` and write the runs row without finished_at."""
        with _WriteGuard(self.run_dir):
            (self.run_dir / SUCCESS_FILE).unlink(missing_ok=True)
            write_parquet_atomic(self.run_dir / RUNS_FILE, self._runs_table(None), sync_dir=True)
        self._begun = True

    def add(self, sample_id: str, attempts: Sequence[AttemptLike]) -> None:
        """Buffer every attempt of one finished sample; flush when due."""
        if not self._begun:
            raise RuntimeError("RunWriter.begin() must be called before add()")
        if sample_id in self.state.finals:
            raise ValueError(f"sample {sample_id} is already finished in {self.run_dir}")
        if not attempts:
            raise ValueError(f"sample {sample_id}: no attempts")
        n = len(attempts)
        clean = self._clean
        for i, att in enumerate(attempts):
            tr = clean(att.trajectory)
            turns = att.turns if not self.repair_text else [clean(r) for r in att.turns]
            tr.setdefault("sample_id", sample_id)
            tr.setdefault("attempt", i)
            tr.setdefault("is_final", i == n - 1)
            if tr["sample_id"] != sample_id or bool(tr["is_final"]) != (i == n - 1):
                raise ValueError(
                    f"sample {sample_id}: attempt {i} has sample_id={tr['sample_id']!r}, "
                    f"is_final={tr['is_final']!r} (only the last attempt is final)"
                )
            self._buf["trajectories"].append(tr)
            self._buf["turns"].extend(turns)
            self._buf["tool_calls"].extend(clean(r) for r in att.tool_calls)
            if self.record_messages:
                self._buf["messages"].extend(clean(r) for r in att.messages)
            self.state.tokens += int(tr.get("total_tokens") or 0)
        final = self._buf["trajectories"][-1]
        self.state.finals[sample_id] = (bool(final.get("is_correct")), str(final.get("terminated_by")))
        self._pending.append(sample_id)
        self.n_added += 1
        if len(self._pending) >= self.flush_every or time.monotonic() - self._last_flush >= self.flush_seconds:
            self.flush()

    def _clean(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``row`` with every secret in its string values redacted (a server may echo them)."""
        out = dict(row)
        if self.secrets or self.repair_text:
            for k, v in out.items():
                if isinstance(v, str):
                    for secret in self.secrets:
                        if secret in v:
                            v = v.replace(secret, REDACTED)
                    if self.repair_text:
                        v = _repair(v)
                    out[k] = v
        return out

    def flush_if_due(self) -> None:
        """Flush when samples are buffered and ``flush_seconds`` have passed since the last flush."""
        if self._pending and time.monotonic() - self._last_flush >= self.flush_seconds:
            self.flush()

    def flush(self) -> None:
        """Write the buffered samples as one new part number (no-op when nothing is buffered)."""
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        with _WriteGuard(self.run_dir):
            self._write_part(self._buf)
        self._buf = {t: [] for t in PART_TABLES}
        self._pending = []

    def _write_part(self, buf: Mapping[str, list[dict[str, Any]]]) -> None:
        k = self._next_part
        tables = {t: rows_to_table(buf[t], t, self.run_id) for t in PART_TABLES
                  if t in REQUIRED_PART_TABLES or self.record_messages or buf[t]}
        for t in PART_TABLES:  # trajectories last
            if t == "trajectories":
                _fsync_dir(self.run_dir)  # the other tables' renames are durable before this one
            if t in tables:
                # parts that compaction will merge (and compress) are written uncompressed: one compression
                write_parquet_atomic(self.run_dir / part_name(t, k), tables[t], sync_dir=t == "trajectories",
                                     compression="none" if self.compact else COMPRESSION)
                if self.compact:
                    self._written[(t, k)] = tables[t]
        self._next_part = k + 1

    def close(self, complete: bool) -> dict[str, Any] | None:
        """Flush; when ``complete``, write finished_at into the runs row and the ``_SUCCESS`` marker.

        Returns the marker's content (or None for an incomplete run). Always releases the lock.
        """
        if self._closed:
            return None
        try:
            if self._begun:
                self.flush()
            if not complete:
                return None
            if not self._begun:
                self.begin()
            with _WriteGuard(self.run_dir):
                if not list_parts(self.run_dir)["trajectories"]:  # an empty run still has every table
                    self._write_part({t: [] for t in PART_TABLES})
                if self.compact:
                    compact_run_dir(self.run_dir, self._written)
                    self._written = {}
                finished_at = _utcnow()
                write_parquet_atomic(self.run_dir / RUNS_FILE, self._runs_table(finished_at), sync_dir=True)
                info = self._success_info(finished_at)
                write_text_atomic(self.run_dir / SUCCESS_FILE, json.dumps(info, indent=2, sort_keys=True) + "\n")
            return info
        finally:
            self._closed = True
            self._release()

    def _success_info(self, finished_at: datetime) -> dict[str, Any]:
        parts = list_parts(self.run_dir)
        rows = {t: sum(pq.read_metadata(p).num_rows for p in parts[t].values()) for t in PART_TABLES}
        # a shard counts what every shard wrote (on disk), not what it holds
        n_correct, tokens, n = disk_totals(parts) if self.shard else (
            self.state.n_correct, self.state.tokens, len(self.state.finals))
        return {
            "run_id": self.run_id,
            "n_samples": n,
            "n_correct": n_correct,
            "accuracy": round(n_correct / n, 6) if n else None,
            "total_tokens": tokens,
            "rows": {"runs": 1, **rows},
            "parts": len(parts["trajectories"]),
            "started_at": self._started_at.isoformat(),
            "finished_at": finished_at.isoformat(),
            "harness_version": self.run_meta.get("harness_version"),
            **self.extra_success,
        }

    def _release(self) -> None:
        try:
            fcntl.flock(self._lock_fh, fcntl.LOCK_UN)
        finally:
            self._lock_fh.close()

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._closed:
            self.close(complete=False)


def _flock(run_dir: Path, name: str) -> Any | None:
    """``name`` in ``run_dir`` opened (made if absent) and locked exclusively; None if it is held."""
    try:
        fh = open(run_dir / name, "a")  # noqa: SIM115 - held until the writer closes
    except OSError as exc:
        raise AgentHopError(f"{run_dir}: cannot write the run directory ({exc.strerror or exc})") from None
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        return None
    return fh


def _held(path: Path) -> bool:
    """Whether a process holds the lock file ``path`` now (an absent file is held by nobody)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken
    return False


def held_shard_locks(run_dir: Path) -> list[str]:
    """The shard locks (``.lock-<k>of<n>``) of ``run_dir`` that a running shard holds, in order."""
    return [p.name for p in sorted(run_dir.glob(".lock-*of*")) if SHARD_LOCK_RE.match(p.name) and _held(p)]


def _lock_run_dir(run_dir: Path, shard: Shard | None) -> Any:
    """Take the lock of a writer of ``run_dir``: ``.lock`` unsharded, a shard's own ``.lock-<k>of<n>``
    otherwise. Each first locks its own file, then looks at the other kind's: an unsharded writer
    refuses while a shard holds its lock, a shard while an unsharded writer holds ``.lock`` (either
    would run the other's samples again). As each looks only after taking its own, of two that
    start together at least one sees the other."""
    name = LOCK_FILE if shard is None else shard.lock_name
    fh = _flock(run_dir, name)
    if fh is None:
        raise AgentHopError(
            f"{run_dir}: this run{' shard' if shard else ''} is being written by another process (lock {name})")
    if shard is None:
        shards = held_shard_locks(run_dir)
        refusal = (f"{run_dir}: shards of this run are writing it (locks {', '.join(shards)}); an unsharded run "
                   "beside them would run their samples again: wait until they finish, or run the missing shards "
                   "with --shard") if shards else None
    else:
        refusal = (f"{run_dir}: an unsharded run is writing this run (lock {LOCK_FILE}); shard {shard} beside it "
                   "would run its samples again: wait until it finishes (a shard started afterwards finds its "
                   "share done)") if _held(run_dir / LOCK_FILE) else None
    if refusal is not None:
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()
        raise AgentHopError(refusal)
    return fh


def finish_from_disk(run_dir: Path, **extra: Any) -> dict[str, Any]:
    """Mark a run directory that its files show complete as finished (``finished_at`` in its runs row,
    then ``_SUCCESS`` from what is on disk); for the shard that finds a run complete after its writer
    closed (harness/store_mirror.py). Returns the marker's content."""
    finished_at = _utcnow()
    runs_path = run_dir / RUNS_FILE
    runs = pq.read_table(runs_path)
    col = runs.schema.get_field_index("finished_at")
    runs = runs.set_column(col, runs.schema.field(col), pa.array([finished_at] * runs.num_rows,
                                                                  runs.schema.field(col).type))
    write_parquet_atomic(runs_path, runs, sync_dir=True)
    parts = list_parts(run_dir)
    n_correct, tokens, n = disk_totals(parts)
    info = {
        "run_id": run_dir.name,
        "n_samples": n,
        "n_correct": n_correct,
        "accuracy": round(n_correct / n, 6) if n else None,
        "total_tokens": tokens,
        "rows": {"runs": 1, **{t: sum(pq.read_metadata(p).num_rows for p in parts[t].values()) for t in PART_TABLES}},
        "parts": len(parts["trajectories"]),
        "finished_at": finished_at.isoformat(),
        **extra,
    }
    write_text_atomic(run_dir / SUCCESS_FILE, json.dumps(info, indent=2, sort_keys=True) + "\n")
    return info


def read_success(run_dir: str | Path) -> dict[str, Any] | None:
    path = Path(run_dir) / SUCCESS_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise AgentHopError(f"{path}: unreadable success marker ({exc})") from None


def iter_run_dirs(out_root: str | Path) -> Iterable[Path]:
    root = Path(out_root)
    if root.is_dir():
        for p in sorted(root.iterdir()):
            if (p / RUNS_FILE).exists():
                yield p
