"""Writing a scan: every scanner's results and records in one transaction (docs/scanners.md#results).

A scanner's scan of a run replaces that run's earlier results of the scanner (the shard's units only,
for a sharded scan); a run whose every unit has a result gets a record in raw.scanner_runs, so the next
scan of the same scanner version over the same run content does nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa

from agenthop.schemas import scanners as sschema

from .. import ddl
from ..warehouse import insert_arrow, open_warehouse, transaction
from .units import Unit, units_table


@dataclass(slots=True)
class RunScan:
    """One scanner's results over one run's units (of the shard)."""

    scanner: str
    version: str
    run_id: str
    run_sha256: str
    units: list[Unit]
    #: (run_id, sample_id, attempt, value, label, explanation, evidence) per answered unit
    rows: list[tuple[Any, ...]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return len(self.rows) == len(self.units)


def _results_table(scans: Sequence[RunScan]) -> pa.Table:
    cols: dict[str, list[Any]] = {f.name: [] for f in sschema.SCANNER_RESULTS}
    for s in scans:
        for run_id, sample_id, attempt, value, label, explanation, evidence in s.rows:
            for name, v in zip(("run_id", "sample_id", "attempt", "scanner", "scanner_version", "value", "label",
                                "explanation", "evidence"),
                               (run_id, sample_id, attempt, s.scanner, s.version, value, label, explanation, evidence)):
                cols[name].append(v)
    return pa.table(cols, schema=sschema.SCANNER_RESULTS)


def write_scans(db: Path, scans: Sequence[RunScan], shard: str) -> None:
    """Replace the results of every scan in ``scans`` and record the complete ones, in one transaction."""
    now = datetime.now(timezone.utc)
    with open_warehouse(db) as con, transaction(con):
        for table, schema in sschema.TABLES.items():
            con.execute(ddl.create_table_sql(table, schema))
        for s in scans:
            if shard:
                con.register("scan_units", units_table(s.units))
                con.execute("DELETE FROM raw.scanner_results AS r WHERE r.scanner = ? AND r.run_id = ? AND EXISTS ("
                            "SELECT 1 FROM scan_units AS u WHERE u.run_id = r.run_id AND u.sample_id = r.sample_id "
                            "AND u.attempt = r.attempt)", [s.scanner, s.run_id])
                con.unregister("scan_units")
                con.execute("DELETE FROM raw.scanner_runs WHERE scanner = ? AND run_id = ? AND (shard = ? OR "
                            "scanner_version <> ? OR run_sha256 <> ?)",
                            [s.scanner, s.run_id, shard, s.version, s.run_sha256])
            else:
                con.execute("DELETE FROM raw.scanner_results WHERE scanner = ? AND run_id = ?", [s.scanner, s.run_id])
                con.execute("DELETE FROM raw.scanner_runs WHERE scanner = ? AND run_id = ?", [s.scanner, s.run_id])
        insert_arrow(con, "scanner_results", _results_table(scans))
        done = [s for s in scans if s.complete]
        insert_arrow(con, "scanner_runs", pa.table({
            "scanner": [s.scanner for s in done], "run_id": [s.run_id for s in done], "shard": [shard] * len(done),
            "scanner_version": [s.version for s in done], "run_sha256": [s.run_sha256 for s in done],
            "n_units": [len(s.units) for s in done], "scanned_at": [now] * len(done)}, schema=sschema.SCANNER_RUNS))
