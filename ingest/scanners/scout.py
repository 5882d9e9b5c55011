"""`agenthop-ingest --scout-results DIR`: Inspect Scout scan results as scanner results (docs/scanners.md#inspect-scout).

DIR is one scan folder (``scan_id=<id>/``, holding one Parquet file per scanner) or a folder of them. Each
row is one (transcript, scanner) result. Its attempt is found from the transcript's metadata when it
names ``run_id`` (and ``sample_id``, ``attempt``), else from the Inspect log it came from: eval id
(``transcript_source_id``), epoch (``transcript_task_repeat``) and sample id (``transcript_task_id``) name
the run ``inspect-<eval id>-e<epoch>`` that `agenthop-ingest --inspect-log` made of that log; the final
attempt unless the metadata names another. Values: numbers as they are, booleans as 1/0, a string as the
label, a result set as the number of its truthy results (its explanation: each truthy result's label and
explanation). Evidence: the messages a result cites (``message_references``, a result set's items' ``references``)
as the turns and tool calls they belong to, when the transcript came from ``agenthop-report export --format scout``
(its ``message_turns`` metadata); none otherwise. Rows with a scan error are skipped (counted).
Every row is checked before anything is written; the results of one import are written in one transaction,
replacing the same scanner's earlier results for those runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq

from ..conform import IngestError
from .store import RunScan, write_scans
from .units import select_runs

REQUIRED = ("transcript_id", "scanner_name", "value")


@dataclass(slots=True)
class ScoutImport:
    results: int = 0
    scanners: int = 0
    errors_skipped: int = 0

    def summary(self) -> str:
        return (f"loaded {self.results} Inspect Scout result(s) of {self.scanners} scanner(s)"
                + (f"; {self.errors_skipped} row(s) with a scan error skipped" if self.errors_skipped else ""))


def scanner_files(folder: Path) -> list[tuple[str, Path]]:
    """(scan id, Parquet file) of every scanner of the scan folder(s) under ``folder``."""
    if not folder.is_dir():
        raise IngestError(f"--scout-results {folder}: not a directory")
    scans = [folder] if folder.name.startswith("scan_id=") else sorted(folder.glob("scan_id=*"))
    files = [(s.name.removeprefix("scan_id="), p) for s in scans for p in sorted(s.glob("*.parquet"))
             if not p.name.startswith("_")]
    if not files:
        raise IngestError(f"--scout-results {folder}: no Scout scan here (a scan_id=<id>/ folder with one Parquet "
                          "file per scanner)")
    return files


def _truthy(v: Any) -> bool:
    return v not in (None, False, 0, "", "none", "false", [], {})


def read_value(value: Any, value_type: str | None) -> tuple[float | None, str | None]:
    """(value, label) of a Scout result (module docstring)."""
    if value is None or value_type == "null":
        return None, None
    text = str(value)
    if value_type == "boolean" or text.lower() in ("true", "false"):
        return (1.0 if text.lower() == "true" else 0.0), None
    if value_type in ("resultset", "array"):
        try:
            items = json.loads(text)
        except ValueError:
            return None, None
        found = [x.get("value") if isinstance(x, dict) else x for x in items] if isinstance(items, list) else []
        return float(sum(1 for x in found if _truthy(x))), None
    try:
        return float(text), None
    except ValueError:
        return None, text


def _items(value: Any, value_type: str | None) -> list[dict[str, Any]]:
    """The results of a result set (none for any other value)."""
    if value_type != "resultset":
        return []
    return [x for x in _list(value) if isinstance(x, dict)]


def explanation(row: dict[str, Any]) -> str | None:
    """The row's explanation; for a result set, its truthy results' ``label: explanation`` lines."""
    if row.get("explanation") or row.get("value_type") != "resultset":
        return row.get("explanation")
    lines = [f"{x.get('label')}: {x.get('explanation') or ''}".rstrip()
             for x in _items(row.get("value"), "resultset") if _truthy(x.get("value"))]
    return "\n".join(lines) or None


def evidence(row: dict[str, Any], meta: dict[str, Any]) -> list[dict[str, Any]] | None:
    """``{turn, seq}`` of every message the result cites, from the exported transcript's ``message_turns``."""
    turns = _list(meta.get("message_turns"))  # Scout reads the exported JSON text into a list
    if not turns:
        return None
    refs = _list(row.get("message_references"))
    for x in _items(row.get("value"), row.get("value_type")):
        if _truthy(x.get("value")):
            refs += _list(x.get("references"))
    prefix, out = f"{row['transcript_id']}-", []
    for ref in refs:
        mid = str(ref.get("id") or "") if isinstance(ref, dict) and ref.get("type", "message") == "message" else ""
        n = mid.removeprefix(prefix)
        if not mid.startswith(prefix) or not n.isdigit() or not 0 < int(n) <= len(turns) or not turns[int(n) - 1]:
            continue
        turn, seq = turns[int(n) - 1]
        if {"turn": turn, "seq": seq} not in out:
            out.append({"turn": turn, "seq": seq})
    out.sort(key=lambda e: (e["turn"], e["seq"] if e["seq"] is not None else -1))
    return out


