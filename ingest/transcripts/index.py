"""The search index: the text units of every loaded run, stored in the warehouse (docs/search.md#index).

Schema ``search`` holds ``units`` (the units other than tool outputs, with their text: units.py),
``outputs`` (the tool outputs, most of a transcript's text, in a table of their own so that the
others can be stored ordered by source and role), each unit numbered (``uid``); the word index
(words.py: ``vocab`` and ``postings``, which units hold which words, so that a search for a literal
reads only the units holding it), ``indexed_runs`` (the runs it covers and the load that wrote each: the latest
``inserted``/``replaced`` load of ``raw.ingest_log``, 0 for a run loaded without a log row) and
``meta`` (the index's format version). Ingest calls :func:`sync_index` inside its write transaction
(and so does ``--delete-run``): runs deleted or replaced since leave the index, runs loaded since
enter it; unchanged runs cost nothing (a streamed Inspect log's runs enter it a group of samples at a
time while they are written, :func:`index_streamed`). ``agenthop-ingest --reindex`` drops and rebuilds it whole
(:func:`rebuild_index`). Runs are indexed in batches of about :data:`BATCH_MESSAGES` messages (a large
run in several, by item), so memory does not grow with the runs indexed at once.

Search reads the units through the index when it is current (:func:`is_current`) and otherwise the
same rows computed from the raw tables (slower, same answers), so a warehouse of an earlier version
searches before its next ingest.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from ..warehouse import one_thread
from . import words
from .prepared import Batch, RunUnits, batch_units
from .units import (COLUMNS, STORED_COLUMNS, indexed_units_sql, keyed_units_sql, output_keys_sql, unit_keys_sql,
                    units_sql)

SCHEMA = "search"
#: The index's format; an index of another version is rebuilt by the next sync.
VERSION = "3"
#: About this many messages are indexed per batch (one statement each; memory follows the batch).
BATCH_MESSAGES = 400_000
#: A batch's units are numbered by their columns without the text; then about this many at a time get
#: their text, go into the index and have their words collected, so that no sort or hash table holds the
#: text of a whole batch (which, under the memory cap of an import, spilled to disk).
CHUNK_UNITS = 20_000
#: A batch of up to about this many bytes of text has its words collected whole, once its units are
#: stored, so that a text repeated in several of its chunks (a system prompt, a tool's answer to the
#: same call in every model's run) is split into words once; a batch of more has the words of its
#: first chunks up to that size collected together, then those of each chunk as it is stored.
COLLECT_BYTES = 96_000_000
#: DuckDB's memory limit while ``--reindex`` runs: past it DuckDB writes to disk rather than keep every
#: page it read or wrote, so a rebuild's memory stays this size whatever the warehouse's.
REINDEX_MEMORY = "1GB"

#: The order units are written in: a search of one source or role (assistant messages) reads only the
#: row groups that hold it (DuckDB skips the others by their min/max), and within them a run's items
#: lie together, so fetching the text of the listed matches reads few row groups.
CLUSTER_ORDER = "source, role, run_id, sample_id, attempt, pos"
#: The tool outputs' order: that of the messages.
OUTPUT_ORDER = "run_id, sample_id, attempt, pos"

_CURRENT_RUNS = """
    SELECT r.run_id, coalesce(l.version, 0)::BIGINT AS version
    FROM (SELECT DISTINCT run_id FROM raw.trajectories) r
    LEFT JOIN (SELECT run_id, max(load_id) AS version FROM raw.ingest_log
               WHERE run_id IS NOT NULL AND action IN ('inserted', 'replaced') GROUP BY run_id) l USING (run_id)
