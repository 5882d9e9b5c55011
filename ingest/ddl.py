"""Warehouse layout: the ``raw`` schema, its DDL generated from the Arrow schemas in ``schemas/``.

One function (:func:`duckdb_type`) maps Arrow types to DuckDB types; every raw table's
``CREATE TABLE`` comes from an Arrow schema, so the Parquet contract, the validator and the warehouse
cannot drift apart.
"""

from __future__ import annotations

import pyarrow as pa

from agenthop.harness import benchmarks
from agenthop.schemas import catalogue
from agenthop.schemas import metrics as mschema
from agenthop.schemas import quality as qschema
from agenthop.schemas import scanners as sschema
from agenthop.schemas import trajectory as tschema
from agenthop.schemas.evolution import absent

RAW = "raw"

#: Extra bookkeeping columns of ``raw.runs`` (not part of the Parquet contract).
RUNS_EXTRA = pa.schema(
    [
        pa.field("_partial", pa.bool_(), nullable=False),
        pa.field("_source", pa.string(), nullable=False),
    ]
)

INGEST_LOG = pa.schema(
    [
        pa.field("load_id", pa.int64(), nullable=False),
        pa.field("loaded_at", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("kind", pa.string(), nullable=False),  # benchmark | runs | reference-json
        pa.field("source", pa.string(), nullable=False),
        pa.field("run_id", pa.string()),
        pa.field("content_sha256", pa.string(), nullable=False),
        pa.field("action", pa.string(), nullable=False),  # inserted | replaced | unchanged
        pa.field("row_counts", pa.string(), nullable=False),  # JSON object table -> rows
    ]
)

WAREHOUSE_META = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),
        pa.field("value", pa.string()),
    ]
)

#: Run tables (replaced per run_id), in load order.
RUN_TABLES: dict[str, pa.Schema] = dict(tschema.RUN_TABLES)


def benchmark_tables() -> dict[str, pa.Schema]:
    """Every registered benchmark's release tables (each replaced whole when its release changes)."""
    return benchmarks.raw_tables()


def extra_tables() -> dict[str, pa.Schema]:
    """Every registered benchmark's tables of its own (``Benchmark.extra_tables``): loaded by its hooks
    per run or import, created with the layout so that every warehouse has them (empty) for dbt."""
    return benchmarks.extra_tables()


def warehouse_schema(table: str) -> pa.Schema:
    """The full column list of ``raw.<table>`` as an Arrow schema."""
    bench = benchmark_tables()
    if table in bench:
        return bench[table]
    if table == "runs":
        base = RUN_TABLES["runs"]
        return pa.schema(list(base) + list(RUNS_EXTRA))
    if table in RUN_TABLES:
        return RUN_TABLES[table]
    if table == "ingest_log":
        return INGEST_LOG
    if table == "warehouse_meta":
        return WAREHOUSE_META
    if table == "dq_issues":
        return qschema.DQ_ISSUES
    if table == "benchmarks":
        return catalogue.BENCHMARKS
    if table == "metric_defs":
        return mschema.METRIC_DEFS
    if table in sschema.TABLES:
        return sschema.TABLES[table]
    extra = extra_tables()
    if table in extra:
        return extra[table]
    raise KeyError(table)


def all_tables() -> tuple[str, ...]:
    """Every table of the raw layout, in creation order."""
    return ("benchmarks", *benchmark_tables(), *RUN_TABLES, "ingest_log", "warehouse_meta", "dq_issues",
            "metric_defs", *sschema.TABLES, *extra_tables())


def later_tables() -> frozenset[str]:
    """Tables a warehouse made by an earlier version (or before a benchmark was added) may lack;
    its next ingest creates them."""
    return frozenset({"dq_issues", "benchmarks", "scores", "metric_defs", *sschema.TABLES, *benchmark_tables(),
                      *extra_tables()})

_SIMPLE: dict[pa.DataType, str] = {
    pa.bool_(): "BOOLEAN",
    pa.int8(): "TINYINT",
    pa.int16(): "SMALLINT",
    pa.int32(): "INTEGER",
    pa.int64(): "BIGINT",
    pa.uint8(): "UTINYINT",
    pa.uint16(): "USMALLINT",
    pa.uint32(): "UINTEGER",
    pa.uint64(): "UBIGINT",
    pa.float16(): "FLOAT",
    pa.float32(): "FLOAT",
    pa.float64(): "DOUBLE",
    pa.string(): "VARCHAR",
    pa.large_string(): "VARCHAR",
    pa.binary(): "BLOB",
    pa.large_binary(): "BLOB",
    pa.date32(): "DATE",
    pa.date64(): "DATE",
}


def duckdb_type(t: pa.DataType) -> str:
    """DuckDB column type for an Arrow type (the one mapping used by all DDL)."""
    if t in _SIMPLE:
        return _SIMPLE[t]
    if pa.types.is_timestamp(t):
        if t.tz is not None:
            return "TIMESTAMPTZ"
        return {"s": "TIMESTAMP_S", "ms": "TIMESTAMP_MS", "us": "TIMESTAMP", "ns": "TIMESTAMP_NS"}[t.unit]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"{duckdb_type(t.value_type)}[]"
    if pa.types.is_struct(t):
        inner = ", ".join(f"{_ident(f.name)} {duckdb_type(f.type)}" for f in t)
        return f"STRUCT({inner})"
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision}, {t.scale})"
    raise TypeError(f"no DuckDB type for Arrow type {t}")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def create_table_sql(table: str, schema: pa.Schema, schema_name: str = RAW) -> str:
    cols = ",\n  ".join(
        f"{_ident(f.name)} {duckdb_type(f.type)}{'' if f.nullable else ' NOT NULL'}" for f in schema
    )
    return f"CREATE TABLE IF NOT EXISTS {schema_name}.{_ident(table)} (\n  {cols}\n)"


def ddl_statements() -> list[str]:
    """Every statement that creates the raw layout (idempotent: IF NOT EXISTS)."""
    stmts = [f"CREATE SCHEMA IF NOT EXISTS {RAW}"]
    stmts += [create_table_sql(t, warehouse_schema(t)) for t in all_tables()]
    return stmts


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def add_column_sql(table: str, field: pa.Field) -> list[str]:
    """Statements that give ``raw.<table>`` of an earlier version the later column ``field``, filled
    as files without it read (schemas/evolution.py)."""
    how = absent(field)
    assert how is not None, f"{table}.{field.name} is not optional on read"
    col, typ = _ident(field.name), duckdb_type(field.type)
    out = [f"ALTER TABLE {RAW}.{_ident(table)} ADD COLUMN {col} {typ}"]
    if how.copy_of is not None:
        out.append(f"UPDATE {RAW}.{_ident(table)} SET {col} = {_ident(how.copy_of)}::{typ}")
    elif how.default is not None:
        out.append(f"UPDATE {RAW}.{_ident(table)} SET {col} = {_literal(how.default)}::{typ}")
    return out


def column_list(schema: pa.Schema) -> str:
    return ", ".join(_ident(f.name) for f in schema)
