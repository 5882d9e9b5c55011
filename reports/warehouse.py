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
from .values import Interval

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
        self.con = self._connect()
        self._columns: dict[str, tuple[str, ...]] | None = None
        #: results kept for this connection's life by the report modules that build them more than once
        self.memo: dict[str, Any] = {}

    def _connect(self) -> duckdb.DuckDBPyConnection:
        try:
            return duckdb.connect(str(self.path), read_only=True)
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

    # -- lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        self.con.close()

    def reconnect(self) -> None:
        """A new read-only connection to the same file in place of the closed one (its settings and temporary
        views gone; :attr:`memo` kept, the file being read-only). A process forked from one holding this warehouse
        (reports/site_workers.py) opens its own this way: the one it inherits must not be used."""
        self.con = self._connect()

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

    def has_table(self, schema: str, table: str) -> bool:
        """Whether ``schema.table`` exists in this database (an optional raw table, a dbt schema)."""
        (n,) = self.con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ? "
            "AND table_catalog = current_database()", [schema, table]).fetchone()  # type: ignore[misc]
        return bool(n)

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
        """Run one ad-hoc SQL statement on the read-only connection; DuckDB errors become user errors.

        Several statements (``SELECT 1; SELECT 2``) are refused before any runs: DuckDB would run them all
        and return only the last result. Intervals come back exact (months kept, values.Interval).
        Besides the read-only warehouse, file-system access is switched off for this connection, so a
        query cannot write files either (``COPY ... TO``) or read anything but the warehouse."""
        try:
            self.con.execute("SET enable_external_access = false")
            self.con.execute("SET arrow_lossless_conversion = true")  # for _fetch_exact_intervals
            statements = duckdb.extract_statements(sql)
            if not statements:  # an empty or comment-only query
                raise AgentHopError("sql: the query is empty; give a statement, e.g. \"SELECT * FROM model_summary\"")
            if len(statements) > 1:
                raise AgentHopError(f"sql: the query holds {len(statements)} statements; give one statement per "
                                    "call (DuckDB would run them all and print only the last result)")
            cur = self.con.execute(sql)
            if cur is None or cur.description is None:
                return [], []
            names = [d[0] for d in cur.description]
            if any("INTERVAL" in str(d[1]) for d in cur.description):
                return names, self._fetch_exact_intervals(cur)
            return names, cur.fetchall()
        except duckdb.Error as exc:
            raise AgentHopError(self._failure(exc)) from None

    def _failure(self, exc: Exception) -> str:
        """A failed user query in one line: DuckDB's first line, then the project's "did you mean" hint or,
        when it finds nothing, DuckDB's own (``Candidate bindings: ...``, ``Did you mean "t"?``)."""
        lines = [line.strip() for line in str(exc).strip().splitlines()]
        first = lines[0] if lines and lines[0] else type(exc).__name__
        hint = suggestion(str(exc), self.catalogue())
        if hint is None:
            hint = next((line for line in lines[1:] if line.startswith(("Candidate bindings", "Did you mean"))), None)
        return f"query failed on {self.path} (read-only): {first}" + (f"; {hint}" if hint else "")

    def _fetch_exact_intervals(self, cur: Any) -> list[tuple[Any, ...]]:
        """The rows of a result holding intervals, each interval as values.Interval (months, days,
        nanoseconds) instead of the timedelta DuckDB hands Python (a month as 30 days): the result is
        fetched once through Arrow (month_day_nano), the other values read back from it as fetchall
        gives them (lossless Arrow types: HUGEINT and UUID come back as they were)."""
        import warnings

        with warnings.catch_warnings():  # "an extra copy of the rows": one result, read once
            warnings.simplefilter("ignore", UserWarning)
            table = cur.to_arrow_table()
        rows = self.con.from_arrow(table).fetchall()
        exact = table.to_pylist()
        names = table.column_names
        return [tuple(_with_intervals(v, e[n]) for v, n in zip(row, names)) for row, e in zip(rows, exact)]

    def catalogue(self) -> dict[str, tuple[str, ...]]:
        """Every user relation with its columns: marts by name, other schemas as ``schema.table``."""
        return self._columns_of("table_schema NOT IN ('information_schema', 'pg_catalog')", qualify=True)


def _with_intervals(value: Any, exact: Any) -> Any:
    """``value`` (as fetchall gives it) with every interval replaced by the Arrow value ``exact`` holds at
    the same place (a month_day_nano as values.Interval); maps come from Arrow as (key, value) pairs."""
    if exact is None or value is None:
        return value
    if hasattr(exact, "months") and hasattr(exact, "nanoseconds"):
        return Interval(exact.months, exact.days, exact.nanoseconds)
    if isinstance(value, dict):
        pairs = exact.values() if isinstance(exact, dict) else (v for _, v in exact)
        return {k: _with_intervals(v, e) for (k, v), e in zip(value.items(), pairs)}
    if isinstance(value, (list, tuple)):
        return type(value)(_with_intervals(v, e) for v, e in zip(value, exact))
    return value
