"""Deleting runs from the warehouse: every row of the given runs, in one transaction, logged.

The rows of the shared run tables go here; each benchmark deletes the rows of its own tables that
belong to the runs (the registry's ``on_runs_deleted`` hook), and names the runs it imported without
a ``raw.runs`` row (``imported_runs``), which can be deleted too. The next ``dbt build`` drops their
mart rows (docs/ingest.md#incremental-builds): the incremental models see runs they built that are no
longer loaded. An unknown run id is an error and nothing is deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pyarrow as pa

from agenthop.harness import benchmarks
from agenthop.schemas import scanners as sschema

from . import ddl
from .conform import IngestError
from .transcripts.index import sync_index
from .warehouse import insert_arrow, json_counts, open_warehouse, read_state, transaction


def remove_runs(db: Path, run_ids: Sequence[str]) -> dict[str, int]:
    """Delete ``run_ids`` (rows of every run table and their data-quality issues); rows deleted per table."""
    if not db.exists():
        raise IngestError(f"warehouse {db} does not exist")
    wanted = list(dict.fromkeys(run_ids))
    try:
        with open_warehouse(db) as con:
            state = read_state(con, db)
            known = set(state.run_benchmarks)
            for bench in benchmarks.available():
                if bench.imported_runs is not None:
                    known |= bench.imported_runs(con)
            unknown = [r for r in wanted if r not in known]
            if unknown:
                raise IngestError(f"warehouse {db}: no run {unknown[0]!r} is loaded; nothing was deleted")
            return _delete(con, state.next_load_id, wanted)
    except duckdb.Error as exc:
        raise IngestError(f"warehouse {db}: delete failed, nothing was changed: {exc}") from None


def _delete(con: duckdb.DuckDBPyConnection, load_id: int, run_ids: list[str]) -> dict[str, int]:
    now = datetime.now(timezone.utc)
    deleted: dict[str, int] = {}
    with transaction(con):
        con.register("__remove_runs", pa.table({"run_id": pa.array(run_ids, pa.string())}))
        try:
            for name in (*ddl.RUN_TABLES, "dq_issues"):
                rows = con.execute(
                    f"DELETE FROM {ddl.RAW}.{name} WHERE run_id IN (SELECT run_id FROM __remove_runs)"
                ).fetchall()
                deleted[name] = int(rows[0][0]) if rows else 0
            for name in sschema.TABLES:  # the runs' scanner findings, scan records and labels (if any)
                if con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = ? "
                               "AND table_name = ?", [ddl.RAW, name]).fetchall()[0][0]:
                    rows = con.execute(
                        f"DELETE FROM {ddl.RAW}.{name} WHERE run_id IN (SELECT run_id FROM __remove_runs)"
                    ).fetchall()
                    if rows and rows[0][0]:
                        deleted[name] = int(rows[0][0])
        finally:
            con.unregister("__remove_runs")
        for bench in benchmarks.available():
            if bench.on_runs_deleted is not None:
                for table, n in bench.on_runs_deleted(con, run_ids).items():
                    deleted[table] = deleted.get(table, 0) + int(n)
        log = {f.name: [] for f in ddl.INGEST_LOG}
        for run_id in run_ids:
            row = (load_id, now, "runs", "", run_id, "", "deleted", json_counts({}))
            for f, v in zip(ddl.INGEST_LOG, row):
                log[f.name].append(v)
        insert_arrow(con, "ingest_log", pa.table(log, schema=ddl.INGEST_LOG))
        sync_index(con)  # the deleted runs leave the search index
    return deleted
