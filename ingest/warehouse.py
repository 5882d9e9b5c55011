"""Opening the DuckDB warehouse for ingest, reading its state, and the single write transaction.

Byte-for-byte safety: everything is validated before the first write. The connection disables
DuckDB's optimistic writes, so even a failure inside the transaction leaves the database file
untouched after ROLLBACK (bulk appends stay in memory, or in DuckDB's temporary file, until COMMIT;
an ingest streaming an Inspect log into a new warehouse turns them on, as that file is removed if the
load fails: core.py). COMMIT checkpoints directly
(``wal_autocheckpoint`` 0): the appended rows are compressed into the file once, not written to the
WAL first.

A new warehouse is built under a temporary name of its own (``.<name>.new-<pid>@<host>.<random>``
beside it) and appears at its path only when its load has succeeded, by a hard link that fails if
the path exists meanwhile. So a warehouse file is only ever removed by the process that created it:
of two first ingests into one new path, the one that finishes second fails (nothing of it written)
instead of removing the other's warehouse, and a failed first load removes only its own file. The
temporary file of a killed first ingest is removed by the next ingest into that path.

What the write costs, and the two settings that cut it (docs/ingest.md#the-write):

- Long text is stored with ZSTD. DuckDB considers ZSTD for a string column only when its values
  average 4,096 characters or more, and gives up on its dictionary and FSST encodings for a column
  segment that holds a very long string (a tool output of 20,000 characters): such segments of
  ``raw.messages.content`` (1,000 characters on average) were stored uncompressed, so COMMIT copied
  every byte into the file and later scans read them all back. The ingest connection lowers the bar to
  :data:`ZSTD_MIN_STRING_LENGTH` characters; DuckDB still picks, per column segment, whichever
  method comes out smallest, so short strings keep their dictionary/FSST encodings. The setting
  only affects what this connection writes; older files (and files of an older storage version,
  which do not offer ZSTD) read and load as before.
- Bulk inserts run on one DuckDB thread (:func:`insert_arrow`). With insertion order preserved
  (DuckDB's default, kept so a table's rows stay in load order), a two-thread insert of the
  reference import's messages cost about twice the CPU of a one-thread insert and was not faster
  (the insert mostly copies memory). The COMMIT and
  every query keep all threads.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from agenthop.schemas.evolution import absent
from agenthop.schemas.trajectory import DEFAULT_BENCHMARK

from . import ddl
from .conform import IngestError

DEFAULT_DB = "warehouse/agenthop.duckdb"

_PID = re.compile(r"PID (\d+)")

#: Average length (characters) from which a string column segment may be stored with ZSTD
#: (DuckDB's own default is 4,096; module docstring).
ZSTD_MIN_STRING_LENGTH = 512


def default_db_path() -> str:
    """$AGENTHOP_DB, else the default; a URL there is an error (the warehouse is a local file)."""
    from agenthop.harness.storage import shown_url, url_scheme

    chosen = os.environ.get("AGENTHOP_DB") or DEFAULT_DB
    if url_scheme(chosen) is not None:
        shown = shown_url(chosen)  # never a user:password@ part
        raise IngestError(f"AGENTHOP_DB={shown}: the warehouse is a local DuckDB file, not a URL "
                          f"(for a local name that starts with '{url_scheme(chosen)}:', write ./{shown})")
    return chosen


def lock_error(path: Path, exc: BaseException) -> IngestError:
    m = _PID.search(str(exc))
    pid = m.group(1) if m else "unknown"
    return IngestError(
        f"warehouse {path} is in use by another process (PID {pid}): close it (a dbt run, "
        f"report, notebook or IDE holding the file) and retry, or use --db for another warehouse"
    )


def _open(path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    try:
        config = {"enable_optimistic_write": False}
        if not read_only:
            # a commit checkpoints straight into the file instead of first copying every appended
            # row into the WAL and checkpointing again at close (half the write cost of a big load)
            config["wal_autocheckpoint"] = "0KB"
            # long text (tool outputs) compressed instead of copied into the file as is (docstring)
            config["zstd_min_string_length"] = ZSTD_MIN_STRING_LENGTH
        return duckdb.connect(str(path), read_only=read_only, config=config)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise lock_error(path, exc) from None
        raise IngestError(f"warehouse {path} cannot be opened: {exc}") from None
    except duckdb.Error as exc:
        raise IngestError(f"warehouse {path} cannot be opened: {exc}") from None


@contextmanager
def open_warehouse(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """Read-write connection. A new warehouse is built under a temporary name and appears at
    ``path`` only if the block succeeds (module docstring); otherwise nothing is left."""
    made_dir: Path | None = None
    for anc in path.parents:  # a file where a folder should be: say so before DuckDB's IO error
        if anc.exists():
            if not anc.is_dir():
                raise IngestError(f"warehouse {path}: {anc} is a file, not a directory")
            break
    if not path.parent.exists():
        # the topmost missing folder, so a failed load removes every folder ingest created
        made_dir = next(a for a in reversed(path.parents) if not a.exists())
        try:
            path.parent.mkdir(parents=True)
        except OSError as exc:
            raise IngestError(f"warehouse directory {path.parent} cannot be created: {exc}") from None
    if path.exists():
        with _connected(path, path) as con:
            yield con
        return
    from agenthop.harness.temp_dirs import owner_tag, remove_stale

    prefix = f".{path.name}.new-"
    remove_stale(path.parent, prefix)  # left by a first ingest that was killed
    building = path.with_name(f"{prefix}{owner_tag()}{secrets.token_hex(6)}")
    try:
        with _connected(building, path) as con:
            yield con
            con.execute("CHECKPOINT")  # everything in the file itself, none in a WAL beside it
        _publish(building, path)
    except (IngestError, duckdb.Error) as exc:  # a message names the warehouse, not its temporary name
        if str(building) not in str(exc):
            raise
        raise IngestError(str(exc).replace(str(building), str(path))) from None
    finally:
        _remove_new(building, made_dir)


@contextmanager
def _connected(file: Path, path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to ``file`` (errors name the warehouse ``path``), closed afterwards."""
    try:
        con = _open(file)
    except IngestError as exc:
        raise IngestError(str(exc).replace(str(file), str(path))) from None
    try:
        yield con
    finally:
        con.close()