"""


@dataclass(frozen=True)
class SyncResult:
    runs_added: int
    runs_removed: int
    units_added: int
    postings_added: int = 0


def _exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    rows = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
                       [SCHEMA, table]).fetchall()
    return bool(rows[0][0])


def has_raw_tables(con: duckdb.DuckDBPyConnection) -> bool:
    rows = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'raw' "
                       "AND table_name IN ('trajectories', 'turns', 'tool_calls', 'messages', 'ingest_log')").fetchall()
    return int(rows[0][0]) == 5


def _version(con: duckdb.DuckDBPyConnection) -> str | None:
    if not _exists(con, "meta"):
        return None
    rows = con.execute(f"SELECT value FROM {SCHEMA}.meta WHERE key = 'version'").fetchall()
    return rows[0][0] if rows else None


def is_current(con: duckdb.DuckDBPyConnection) -> bool:
    """The index exists in this version and covers exactly the loaded runs in their loaded versions."""
    if _version(con) != VERSION or not _exists(con, "units") or not _exists(con, "indexed_runs"):
        return False
    rows = con.execute(f"""
        SELECT (SELECT count(*) FROM ({_CURRENT_RUNS} EXCEPT SELECT run_id, version FROM {SCHEMA}.indexed_runs))
             + (SELECT count(*) FROM (SELECT run_id, version FROM {SCHEMA}.indexed_runs EXCEPT {_CURRENT_RUNS}))
    """).fetchall()
    return int(rows[0][0]) == 0


def relation(con: duckdb.DuckDBPyConnection, condition: str = "", candidates: str = "") -> tuple[str, int]:
    """What search reads units from: the index when current, else the raw tables' units (same rows); with
    ``condition`` (SQL with ``{text}`` where a unit's text goes) only the units whose text satisfies it,
    tested in each table's scan where the index is read, and with ``candidates`` (a relation of ``uid``s
    the word index gave: :func:`words.candidates`) only among those. Also: how many times the condition
    occurs in the SQL (its parameters are given that many times, in order)."""
    if candidates:  # the candidates' units, read by text_candidates: the condition is tested on those only
        where = f" WHERE {condition.format(text='text')}" if condition else ""
        return f"(SELECT * FROM {candidates}_units{where})", 1 if condition else 0
    if is_current(con):
        return f"({indexed_units_sql(SCHEMA, condition)})", 2 if condition else 0
    if condition:
        return f"(SELECT * FROM ({units_sql()}) WHERE {condition.format(text='text')})", 1
    return f"({units_sql()})", 0


def text_candidates(con: duckdb.DuckDBPyConnection, text: str, regex: bool, table: str, role: str = "any") -> bool:
    """Temp table ``table`` of the ``uid``s of the units that may hold ``text`` (words.py), and ``<table>_units``
    of those units, when the index is current and its word index can narrow the search; False (scan every
    unit) otherwise. The units are read first, by their number alone (so DuckDB decompresses the text
    of those rows only), and the text criterion is tested on them afterwards: given in the same query,
    DuckDB would test it in the scan of every unit, before the join that keeps the candidates."""
    if not (is_current(con) and words.candidates(con, SCHEMA, text, regex, table)):
        return False
    keep = "" if role == "any" else " WHERE role = ?"  # only the units of the role searched (``role``)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table}_units AS SELECT * FROM ({indexed_units_sql(SCHEMA, '', table)})"
                f"{keep}", [] if role == "any" else [role])
    return True


def _create(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    cols = ", ".join(f"{name} {typ}" for name, typ in STORED_COLUMNS)
    for table in ("units", "outputs"):
        con.execute(f"CREATE TABLE IF NOT EXISTS {SCHEMA}.{table} ({cols})")
    words.create(con, SCHEMA)
    con.execute(f"CREATE TABLE IF NOT EXISTS {SCHEMA}.indexed_runs (run_id VARCHAR NOT NULL, version BIGINT NOT NULL)")
    con.execute(f"CREATE TABLE IF NOT EXISTS {SCHEMA}.meta (key VARCHAR NOT NULL, value VARCHAR)")


def drop_index(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")


def _ready(con: duckdb.DuckDBPyConnection) -> None:
    """The index's tables in this version (an index of another version is dropped first)."""
    if _version(con) not in (None, VERSION):
        drop_index(con)
    _create(con)
    con.execute(f"DELETE FROM {SCHEMA}.meta WHERE key = 'version'")
    con.execute(f"INSERT INTO {SCHEMA}.meta VALUES ('version', ?)", [VERSION])


