"""Validate and cast Arrow tables against the contract schemas (before anything is written).

``conform`` matches columns by name, drops extra columns, casts integer widths, float widths,
string flavours and timestamp units/zones, and rejects everything else with an error that names
the file and the column: missing columns, mistyped columns, nulls in non-nullable columns,
invalid UTF-8 and text values above :data:`MAX_TEXT_BYTES`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from agenthop.harness.errors import AgentHopError
from agenthop.schemas.evolution import absent, absent_column
from agenthop.schemas.limits import MAX_TEXT_BYTES  # largest accepted text value: rejected, not truncated


class IngestError(AgentHopError):
    """Bad ingest input or an unusable warehouse; the message names the file and the problem."""


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _cast_column(col: pa.ChunkedArray, field: pa.Field, where: str) -> pa.ChunkedArray:
    src, dst = col.type, field.type
    if src == dst:
        return col
    if pa.types.is_dictionary(src):
        return _cast_column(col.cast(src.value_type), field, where)
    if pa.types.is_null(src):
        return pa.chunked_array([pa.nulls(len(col), dst)], dst)
    ok = False
    safe = True
    if pa.types.is_integer(dst):
        ok = pa.types.is_integer(src)
    elif pa.types.is_floating(dst):
        ok = pa.types.is_floating(src) or pa.types.is_integer(src)
    elif _is_text(dst):
        ok = _is_text(src)
    elif pa.types.is_boolean(dst):
        ok = pa.types.is_boolean(src)
    elif pa.types.is_timestamp(dst):
        ok = pa.types.is_timestamp(src)
        safe = False  # sub-unit precision may be dropped (ns -> us); units are free (docs/formats.md#trajectory-store)
        if ok and src.tz is None and dst.tz is not None:
            col = col.cast(pa.timestamp(src.unit, tz=dst.tz))  # naive timestamps are UTC
    elif pa.types.is_list(dst) or pa.types.is_large_list(dst):
        if pa.types.is_list(src) or pa.types.is_large_list(src):
            inner = _cast_column(
                pa.chunked_array([c.flatten() for c in col.chunks], src.value_type)
                if col.num_chunks
                else pa.chunked_array([], src.value_type),
                pa.field(field.name, dst.value_type),
                where,
            )
            ok = inner is not None
    if not ok:
        raise IngestError(f"{where}: column '{field.name}' has type {src}, expected {dst}")
    try:
        return col.cast(dst, safe=safe)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise IngestError(
            f"{where}: column '{field.name}' cannot be cast from {src} to {dst}: {exc}"
        ) from None


def _text_arrays(col: pa.ChunkedArray) -> Iterable[pa.Array]:
    for chunk in col.chunks:
        arr = chunk
        while pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
            arr = arr.flatten()
        if _is_text(arr.type):
            yield arr


def check_text(col: pa.ChunkedArray, column: str, where: str, utf8_known: bool = False) -> None:
    """Valid UTF-8 and no value above the size cap (also inside list<string> columns); with
    ``utf8_known`` (text that Arrow encoded from Python strings) only the size cap."""
    offset = 0
    for arr in _text_arrays(col):
        try:
            if not utf8_known:
                arr.validate(full=True)
        except pa.ArrowInvalid as exc:
            raise IngestError(f"{where}: column '{column}' is not valid UTF-8 text ({exc})") from None
        if len(arr) and arr.null_count < len(arr):
            lengths = pc.binary_length(arr)
            longest = pc.max(lengths).as_py()
            if longest is not None and longest > MAX_TEXT_BYTES:
                row = pc.index(lengths, longest).as_py() + offset
                raise IngestError(
                    f"{where}: column '{column}' value #{row} has {longest:,} bytes, above the "
                    f"{MAX_TEXT_BYTES // (1024 * 1024)} MiB ({MAX_TEXT_BYTES:,}-byte) cap for one text field"
                )
        offset += len(arr)


def conform(table: pa.Table, schema: pa.Schema, where: str, utf8_known: bool = False) -> pa.Table:
    """Return ``table`` with exactly ``schema``'s columns (by name) and types, or raise.

    A column added to the format after its first release (schemas/evolution.py) may be absent: it
    reads as the value its field declares (null, a constant, or a copy of another column).
    ``utf8_known``: the table's text was built by this program from Python strings (which Arrow
    encodes as UTF-8 or refuses), so only its size is checked, not its encoding again (for the
    reference import's 400 MB of message text that validation cost about 0.15 s).
    """
    names = table.column_names
    cols: list[pa.ChunkedArray] = []
    for field in schema:
        n = names.count(field.name)
        if n == 0 and absent(field) is not None:
            source = absent(field).copy_of  # type: ignore[union-attr]
            if source is not None and source not in names:
                raise IngestError(f"{where}: missing column '{source}' ({schema.field(source).type})")
            cols.append(absent_column(table, field))
            continue
        if n == 0:
            raise IngestError(f"{where}: missing column '{field.name}' ({field.type})")
        if n > 1:
            raise IngestError(f"{where}: column '{field.name}' appears {n} times")
        col = _cast_column(table.column(field.name), field, where)
        if not field.nullable and col.null_count:
            raise IngestError(
                f"{where}: column '{field.name}' has {col.null_count} null value(s) but may not be null"
            )
        check_text(col, field.name, where, utf8_known)
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=schema)


def find_duplicate(table: pa.Table, keys: Sequence[str],
                   con: duckdb.DuckDBPyConnection | None = None) -> dict[str, object] | None:
    """The first duplicated key (as a dict) of ``table`` over ``keys``, or None (in ``con``, else a
    new in-memory DuckDB: opening one costs more than checking a run of 25,000 rows)."""
    if table.num_rows < 2:
        return None
    cols = ", ".join('"' + k.replace('"', '""') + '"' for k in keys)
    own = con is None
    con = duckdb.connect() if con is None else con
    try:
        con.register("__keys", table.select(list(keys)))
        dup = con.sql(f"SELECT {cols} FROM __keys GROUP BY {cols} HAVING count(*) > 1 LIMIT 1").fetchall()
    finally:
        con.unregister("__keys")
        if own:
            con.close()
    return dict(zip(keys, dup[0])) if dup else None


def format_key(key: dict[str, object]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in key.items())