def _publish(building: Path, path: Path) -> None:
    """Give the finished new warehouse ``building`` its name ``path``, unless ``path`` exists by now."""
    taken = IngestError(
        f"warehouse {path} was created by another process while this load ran; nothing of this load was "
        "written: run it again to load these inputs into that warehouse")
    try:
        os.link(building, path)  # fails if the path exists: never replaces another's warehouse
    except FileExistsError:
        raise taken from None
    except OSError:  # a filesystem without hard links: check, then rename (a narrow window)
        if path.exists():
            raise taken from None
        try:
            os.rename(building, path)
        except OSError as exc:
            raise IngestError(f"warehouse {path} cannot be written: {exc.strerror or exc}") from None
    _sync_dir(path.parent)


def _sync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove_new(building: Path, made_dir: Path | None) -> None:
    """Remove this process's temporary warehouse file (with its WAL), and the folders ingest created
    for it if they are empty (a warehouse linked into place keeps them)."""
    for p in (building, Path(str(building) + ".wal")):
        try:
            p.unlink()
        except OSError:  # absent (renamed into place, or never made)
            pass
    if made_dir is not None:
        d = building.parent
        while True:  # from the warehouse's folder up to the topmost folder ingest created
            try:
                d.rmdir()
            except OSError:
                break
            if d == made_dir:
                break
            d = d.parent


@dataclass(slots=True)
class WarehouseState:
    """What ingest needs to know about the warehouse before deciding what to write."""

    has_layout: bool = False
    meta: dict[str, str] = field(default_factory=dict)
    #: run_id -> content_sha256 of the version currently loaded
    run_hashes: dict[str, str] = field(default_factory=dict)
    #: run_id -> benchmark_sha256 of the loaded runs
    run_benchmarks: dict[str, str] = field(default_factory=dict)
    #: run_id -> benchmark name of the loaded runs
    run_benchmark_names: dict[str, str] = field(default_factory=dict)
    #: benchmark name -> sha256 of its loaded release (raw.benchmarks)
    releases: dict[str, str] = field(default_factory=dict)
    #: statements that bring a warehouse of an earlier version to the current layout (run in the
    #: write transaction): columns added to the formats since, filled as old files read
    upgrades: list[str] = field(default_factory=list)
    #: the warehouse predates raw.benchmarks: its release is described only by warehouse_meta
    needs_catalogue: bool = False
    next_load_id: int = 1


def _table_exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    rows = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
        [ddl.RAW, table],
    ).fetchall()  # fetchall: DuckDB 2.0 refuses new work while a result is unfinished
    return bool(rows[0][0])


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
            [ddl.RAW, table],
        ).fetchall()
    ]


