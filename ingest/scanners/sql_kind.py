"""``sql`` scanners: a read-only SELECT over the shared tables returning run_id, sample_id, attempt and value.

The query is checked before anything runs (:func:`query_problem`): one statement, a SELECT, reading only
the shared tables of schema ``raw`` (and its own CTEs), calling no table function but ``unnest``,
``range`` and ``generate_series``. It then runs on a read-only connection that may not touch files
(scan.py). Optional columns: ``label``, ``explanation`` and ``evidence`` (a list of
``{turn, seq}``). An attempt the query returns no row for has value 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import duckdb

#: the tables a scanner query may read (schema raw)
SHARED_TABLES: tuple[str, ...] = ("runs", "trajectories", "turns", "tool_calls", "messages", "scores")
TABLE_FUNCTIONS: frozenset[str] = frozenset({"unnest", "range", "generate_series"})
REQUIRED_COLUMNS: tuple[str, ...] = ("run_id", "sample_id", "attempt", "value")
OPTIONAL_COLUMNS: tuple[str, ...] = ("label", "explanation", "evidence")
#: how each result column is read (the query's own types are cast to these)
CASTS: dict[str, str] = {
    "run_id": "VARCHAR", "sample_id": "VARCHAR", "attempt": "INTEGER", "value": "DOUBLE",
    "label": "VARCHAR", "explanation": "VARCHAR", "evidence": "STRUCT(turn INTEGER, seq INTEGER)[]",
}


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _cte_names(tree: Any) -> set[str]:
    names: set[str] = set()
    for node in _nodes(tree):
        cte = node.get("cte_map")
        if isinstance(cte, dict):
            names.update(m.get("key", "").lower() for m in cte.get("map", []) if isinstance(m, dict))
    return names


def query_problem(query: str) -> str | None:
    """Why ``query`` may not be a scanner's query, or None (module docstring)."""
    con = duckdb.connect()
    try:
        try:
            statements = con.extract_statements(query)
        except duckdb.Error as exc:
            return f"does not parse: {str(exc).splitlines()[0][:200]}"
        if len(statements) != 1:
            return f"expected one SELECT statement, got {len(statements)} statements"
        if statements[0].type != duckdb.StatementType.SELECT:
            return f"expected a read-only SELECT, got a {statements[0].type.name} statement"
        tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [query]).fetchall()[0][0])
    finally:
        con.close()
    if tree.get("error"):
        return f"expected a read-only SELECT ({tree.get('error_message', 'not a SELECT')})"
    ctes = _cte_names(tree)
    for node in _nodes(tree):
        kind = node.get("type")
        if kind == "BASE_TABLE":
            schema, table = (node.get("schema_name") or "").lower(), (node.get("table_name") or "").lower()
            catalog = (node.get("catalog_name") or "").lower()
            if not schema and not catalog and table in ctes:
                continue
            if catalog or schema != "raw" or table not in SHARED_TABLES:
                shown = ".".join(p for p in (catalog, schema, table) if p)
                return (f"reads {shown}, which a scanner may not read (allowed: "
                        f"{', '.join('raw.' + t for t in SHARED_TABLES)})")
        elif kind == "TABLE_FUNCTION":
            fn = node.get("function") or {}
            name = str(fn.get("function_name") or "").lower() if isinstance(fn, dict) else ""
            if name not in TABLE_FUNCTIONS:
                return f"calls the table function {name or '?'}(), which a scanner may not call"
    return None


def result_columns(con: duckdb.DuckDBPyConnection, query: str) -> list[str]:
    """The query's column names (an error names a missing or unknown one)."""
    names = [d[0] for d in con.execute(f"SELECT * FROM ({query}) LIMIT 0").description]
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise ValueError(f"returns no column {missing[0]!r} (it returns {', '.join(names)}; required: "
                         f"{', '.join(REQUIRED_COLUMNS)})")
    extra = [c for c in names if c not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS]
    if extra:
        raise ValueError(f"returns the column {extra[0]!r}, which a scanner result has not (optional columns: "
                         f"{', '.join(OPTIONAL_COLUMNS)})")
    return names


def run_query(con: duckdb.DuckDBPyConnection, query: str) -> list[tuple[Any, ...]]:
    """Rows (run_id, sample_id, attempt, value, label, explanation, evidence) of the units in the temporary
    table ``scan_units``, one per unit the query returned (a unit returned twice is an error)."""
    names = result_columns(con, query)
    cols = ", ".join(f"q.{c}::{CASTS[c]}" if c in names else f"NULL::{CASTS[c]}"
                     for c in REQUIRED_COLUMNS + OPTIONAL_COLUMNS)
    rows = con.execute(
        f"SELECT {cols} FROM ({query}) AS q SEMI JOIN scan_units AS u "
        "ON u.run_id = q.run_id::VARCHAR AND u.sample_id = q.sample_id::VARCHAR AND u.attempt = q.attempt::INTEGER"
    ).fetchall()
    seen: set[tuple[str, str, int]] = set()
    for r in rows:
        key = (r[0], r[1], r[2])
        if key in seen:
            raise ValueError(f"returns two rows for run {r[0]!r}, sample {r[1]!r}, attempt {r[2]} (one row per "
                             "attempt)")
        seen.add(key)
    return rows
