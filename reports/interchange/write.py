"""``agenthop-report export --format eee|atif|scout``: write the chosen runs under ``DIR`` (docs/interchange.md).

EEE: ``data/<benchmark>/<developer>/<model>/<uuid>.json`` per run and its ``<uuid>_samples.jsonl`` beside
it. ATIF: ``data/<benchmark>/<developer>/<model>/<uuid>.json`` per (run, sample, final attempt). File
names derive from run ids, so exporting again rewrites the same files. Files are written whole to a
temporary name and renamed; nothing but the export's own ``.json``/``.jsonl`` files is written. Scout: one
Parquet file ``DIR/transcripts_<time>_<8 hex>.parquet`` holding every chosen run's final attempts, its name
derived from the runs' start times and the transcript ids (the same export rewrites the same file).
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timezone
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenthop.harness.errors import AgentHopError

from ..warehouse import Warehouse
import pyarrow as pa
import pyarrow.parquet as pq

from . import atif, eee, scout
from .source import RunExport, read_runs, select_runs

FORMATS = ("eee", "atif", "scout")


@dataclass
class ExportResult:
    files: list[Path] = field(default_factory=list)
    runs: int = 0

    def summary(self, fmt: str, out: Path) -> str:
        return f"exported {self.runs} run(s) as {fmt} into {out}: {len(self.files)} file(s)"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def export(db: str | os.PathLike[str] | None, out: Path, fmt: str, run_ids: Sequence[str] = (),
           models: Sequence[str] = (), benchmark: str | None = None) -> ExportResult:
    if fmt not in FORMATS:
        raise AgentHopError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    wh = Warehouse(db)
    try:
        chosen = select_runs(wh, run_ids, models, benchmark)
        if not chosen:
            raise AgentHopError(f"no runs to export in {wh.path}")
        runs = read_runs(wh, chosen)
    finally:
        wh.close()
    result = ExportResult(runs=len(runs))
    if fmt == "scout":
        result.files = write_scout(runs, out)
        return result
    for ex in runs:
        result.files += (write_eee(ex, out) if fmt == "eee" else write_atif(ex, out))
    return result


def write_eee(ex: RunExport, out: Path) -> list[Path]:
    """The run's aggregate record and its samples file (none when it has no instance)."""
    rel = eee.folder(ex.run)
    name = eee.file_uuid("eee", ex.run_id)
    samples_rel = f"{rel}/{name}_samples.jsonl"
    rows = eee.instances(ex)
    lines = "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in rows)
    files = []
    checksum = hashlib.sha256(lines.encode("utf-8")).hexdigest()
    if rows:
        _write(out / samples_rel, lines)
        files.append(out / samples_rel)
    record = eee.aggregate(ex, samples_rel, checksum, len(rows))
    _write(out / rel / f"{name}.json", _json(record))
    files.append(out / rel / f"{name}.json")
    return files


def write_atif(ex: RunExport, out: Path) -> list[Path]:
    """One trajectory file per (sample, final attempt) of the run."""
    rel = eee.folder(ex.run)
    files = []
    for doc in atif.trajectories(ex):
        name = eee.file_uuid("atif", ex.run_id, doc["extra"]["sample_id"], str(doc["extra"]["attempt"]))
        path = out / rel / f"{name}.json"
        _write(path, _json(doc))
        files.append(path)
    return files


def write_scout(runs: Sequence[RunExport], out: Path) -> list[Path]:
    """The runs' transcripts as one Parquet file of a Scout transcript database (none when no run has one)."""
    rows = [row for ex in runs for row in scout.transcripts(ex)]
    if not rows:
        return []
    starts = [ex.run["started_at"] for ex in runs if hasattr(ex.run.get("started_at"), "strftime")]
    stamp = max(starts) if starts else datetime(1970, 1, 1, tzinfo=timezone.utc)
    digest = hashlib.sha256("\n".join(sorted(r["transcript_id"] for r in rows)).encode()).hexdigest()[:8]
    path = out / f"transcripts_{stamp.strftime('%Y%m%dT%H%M%S')}_{digest}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    pq.write_table(pa.Table.from_pylist(rows, schema=scout.SCHEMA), tmp, compression="zstd")
    os.replace(tmp, path)
    return [path]