def _forget(con: duckdb.DuckDBPyConnection, runs: Sequence[str]) -> None:
    """Take ``runs`` out of the index: their units, their words' postings and counts, their rows of
    ``indexed_runs``."""
    if not runs:
        return
    con.execute("CREATE OR REPLACE TEMP TABLE __search_gone AS SELECT unnest(?::VARCHAR[]) AS run_id", [list(runs)])
    con.execute(f"CREATE OR REPLACE TEMP TABLE __search_gone_uids AS "
                f"SELECT uid FROM {SCHEMA}.units WHERE run_id IN (SELECT run_id FROM __search_gone) UNION ALL "
                f"SELECT uid FROM {SCHEMA}.outputs WHERE run_id IN (SELECT run_id FROM __search_gone)")
    words.forget(con, SCHEMA, "__search_gone_uids")
    for table in ("units", "outputs", "indexed_runs"):
        con.execute(f"DELETE FROM {SCHEMA}.{table} WHERE run_id IN (SELECT run_id FROM __search_gone)")
    con.execute("DROP TABLE __search_gone")
    con.execute("DROP TABLE __search_gone_uids")


def index_streamed(con: duckdb.DuckDBPyConnection, units: Sequence[RunUnits], first: Collection[str]) -> tuple[int, int]:
    """Index a group of samples of runs being written, as their rows go into the write transaction (an
    imported log, streamed: docs/search.md#index), from their rows in memory (prepared.py); returns the
    units and postings added. ``first``: the runs of ``units`` indexed here for the first time, whose
    earlier units (a replaced run's) leave the index first. :func:`sync_index` at the end of the
    transaction is told these runs (``streamed``): it records them as indexed without indexing them again.

    Each group's units are numbered in :data:`CLUSTER_ORDER` among themselves (as a large run's parts are,
    :func:`_batches`), so the index's rows are ordered group by group; its words follow the same rules
    as any later batch's (words.py), so a search finds the same units."""
    if not units:
        return 0, 0
    _ready(con)
    _forget(con, sorted(first))
    return _index_held(con, list(units))


def sync_index(con: duckdb.DuckDBPyConnection, prepared: Mapping[str, RunUnits] | None = None,
               streamed: Collection[str] = ()) -> SyncResult:
    """Bring the index up to date with the raw tables (call inside the write transaction).

    ``prepared``: the units of runs the caller still holds in memory (prepared.py), by run id, for
    the runs whose rows it has just written; the index takes those runs' units from there rather than
    reading their text back from the raw tables (same rows). Entries are dropped as they are used.
    ``streamed``: runs whose units :func:`index_streamed` indexed in this transaction, all of them (they
    are only recorded as indexed)."""
    if not has_raw_tables(con):
        return SyncResult(0, 0, 0)
    _ready(con)
    con.execute(f"CREATE OR REPLACE TEMP TABLE __search_current AS {_CURRENT_RUNS}")
    try:
        gone = [r[0] for r in con.execute(
            f"SELECT run_id FROM (SELECT run_id, version FROM {SCHEMA}.indexed_runs "
            f"EXCEPT SELECT run_id, version FROM __search_current)").fetchall()]
        new = [r[0] for r in con.execute(
            f"SELECT run_id FROM (SELECT run_id, version FROM __search_current "
            f"EXCEPT SELECT run_id, version FROM {SCHEMA}.indexed_runs)").fetchall()]
        _forget(con, gone)
        added = postings = 0
        for batch, runs in _batches(con, [r for r in new if r not in streamed]):
            # a batch of whole runs all held is taken from memory; any other (a part of a large run) is read
            held = [prepared.pop(r) for r in runs if r in prepared] if prepared and runs else []
            a, p = _index_batch(con, batch, held if held and len(held) == len(runs) else None)
            added += a
            postings += p
        if new:
            con.execute("CREATE OR REPLACE TEMP TABLE __search_new AS SELECT unnest(?::VARCHAR[]) AS run_id", [new])
            con.execute(f"INSERT INTO {SCHEMA}.indexed_runs SELECT run_id, version FROM __search_current "
                        f"WHERE run_id IN (SELECT run_id FROM __search_new)")
            con.execute("DROP TABLE __search_new")
    finally:
        con.execute("DROP TABLE IF EXISTS __search_current")
    return SyncResult(len(new), len(gone), added, postings)