def _decoded(v: Any) -> Any:
    """A JSON column's value: parsed when it is text (None when it is not JSON), else as it is."""
    if isinstance(v, str):
        try:
            return json.loads(v) if v.strip() else None
        except ValueError:
            return None
    return v


def _list(v: Any) -> list[Any]:
    obj = _decoded(v)
    return obj if isinstance(obj, list) else []


def _json(v: Any) -> dict[str, Any]:
    obj = _decoded(v)
    return obj if isinstance(obj, dict) else {}


def _attempts(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], tuple[set[int], int]]:
    out: dict[tuple[str, str], tuple[set[int], int]] = {}
    for run_id, sample_id, attempts, final in con.execute(
            "SELECT run_id, sample_id, list(attempt), coalesce(max(attempt) FILTER (WHERE is_final), max(attempt)) "
            "FROM raw.trajectories GROUP BY ALL").fetchall():
        out[(run_id, sample_id)] = (set(attempts), int(final))
    return out


def load_scout_results(db: Path, folders: Sequence[Path]) -> ScoutImport:
    if not db.exists():
        raise IngestError(f"warehouse {db} does not exist: load the scanned runs first")
    con = duckdb.connect(str(db), read_only=True)
    try:
        run_shas = select_runs(con, (), ())
        attempts = _attempts(con)
    finally:
        con.close()
    out = ScoutImport()
    scans: dict[tuple[str, str], RunScan] = {}
    units: dict[str, dict[str, set[tuple[str, str, int]]]] = {}
    for folder in folders:
        for scan_id, path in scanner_files(folder):
            try:
                table = pq.read_table(path)
            except Exception as exc:  # noqa: BLE001 (pyarrow raises several types for a bad file)
                raise IngestError(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0][:200]})") from None
            missing = [c for c in REQUIRED if c not in table.column_names]
            if missing:
                raise IngestError(f"{path}: no column {missing[0]!r}: not a Scout scanner result file")
            for no, row in enumerate(table.to_pylist(), 1):
                if row.get("scan_error"):
                    out.errors_skipped += 1
                    continue
                where = f"{path}: row {no} (transcript {row['transcript_id']!r})"
                meta = _json(row.get("transcript_metadata"))
                if meta.get("run_id"):
                    run_id = str(meta["run_id"])
                    sample_id = str(meta.get("sample_id") or row.get("transcript_task_id") or "")
                elif row.get("transcript_source_id") and row.get("transcript_task_repeat") is not None:
                    run_id = f"inspect-{row['transcript_source_id']}-e{int(row['transcript_task_repeat'])}"
                    sample_id = str(row.get("transcript_task_id") or "")
                else:
                    raise IngestError(f"{where}: field 'transcript_metadata': names no run_id, and no eval id and "
                                      "epoch name an imported Inspect log")
                if run_id not in run_shas:
                    raise IngestError(f"{where}: field 'run_id': no run {run_id!r} in the warehouse")
                known = attempts.get((run_id, sample_id))
                if known is None:
                    raise IngestError(f"{where}: field 'sample_id': run {run_id!r} has no sample {sample_id!r}")
                attempt = meta.get("attempt", known[1])
                if not isinstance(attempt, int) or attempt not in known[0]:
                    raise IngestError(f"{where}: field 'attempt': sample {sample_id!r} of run {run_id!r} has no "
                                      f"attempt {attempt!r}")
                scanner = str(row["scanner_name"])
                value, label = read_value(row.get("value"), row.get("value_type"))
                if row.get("label"):
                    label = str(row["label"])
                unit = (run_id, sample_id, attempt)
                seen = units.setdefault(scanner, {}).setdefault(run_id, set())
                if unit in seen:
                    raise IngestError(f"{where}: a second result of scanner {scanner!r} for this attempt")
                seen.add(unit)
                version = f"scout {'' if row.get('scanner_version') is None else row['scanner_version']} " \
                          f"scan:{scan_id}".replace("  ", " ")
                scan = scans.setdefault((scanner, run_id), RunScan(scanner, version, run_id, run_shas[run_id][0], []))
                scan.units.append(unit)
                scan.rows.append((*unit, value, label, explanation(row), evidence(row, meta)))
    if not scans:
        raise IngestError(f"--scout-results: no result without a scan error in {', '.join(map(str, folders))}")
    write_scans(db, list(scans.values()), "")
    out.results = sum(len(s.rows) for s in scans.values())
    out.scanners = len({s.scanner for s in scans.values()})
    return out
