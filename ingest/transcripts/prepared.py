"""The index's units of runs whose tables an ingest still holds in memory (docs/search.md#index).

The search index stores every unit's text a second time (index.py). Computed by units.py's SELECT,
that copy reads the text back from the raw tables the same transaction has just written, joins it to
each message's turn and sorts it, text and all, twice (for the unit numbers and for the insert): for
the paper-scale reference import most of the index's cost. An ingest that holds a run's tables as
Arrow (the reference-JSON import does, folder by folder) keeps them here instead (:func:`run_units`),
and the index then takes the same rows from memory (:func:`batch_units`): each message's turn comes
from the parse workers (reference_bulk.py, units.py's rule in NumPy) or, for a task the workers did
not parse, from units.py's own SQL (``_turns_sql``) over the key columns alone, and the text is only
filtered, in the order the rows are stored in. Same rows, same order, same unit numbers as units.py's
SQL; tests/test_search_prepared.py compares the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .units import _turns_sql


@dataclass
class RunUnits:
    """One run's messages (with each one's turn) and tool calls, as the index needs them: column
    selections of the tables being inserted (no text is copied)."""

    run_id: str
    #: run_id, sample_id, attempt, idx, role, name, content, turn
    messages: pa.Table
    #: run_id, sample_id, attempt, turn, tool, seq, status, args_json
    calls: pa.Table

    @property
    def n_messages(self) -> int:
        return self.messages.num_rows


def run_units(con: duckdb.DuckDBPyConnection, run_id: str, turns: pa.Table, tool_calls: pa.Table,
              messages: pa.Table) -> RunUnits:
    """The units of one run from its raw tables as Arrow (columns as the raw tables'), each message's
    turn computed on ``con`` (any connection: only Arrow is read)."""
    n = messages.num_rows
    turn = np.zeros(n, dtype=np.int32)
    if n:
        keys = messages.select(["run_id", "sample_id", "attempt", "idx", "role"]).append_column(
            "__row", pa.array(np.arange(n, dtype=np.int64)))
        con.register("__prepared_msgs", keys)
        con.register("__prepared_turns", turns.select(["run_id", "sample_id", "attempt", "turn", "role"]))
        try:
            got = con.execute(f"SELECT __row, turn FROM ({_turns_sql('', '__prepared_msgs', '__prepared_turns', '__row')})"
                              ).fetchnumpy()
        finally:
            con.unregister("__prepared_msgs")
            con.unregister("__prepared_turns")
        rows = np.asarray(got["__row"], dtype=np.int64)  # one each: the join's turns are numbered per attempt
        turn[rows] = np.asarray(got["turn"], dtype=np.int32)
    return held_units(run_id, tool_calls, messages, pa.array(turn))


def held_units(run_id: str, tool_calls: pa.Table, messages: pa.Table,
               turn: pa.Array | pa.ChunkedArray) -> RunUnits:
    """The units of one run whose messages' turns are known already (``turn``, one per message, by
    units.py's rule: the reference import's workers compute it as they parse)."""
    msgs = messages.select(["run_id", "sample_id", "attempt", "idx", "role", "name", "content"]).append_column(
        "turn", turn)
    calls = tool_calls.select(["run_id", "sample_id", "attempt", "turn", "tool", "seq", "status", "args_json"])
    return RunUnits(run_id, msgs, calls)


def _in_order(table: pa.Table, keys: Sequence[str]) -> pa.Table:
    """``table`` ordered by ``keys`` (unique per row): as it is when it already is (the usual case)."""
    if table.num_rows < 2:
        return table
    order = pc.sort_indices(table.select(list(keys)), sort_keys=[(k, "ascending") for k in keys])
    if np.array_equal(order.to_numpy(), np.arange(table.num_rows)):
        return table
    return table.take(order)


@dataclass
class Batch:
    """A batch's messages and calls in storage order, each row with its unit number (``uid``; -1 for
    a message with no role, which no table holds), and the roles of the stored messages in order."""

    messages: pa.Table
    calls: pa.Table
    roles: list[str]
    n_units: int
    n_outputs: int


def batch_units(runs: Sequence[RunUnits], start: int) -> Batch:
    """Number the units of ``runs`` from ``start`` as index.py's SQL does: the stored units in
    index.CLUSTER_ORDER (source, role, run_id, sample_id, attempt, pos), then the tool outputs in
    index.OUTPUT_ORDER. The rows keep the order of their run, item, attempt and position (sorted into
    it only if they are not in it), so each role's units, the calls' and the outputs are each a
    filter of them in that order: the text is neither copied nor sorted here."""
    ordered = sorted(runs, key=lambda r: r.run_id.encode("utf-8"))
    msgs = _in_order(pa.concat_tables([r.messages for r in ordered]), ["run_id", "sample_id", "attempt", "idx"])
    calls = _in_order(pa.concat_tables([r.calls for r in ordered]), ["run_id", "sample_id", "attempt", "seq"])
    codes = pc.dictionary_encode(msgs.column("role")).combine_chunks()
    names = codes.dictionary.to_pylist()
    index = np.asarray(pc.fill_null(codes.indices, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
    valid = index >= 0
    # source 'message' before 'tool_args', then role bytewise (as DuckDB compares text); a message
    # without a role is in neither table (units.py's filters leave it out)
    roles = sorted((r for r in names if r != "tool"), key=lambda r: r.encode("utf-8"))
    uid = np.full(msgs.num_rows, -1, dtype=np.int64)
    at = start
    for role in (*roles, "tool"):
        if role == "tool":
            n_units = at - start + calls.num_rows
            at = start + n_units
        if role not in names:
            continue
        rows = np.flatnonzero(valid & (index == names.index(role)))
        uid[rows] = np.arange(at, at + len(rows), dtype=np.int64)
        at += len(rows)
    call_uid = np.arange(start + n_units - calls.num_rows, start + n_units, dtype=np.int64)
    return Batch(msgs.append_column("uid", pa.array(uid)), calls.append_column("uid", pa.array(call_uid)),
                 roles, n_units, at - start - n_units)