def _batches(con: duckdb.DuckDBPyConnection, runs: list[str]) -> list[tuple[str, list[str]]]:
    """SQL conditions (on run_id and sample_id) that cut the messages of ``runs`` into batches of about
    BATCH_MESSAGES: small runs together, a large run in parts by a hash of the item. With each, the
    runs it holds whole (none for a part of a run)."""
    if not runs:
        return []
    rows = con.execute("SELECT run_id, count(*) FROM raw.messages WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
                       "GROUP BY run_id", [runs]).fetchall()
    sizes = {r: int(n) for r, n in rows}
    out: list[tuple[str, list[str]]] = []
    group: list[str] = []
    size = 0
    for run in sorted(runs):
        n = sizes.get(run, 0)
        if n > BATCH_MESSAGES:
            parts = -(-n // BATCH_MESSAGES)
            out += [(f"run_id IN ({_quoted([run])}) AND hash(sample_id) % {parts} = {k}", []) for k in range(parts)]
            continue
        if group and size + n > BATCH_MESSAGES:
            out.append((f"run_id IN ({_quoted(group)})", group))
            group, size = [], 0
        group.append(run)
        size += n
    if group:
        out.append((f"run_id IN ({_quoted(group)})", group))
    return out


def _quoted(values: list[str]) -> str:
    """SQL string literals, comma separated."""
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def _next_uid(con: duckdb.DuckDBPyConnection) -> int:
    rows = con.execute(f"SELECT greatest((SELECT max(uid) FROM {SCHEMA}.units), "
                       f"(SELECT max(uid) FROM {SCHEMA}.outputs))").fetchall()
    return int(rows[0][0] if rows and rows[0][0] is not None else 0) + 1


def _index_batch(con: duckdb.DuckDBPyConnection, batch: str, held: list[RunUnits] | None = None) -> tuple[int, int]:
    """Index the units of one batch (a condition on run_id and sample_id): their rows, then their words.
    ``held``: the batch's runs as the caller holds them (prepared.py), read instead of the raw tables
    (:func:`_index_held`).

    The units are numbered by their columns without the text (``__index_keys``: those of ``units`` in
    :data:`CLUSTER_ORDER`, then the tool outputs in :data:`OUTPUT_ORDER`). Then, :data:`CHUNK_UNITS` at a
    time in that order, their text is read from the raw tables (of the items the chunk holds only) and
    they go into the index; their words are collected (words.py) after the guess at the batch's common
    words, which reads the text of the units it samples: all together, read back from the index, for a
    batch of less text than :data:`COLLECT_BYTES`, else for the first chunks up to that size together
    and then for each chunk as it is stored. The rows, numbers and words are those of numbering and posting the whole
    batch at once; no sort carries the text of more than a chunk, no hash table more than a group's."""
    if held is not None:
        return _index_held(con, held)
    first = _next_uid(con)
    con.execute(f"CREATE OR REPLACE TEMP TABLE __index_keys AS SELECT *, {first - 1} + row_number() "
                f"OVER (ORDER BY {CLUSTER_ORDER}) AS uid FROM ({unit_keys_sql(batch)})")
    try:
        n_units = int(con.execute("SELECT count(*) FROM __index_keys").fetchall()[0][0])
        con.execute(f"INSERT INTO __index_keys SELECT *, {first - 1 + n_units} + row_number() "
                    f"OVER (ORDER BY {OUTPUT_ORDER}) AS uid FROM ({output_keys_sql(batch)})")
        added = int(con.execute("SELECT count(*) FROM __index_keys").fetchall()[0][0])
        if added == 0:
            return 0, 0
        total = added + int(con.execute(f"SELECT (SELECT count(*) FROM {SCHEMA}.units) + "
                                        f"(SELECT count(*) FROM {SCHEMA}.outputs)").fetchall()[0][0])
        sampled = f"uid % {words.SAMPLE_EVERY} = 0"
        n_sample = int(con.execute(f"SELECT count(*) FROM __index_keys WHERE {sampled}").fetchall()[0][0])
        names = ", ".join(name for name, _ in COLUMNS)
        if words.guesses(n_sample, total):
            with words.join_order_kept(con):
                con.execute(f"CREATE OR REPLACE TEMP TABLE __index_chunk AS SELECT uid, text FROM "
                            f"({keyed_units_sql('__index_keys', sampled, batch)})")
            words.guess_common(con, SCHEMA, "__index_chunk", n_sample, total)
        words.start(con)
        uncollected = 0  # bytes of text stored since `first` whose words are not collected yet (None: collected)
        for table, source, uids, runs, samples in _chunks(con):
            where = (f"run_id IN ({_quoted(runs)}) AND sample_id BETWEEN {_quoted([samples[0]])} "
                     f"AND {_quoted([samples[1]])}")
            with words.join_order_kept(con):
                con.execute(f"CREATE OR REPLACE TEMP TABLE __index_chunk AS "
                            f"{keyed_units_sql('__index_keys', f'uid BETWEEN {uids[0]} AND {uids[1]}', where, (source,))}")
            con.execute(f"INSERT INTO {SCHEMA}.{table} ({names}, uid) SELECT {names}, uid FROM __index_chunk ORDER BY uid")
            if uncollected is not None:
                uncollected += int(con.execute("SELECT coalesce(sum(strlen(text)), 0) FROM __index_chunk").fetchall()[0][0])
                if uncollected < COLLECT_BYTES:
                    continue
                uncollected = None  # past the bound: the chunks stored so far together, then each chunk alone
                words.collect(con, SCHEMA, _stored(first, uids[1]))
                continue
            words.collect(con, SCHEMA, "__index_chunk")
        if uncollected is not None:  # the whole batch together
            words.collect(con, SCHEMA, _stored(first, first + added - 1))
        return added, words.finish(con, SCHEMA, total)
    finally:
        con.execute("DROP TABLE IF EXISTS __index_keys")
        con.execute("DROP TABLE IF EXISTS __index_chunk")


def _stored(first: int, last: int) -> str:
    """The (``uid``, ``text``) of the units numbered ``first`` to ``last``, read back from the index."""
    both = " UNION ALL ".join(f"SELECT uid, text FROM {SCHEMA}.{table} WHERE uid BETWEEN {first} AND {last}"
                              for table in ("units", "outputs"))
    return f"({both})"


def _chunks(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, tuple[int, int], list[str], tuple[str, str]]]:
    """The chunks of ``__index_keys`` (:func:`_index_batch`): for each, the index table it goes to, the
    source of its units, its first and last ``uid``, and the runs and the range of sample ids that hold its units. A chunk takes
    the units of whole items of one source and role, in ``uid`` order, about :data:`CHUNK_UNITS` of them
    (an item with more, alone)."""
    groups = con.execute("SELECT source, role, run_id, sample_id, count(*), min(uid) FROM __index_keys "
                         "GROUP BY source, role, run_id, sample_id ORDER BY min(uid)").fetchall()
    out: list[tuple[str, str, tuple[int, int], list[str], tuple[str, str]]] = []
    kind: tuple[str, str] | None = None
    runs: dict[str, None] = {}
    samples: list[str] = []
    lo = hi = size = 0

    def close() -> None:
        if size and kind is not None:
            table = "outputs" if kind[0] == "tool_output" else "units"
            out.append((table, kind[0], (lo, hi), list(runs), (min(samples), max(samples))))

    for source, role, run_id, sample_id, n, uid in groups:
        if (source, role) != kind or size + n > CHUNK_UNITS:
            close()
            kind, runs, samples, lo, size = (source, role), {}, [], uid, 0
        runs[run_id] = None
        samples.append(sample_id)
        size += n
        hi = uid + n - 1
    close()
    return out


