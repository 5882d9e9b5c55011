"""The ingest's write: bulk inserts and the settings of the ingest connection (ingest/warehouse.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from agenthop.ingest import ddl
from agenthop.ingest.warehouse import insert_arrow, open_warehouse, transaction

_WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda", "sigma")


def _texts(n: int) -> list[str]:
    """Tool-output-like text: most about 1,000 characters, one in ten a whole section of 20,000.
    Segments holding such long strings get neither a dictionary nor FSST, and the average stays
    below DuckDB's own length threshold for trying ZSTD."""
    out = []
    for i in range(n):
        size = 20_000 if i % 10 == 0 else 300 + (i * 37) % 1_400
        words = " ".join(_WORDS[(i + k * k) % len(_WORDS)] for k in range(size // 5))
        out.append((f"call {i}: " + words)[:size])
    return out


def _messages(n: int, chunk: int = 1_000) -> pa.Table:
    schema = ddl.warehouse_schema("messages")
    cols: dict[str, list] = {
        "run_id": ["run-a"] * n,
        "sample_id": [f"s{i // 10:05d}" for i in range(n)],
        "attempt": [0] * n,
        "idx": [i % 10 for i in range(n)],
        "role": ["tool" if i % 2 else "assistant" for i in range(n)],
        "name": [None] * n,
        "tool_call_id": [None] * n,
        "content": _texts(n),
    }
    table = pa.table({f.name: pa.array(cols[f.name], f.type) for f in schema}, schema=schema)
    return pa.Table.from_batches(table.to_batches(max_chunksize=chunk), schema)


def _layout(con: duckdb.DuckDBPyConnection) -> None:
    for stmt in ddl.ddl_statements():
        con.execute(stmt)


def _compression(db: Path, column: str) -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT DISTINCT compression FROM pragma_storage_info('raw.messages') "
            "WHERE column_name = ? AND segment_type = 'VARCHAR' AND compression <> 'Constant'",
            [column],
        ).fetchall()
    finally:
        con.close()
    return {r[0] for r in rows}


def test_long_text_is_stored_with_zstd_and_short_strings_are_not(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    data = _messages(20_000)
    expected = data.column("content").to_pylist()
    with open_warehouse(db) as con:
        with transaction(con):
            _layout(con)
            insert_arrow(con, "messages", data)
    assert _compression(db, "content") == {"ZSTD"}
    assert "ZSTD" not in _compression(db, "sample_id")
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert [r[0] for r in con.execute("SELECT content FROM raw.messages").fetchall()] == expected
    finally:
        con.close()


def test_insert_keeps_load_order_and_the_thread_count(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    data = _messages(30_000, chunk=700)  # many batches, more rows than one row group's vector
    expected = list(zip(data.column("sample_id").to_pylist(), data.column("idx").to_pylist()))
    with open_warehouse(db) as con:
        con.execute("SET threads = 2")
        with transaction(con):
            _layout(con)
            insert_arrow(con, "messages", data)
            assert con.execute("SELECT current_setting('threads')").fetchall() == [(2,)]
        rows = con.execute("SELECT sample_id, idx FROM raw.messages").fetchall()
    assert rows == expected


def test_failed_insert_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with open_warehouse(db) as con:
        with transaction(con):
            _layout(con)
            insert_arrow(con, "messages", _messages(2_000))
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    bad = _messages(5_000).to_pydict()
    bad["run_id"][-1] = None  # NOT NULL: the insert fails after most rows went in
    schema = ddl.warehouse_schema("messages").field("run_id").with_nullable(True)
    bad_table = pa.table(bad, schema=ddl.warehouse_schema("messages").set(0, schema))
    with pytest.raises(duckdb.Error):
        with open_warehouse(db) as con:
            with transaction(con):
                insert_arrow(con, "messages", _messages(3_000))
                insert_arrow(con, "messages", bad_table)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM raw.messages").fetchall() == [(2_000,)]
    finally:
        con.close()
