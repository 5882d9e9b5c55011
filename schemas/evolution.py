"""Columns added to a format after its first release: optional on read.

A file written before a column existed lacks it; it still loads, and the column gets the value its
schema field declares for absent columns: null, a constant (``runs.benchmark`` reads as
``agenthop``), or a copy of another column of the same row cast to the field's type
(``trajectories.score`` reads as ``is_correct``). A warehouse made before the column existed gains
it at its next ingest, filled the same way (ingest/warehouse.py).

Mark such a field with :func:`added_later` in its schema; ingest's validation (ingest/conform.py),
the warehouse upgrade and the column list in docs/formats.md all read the mark from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

_ADDED = b"added_later"
_DEFAULT = b"absent_default"
_FROM = b"absent_from"


def added_later(field: pa.Field, *, default: str | None = None, copy_of: str | None = None) -> pa.Field:
    """``field`` marked optional on read: absent means ``default`` (text), a copy of ``copy_of``, or null.

    A field that may not be null needs ``default`` or ``copy_of``.
    """
    if default is not None and copy_of is not None:
        raise ValueError(f"{field.name}: give a default or a column to copy, not both")
    if not field.nullable and default is None and copy_of is None:
        raise ValueError(f"{field.name}: a non-nullable column added later needs a default")
    meta = dict(field.metadata or {})
    meta[_ADDED] = b"true"
    if default is not None:
        meta[_DEFAULT] = default.encode()
    if copy_of is not None:
        meta[_FROM] = copy_of.encode()
    return field.with_metadata(meta)


@dataclass(frozen=True, slots=True)
class Absent:
    """What a file or table lacking the column reads as."""

    default: str | None = None  # a constant (text, cast to the field's type)
    copy_of: str | None = None  # another column of the row

    def describe(self) -> str:
        if self.copy_of is not None:
            return f"`{self.copy_of}`"
        if self.default is not None:
            return f"`{self.default}`"
        return "null"


def absent(field: pa.Field) -> Absent | None:
    """How an absent ``field`` reads, or None when the field is required in every file."""
    meta = field.metadata or {}
    if meta.get(_ADDED) != b"true":
        return None
    default = meta.get(_DEFAULT)
    copy_of = meta.get(_FROM)
    return Absent(default.decode() if default is not None else None, copy_of.decode() if copy_of is not None else None)


def absent_column(table: pa.Table, field: pa.Field) -> pa.ChunkedArray:
    """The column ``field`` for ``table``, which lacks it (``absent(field)`` must not be None)."""
    how = absent(field)
    assert how is not None, field.name
    n = table.num_rows
    if how.copy_of is not None:
        return table.column(how.copy_of).cast(field.type)
    if how.default is not None:
        return pa.chunked_array([pa.array([how.default] * n, pa.string()).cast(field.type)], field.type)
    return pa.chunked_array([pa.nulls(n, field.type)], field.type)


def later_fields(schema: pa.Schema) -> list[pa.Field]:
    """The fields of ``schema`` that are optional on read, in schema order."""
    return [f for f in schema if absent(f) is not None]
