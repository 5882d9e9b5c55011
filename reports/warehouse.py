"""Read-only access to the warehouse's marts: path resolution, locking errors, mart checks.

Reports read the dbt marts in schema ``main`` only (never ``raw``). The connection is opened
``read_only=True`` so a report can run next to other readers; a writer holding the lock is reported
as a user error.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb

from agenthop.harness.errors import AgentHopError

from .sql_suggest import suggestion

DEFAULT_DB = Path("warehouse") / "agenthop.duckdb"

def required_columns() -> dict[str, tuple[str, ...]]:
    """Columns the report queries read, per mart: what every benchmark's report sections declare
    (``ReportSections.mart_columns``; AgentHop's are in reports/agenthop/marts.py)."""
    from .core.registry import mart_columns

    return mart_columns()


def resolve_db_path(db: str | os.PathLike[str] | None) -> Path:
    """--db, else $AGENTHOP_DB, else warehouse/agenthop.duckdb, as an absolute path."""
    env = os.environ.get("AGENTHOP_DB")
    chosen = Path(db) if db else Path(env) if env else DEFAULT_DB
    return chosen.expanduser().absolute()  # messages and the provenance footer name the file absolutely


class Warehouse:
    """A read-only connection to the warehouse with a little schema introspection."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = resolve_db_path(path)
        if not self.path.exists():
            raise AgentHopError(
                f"warehouse {self.path} does not exist: run agenthop-ingest and dbt build first "
                "(or pass --db / set AGENTHOP_DB)"
            )
        try:
            self.con = duckdb.connect(str(self.path), read_only=True)
        except duckdb.IOException as exc:
            msg = str(exc)
            if "lock" in msg.lower():
                raise AgentHopError(
                    f"warehouse {self.path} is in use by another process (a dbt build, ingest or an open "
                    f"DuckDB session holds its write lock); close it and retry. DuckDB said: {msg.splitlines()[0]}"
                ) from None
            raise AgentHopError(f"cannot open warehouse {self.path}: {msg.splitlines()[0]}") from None
        except duckdb.Error as exc:
            raise AgentHopError(
                f"cannot open warehouse {self.path} as a DuckDB database: {str(exc).splitlines()[0]}"
            ) from None
        self._columns: dict[str, tuple[str, ...]] | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- introspection -----------------------------------------------------------------------------
    def relations(self) -> dict[str, tuple[str, ...]]:
        """Relations (tables and views) of schema main with their column names."""
        if self._columns is None:
            self._columns = self._columns_of("table_schema = 'main'", qualify=False)
        return self._columns

    def _columns_of(self, where: str, *, qualify: bool) -> dict[str, tuple[str, ...]]:
        """Columns per relation of this database matching `where` (a fixed SQL condition on
        information_schema.columns); relations outside main as ``schema.table`` when `qualify`."""
        rows = self.con.execute(
            "SELECT table_schema, table_name, column_name FROM information_schema.columns "
            f"WHERE table_catalog = current_database() AND {where} ORDER BY table_schema, table_name, ordinal_position"
        ).fetchall()
        cols: dict[str, list[str]] = {}
        for schema, table, column in rows:
            cols.setdefault(table if schema == "main" or not qualify else f"{schema}.{table}", []).append(column)
        return {k: tuple(v) for k, v in cols.items()}

    def has(self, relation: str, column: str | None = None) -> bool:
        cols = self.relations().get(relation)
        if cols is None:
            return False
        return column is None or column in cols

    def columns(self, relation: str) -> tuple[str, ...]:
        return self.relations().get(relation, ())

    def require(self, marts: Iterable[str]) -> None:
        """User error naming the missing marts (typically dbt has not been run)."""
        marts = list(marts)
        missing = [m for m in marts if not self.has(m)]
        if missing:
            raise AgentHopError(
                f"warehouse {self.path} lacks mart(s) {', '.join(missing)}: run dbt build first"
            )
        columns = required_columns()
        for m in marts:
            lacking = [c for c in columns.get(m, ()) if not self.has(m, c)]
            if lacking:
                raise AgentHopError(
                    f"mart {m} in {self.path} lacks column(s) {', '.join(lacking)}: it was built by another "
                    "version of the dbt project; run dbt build first"
                )

    def require_runs(self) -> None:
        self.require(["model_summary"])
        (n,) = self.con.execute("SELECT count(*) FROM model_summary").fetchone()  # type: ignore[misc]
        if n == 0:
            raise AgentHopError(
                f"warehouse {self.path} is empty (model_summary has no runs): load runs with "
                "agenthop-ingest --runs DIR, then run dbt build"
            )

    # -- queries -----------------------------------------------------------------------------------
    def rows(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a query and return a list of dicts (column name -> value)."""
        cur = self.con.execute(sql, params) if params is not None else self.con.execute(sql)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    def execute_user_sql(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run ad-hoc SQL on the read-only connection; DuckDB errors become user errors.

        Besides the read-only warehouse, file-system access is switched off for this connection, so a
        query cannot write files either (``COPY ... TO``) or read anything but the warehouse."""
        try:
            self.con.execute("SET enable_external_access = false")
            cur = self.con.execute(sql)
            if cur is None:  # DuckDB returns no cursor for an empty or comment-only query
                raise AgentHopError("sql: the query is empty; give a statement, e.g. \"SELECT * FROM model_summary\"")
            if cur.description is None:
                return [], []
            names = [d[0] for d in cur.description]
            return names, cur.fetchall()
        except duckdb.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            hint = suggestion(str(exc), self.catalogue())
            raise AgentHopError(f"query failed on {self.path} (read-only): {first}"
                                + (f"; {hint}" if hint else "")) from None

    def catalogue(self) -> dict[str, tuple[str, ...]]:
        """Every user relation with its columns: marts by name, other schemas as ``schema.table``."""
        return self._columns_of("table_schema NOT IN ('information_schema', 'pg_catalog')", qualify=True)
