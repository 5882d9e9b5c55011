"""Row-for-row fingerprints of the warehouse's marts, to prove a refactoring changed no mart value.

``digest(db)`` reads every table of the ``main`` schema (the marts; ``build_info`` describes the build
itself and is skipped, and so are wall-clock columns) and returns, per mart, its row count, its
columns and the SHA-256 of its rows: each row
as compact JSON with floats rounded to 9 decimals (summation order may move the last bits), the rows
sorted. ``tests/fixtures/agenthop_mart_snapshot.json`` holds the digest of the session's test
warehouse (tests/conftest.py::built_warehouse) taken before the benchmark-agnostic core; regenerate
it only for a deliberate change of a mart's values:

    .venv/bin/python -m tests.mart_snapshot WAREHOUSE.duckdb > tests/fixtures/agenthop_mart_snapshot.json
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

import duckdb

SNAPSHOT = Path(__file__).resolve().parent / "fixtures" / "agenthop_mart_snapshot.json"

#: Relations of ``main`` that describe the build, not the data.
NOT_DATA = frozenset({"build_info"})

#: Columns measured on the clock of the machine that ran the agents (differ between two runs of one
#: configuration); left out of the fingerprint.
CLOCK_COLUMNS = frozenset({"wall_time_s", "wait_s"})


def _value(v: Any) -> Any:
    if isinstance(v, float):
        return None if math.isnan(v) else round(v, 9) + 0.0  # + 0.0: -0.0 and 0.0 hash alike
    if isinstance(v, decimal.Decimal):
        return _value(float(v))
    if isinstance(v, (list, tuple)):
        return [_value(x) for x in v]
    if isinstance(v, dict):
        return {k: _value(x) for k, x in v.items()}
    if isinstance(v, (dt.datetime, dt.date)):
        return v.isoformat()
    return v


def columns(con: duckdb.DuckDBPyConnection, mart: str) -> list[str]:
    """The fingerprinted columns of ``main.<mart>``, sorted."""
    cur = con.execute(f'SELECT * FROM main."{mart}" LIMIT 0')
    return sorted(d[0] for d in cur.description if d[0] not in CLOCK_COLUMNS)


def mart_rows(con: duckdb.DuckDBPyConnection, mart: str, cols: list[str]) -> list[str]:
    """The rows of ``main.<mart>`` over ``cols`` as sorted compact JSON strings."""
    select = ", ".join(f'"{c}"' for c in cols)
    cur = con.execute(f'SELECT {select} FROM main."{mart}"')
    rows = []
    for row in cur.fetchall():
        rec = {n: _value(v) for n, v in zip(cols, row)}
        rows.append(json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=True))
    return sorted(rows)


def marts(con: duckdb.DuckDBPyConnection) -> list[str]:
    found = con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY table_name"
    ).fetchall()
    return [r[0] for r in found if r[0] not in NOT_DATA]


def digest(db: Path, only: dict[str, list[str]] | None = None) -> dict[str, dict[str, Any]]:
    """mart -> {"rows": count, "columns": [...], "sha256": hash of its sorted rows over those columns}.

    ``only`` (mart -> columns) fingerprints just those marts over just those columns (a mart may
    gain columns; the ones it had must keep their values); a mart or column missing is reported as
    such by the comparison, not here.
    """
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        present = marts(con)
        for mart in present if only is None else [m for m in only if m in present]:
            have = columns(con, mart)
            cols = have if only is None else [c for c in only[mart] if c in have]
            rows = mart_rows(con, mart, cols)
            h = hashlib.sha256("\n".join(rows).encode()).hexdigest()
            out[mart] = {"rows": len(rows), "columns": cols, "sha256": h}
        return out
    finally:
        con.close()


if __name__ == "__main__":
    json.dump(digest(Path(sys.argv[1])), sys.stdout, indent=0, sort_keys=True, separators=(",", ":"))
    sys.stdout.write("\n")