def _index_held(con: duckdb.DuckDBPyConnection, held: list[RunUnits]) -> tuple[int, int]:
    """Index a batch of runs the caller holds in memory (prepared.py): their units are numbered as
    :func:`_index_batch` numbers them, inserted from the Arrow rows, and their words posted at once."""
    first = _next_uid(con)
    units = batch_units(held, first)
    held.clear()  # the units hold the text now, until they are inserted
    _insert_held(con, units)
    added = units.n_units + units.n_outputs
    del units
    total = int(con.execute(f"SELECT (SELECT count(*) FROM {SCHEMA}.units) + (SELECT count(*) FROM {SCHEMA}.outputs)")
                .fetchall()[0][0])
    return added, words.post(con, SCHEMA, _stored(first, first + added - 1), added, total)


#: The unit columns of a held message, a held call and a held tool output (units.py's definitions)
_MESSAGE_UNIT = ("run_id, sample_id, attempt, turn, 'message', role, NULL, idx, NULL, coalesce(content, ''), uid",
                 "role = ?")
_CALL_UNIT = ("run_id, sample_id, attempt, turn, 'tool_args', 'assistant', tool, seq, status, "
              "coalesce(args_json, ''), uid", "true")
_OUTPUT_UNIT = ("run_id, sample_id, attempt, turn, 'tool_output', role, name, idx, NULL, coalesce(content, ''), uid",
                "role = 'tool'")