def _raw_columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Every table (or view) of the raw schema -> its columns in order, in two queries (one query
    per table cost about 1.5 ms each, 0.08 s for the layout check)."""
    found: dict[str, list[str]] = {
        t: [] for (t,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ?", [ddl.RAW]
        ).fetchall()
    }
    for table, column in con.execute(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = ? ORDER BY table_name, ordinal_position",
        [ddl.RAW],
    ).fetchall():
        if table in found:
            found[table].append(column)
    return found


def check_layout(con: duckdb.DuckDBPyConnection, path: Path) -> tuple[bool, list[str]]:
    """(layout exists, upgrade statements); an error if the layout is not one this version reads.

    A warehouse of an earlier version may lack tables and columns added since (``ddl.later_tables()``,
    fields marked optional on read); they are added by the upgrade statements.
    """
    tables = ddl.all_tables()
    later = ddl.later_tables()
    found = _raw_columns(con)
    present = [t for t in tables if t in found]
    if not present:
        return False, []
    upgrades: list[str] = []
    for table in tables:
        schema = ddl.warehouse_schema(table)
        expected = [f.name for f in schema]
        if table not in present:
            if table in later:
                continue
            actual: list[str] = []
        else:
            actual = found[table]
        missing = [f for f in schema if f.name not in actual]
        unexpected = [c for c in actual if c not in expected]
        if unexpected or any(absent(f) is None for f in missing):
            raise IngestError(
                f"warehouse {path}: raw.{table} does not have the expected columns "
                f"({', '.join(expected)}); it was made by another version; load into a new --db"
            )
        for f in missing:
            upgrades += ddl.add_column_sql(table, f)
    return True, upgrades


def read_state(con: duckdb.DuckDBPyConnection, path: Path) -> WarehouseState:
    state = WarehouseState()
    state.has_layout, state.upgrades = check_layout(con, path)
    if not state.has_layout:
        return state
    state.meta = dict(con.execute("SELECT key, value FROM raw.warehouse_meta").fetchall())
    name = "benchmark" if "benchmark" in _columns(con, "runs") else f"'{DEFAULT_BENCHMARK}'"
    rows = con.execute(
        f"""
        SELECT r.run_id, r.benchmark_sha256, l.content_sha256, {name}
        FROM raw.runs r
        LEFT JOIN (
            SELECT run_id, arg_max(content_sha256, load_id) AS content_sha256
            FROM raw.ingest_log
            WHERE run_id IS NOT NULL AND action IN ('inserted', 'replaced')
            GROUP BY run_id
        ) l USING (run_id)
        """
    ).fetchall()
    for run_id, bsha, csha, bname in rows:
        state.run_benchmarks[run_id] = bsha
        state.run_benchmark_names[run_id] = bname
        if csha is not None:
            state.run_hashes[run_id] = csha
    if _table_exists(con, "benchmarks"):
        state.releases = dict(con.execute("SELECT benchmark, sha256 FROM raw.benchmarks").fetchall())
    elif state.meta.get("benchmark_sha256"):
        state.releases = {DEFAULT_BENCHMARK: state.meta["benchmark_sha256"]}
        state.needs_catalogue = True
    rows = con.execute("SELECT coalesce(max(load_id), 0) + 1 FROM raw.ingest_log").fetchall()
    state.next_load_id = int(rows[0][0])
    return state


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, data: pa.Table, on_one_thread: bool = False) -> None:
    """Bulk insert an Arrow table into ``raw.<table>`` (columns by name).

    The rows are streamed through a RecordBatchReader whose batches are dropped as DuckDB consumes
    them: inside an open transaction DuckDB keeps a registered object alive until COMMIT, so
    registering the table itself would hold every inserted table in memory twice. Pass the only
    reference (``insert_arrow(con, t, tables.pop(t))``) to let the memory go. The insert runs on
    one DuckDB thread (module docstring); the connection's thread count is restored afterwards.
    ``on_one_thread``: the caller holds the connection at one thread already (reading the setting
    back, as ``one_thread`` does, is a query of about a millisecond per insert).
    """
    if data.num_rows == 0:
        return
    schema = data.schema
    batches = data.to_batches()
    del data

    def drain() -> Iterator[pa.RecordBatch]:
        while batches:
            yield batches.pop(0)

    __ingest_stream = pa.RecordBatchReader.from_batches(schema, drain())  # noqa: F841 (read by name)
    with nullcontext() if on_one_thread else one_thread(con):
        con.execute(  # DuckDB finds the stream by its local name (cheaper than registering it)
            f"INSERT INTO {ddl.RAW}.{table} ({ddl.column_list(schema)}) "
            f"SELECT {ddl.column_list(schema)} FROM __ingest_stream"
        ).fetchall()


@contextmanager
def one_thread(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Run the block on one DuckDB thread, then restore the connection's thread count (nothing to
    do when it is one already: changing it costs about a millisecond each way, as much as a small
    insert, so a caller doing many inserts holds one block around them all).

    After a failed statement DuckDB refuses every statement but ROLLBACK, so the count cannot be
    restored then; the failed load's connection is rolled back and closed anyway.
    """
    threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    if threads == 1:
        yield
        return
    con.execute("SET threads = 1")
    try:
        yield
    finally:
        try:
            con.execute(f"SET threads = {threads}")
        except duckdb.Error:
            pass


def release_arrow_memory() -> None:
    """Hand memory of freed Arrow buffers back to the OS (the pool keeps it otherwise)."""
    pa.default_memory_pool().release_unused()


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def json_counts(counts: dict[str, int]) -> str:
    return json.dumps(counts, sort_keys=False, separators=(",", ":"))