def _insert_held(con: duckdb.DuckDBPyConnection, batch: Batch) -> None:
    """Insert a batch of held units (prepared.py) into ``units`` and ``outputs`` in storage order: one
    statement per stored role, one for the calls, one for the outputs, each reading the Arrow rows
    where they lie (DuckDB copies the text once, into the table) and keeping their order."""
    names = ", ".join(name for name, _ in COLUMNS) + ", uid"
    steps = [("units", batch.messages, _MESSAGE_UNIT, [role]) for role in batch.roles]
    steps += [("units", batch.calls, _CALL_UNIT, []), ("outputs", batch.messages, _OUTPUT_UNIT, [])]
    # on one thread: a second one only doubles the CPU time of copying the text
    with one_thread(con):
        for table, rows, (select, where), params in steps:
            if rows.num_rows == 0:
                continue
            __search_held = pa.RecordBatchReader.from_batches(rows.schema, rows.to_batches())  # noqa: F841
            con.execute(f"INSERT INTO {SCHEMA}.{table} ({names}) SELECT {select} FROM __search_held WHERE {where}",
                        params).fetchall()


def rebuild_index(con: duckdb.DuckDBPyConnection) -> SyncResult:
    """Drop the index and build it again from the raw tables (``agenthop-ingest --reindex``)."""
    drop_index(con)
    return sync_index(con)


def reindex_warehouse(db: Path) -> SyncResult:
    """``agenthop-ingest --reindex``: rebuild the index of the warehouse at ``db`` in one transaction."""
    from ..conform import IngestError
    from ..warehouse import open_warehouse, read_state, transaction

    if not db.exists():
        raise IngestError(f"warehouse {db} does not exist")
    try:
        with open_warehouse(db) as con:
            con.execute(f"SET memory_limit = '{REINDEX_MEMORY}'")
            state = read_state(con, db)
            if not state.has_layout:
                raise IngestError(f"warehouse {db} has no runs loaded: nothing to index")
            with transaction(con):
                return rebuild_index(con)
    except duckdb.Error as exc:
        raise IngestError(f"warehouse {db}: reindex failed, nothing was changed: {exc}") from None
