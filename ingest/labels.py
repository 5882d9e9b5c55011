"""`agenthop-ingest --labels FILE`: human labels of scanner findings into raw.human_labels (docs/scanners.md#labels).

A labels file is JSONL, one label per line: ``run_id`` (or ``model`` with ``epoch`` (from 1) or
``replicate`` (from 0)), ``sample_id``, ``attempt`` (default: the sample's final attempt), ``scanner``,
``value`` (true/false or a number; a string is a label of a label set) and ``labeler``. Every line is
checked against the warehouse before anything is written; a bad line is one error naming the file,
line and field, and leaves the warehouse as it was. A label replaces the one the same labeler gave
the same attempt for the same scanner.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from agenthop.schemas import scanners as sschema

from . import ddl
from .conform import IngestError
from .text_file import read_utf8
from .warehouse import insert_arrow, open_warehouse, transaction

_FIELDS = ("run_id", "model", "epoch", "replicate", "sample_id", "attempt", "scanner", "value", "labeler")


@dataclass(frozen=True, slots=True)
class Label:
    run_id: str
    sample_id: str
    attempt: int
    scanner: str
    labeler: str
    value: float | None
    label: str | None


class _Line:
    def __init__(self, path: Path, no: int, rec: dict[str, Any]) -> None:
        self.path, self.no, self.rec = path, no, rec

    def fail(self, fld: str, problem: str) -> IngestError:
        return IngestError(f"{self.path}:{self.no}: field {fld!r}: {problem}")

    def text(self, fld: str) -> str:
        v = self.rec.get(fld)
        if v is None:
            raise self.fail(fld, "missing")
        if not isinstance(v, str) or not v.strip():
            raise self.fail(fld, f"expected a non-empty string, got {json.dumps(v)[:60]}")
        return v

    def integer(self, fld: str, low: int) -> int | None:
        v = self.rec.get(fld)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise self.fail(fld, f"expected an integer of {low} or more, got {json.dumps(v)[:60]}")
        return v


class _Warehouse:
    """The runs and attempts of the warehouse, for resolving labels."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.runs = {r: (m, int(rep)) for r, m, rep in con.execute(
            "SELECT run_id, model, replicate FROM raw.runs").fetchall()}
        self.attempts: dict[tuple[str, str], dict[int, bool]] = {}
        for run_id, sample_id, attempt, final in con.execute(
                "SELECT run_id, sample_id, attempt, is_final FROM raw.trajectories").fetchall():
            self.attempts.setdefault((run_id, sample_id), {})[int(attempt)] = bool(final)


def _run_of(line: _Line, wh: _Warehouse) -> str:
    if "run_id" in line.rec:
        run_id = line.text("run_id")
        if run_id not in wh.runs:
            raise line.fail("run_id", f"no run {run_id!r} in the warehouse")
        return run_id
    if "model" not in line.rec:
        raise line.fail("run_id", "missing (give run_id, or model with epoch or replicate)")
    model = line.text("model")
    epoch, replicate = line.integer("epoch", 1), line.integer("replicate", 0)
    if epoch is not None and replicate is not None and replicate != epoch - 1:
        raise line.fail("replicate", f"{replicate} is not epoch {epoch} - 1")
    rep = replicate if replicate is not None else (epoch - 1 if epoch is not None else None)
    if rep is None:
        raise line.fail("epoch", "missing (with model, give epoch or replicate)")
    found = sorted(r for r, (m, p) in wh.runs.items() if m == model and p == rep)
    if not found:
        raise line.fail("model", f"no run of model {model!r} with epoch {rep + 1}")
    if len(found) > 1:
        raise line.fail("model", f"model {model!r} epoch {rep + 1} matches {len(found)} runs "
                                 f"({', '.join(found[:3])}): give run_id")
    return found[0]


def _value(line: _Line) -> tuple[float | None, str | None]:
    if "value" not in line.rec:
        raise line.fail("value", "missing")
    v = line.rec["value"]
    if isinstance(v, bool):
        return (1.0 if v else 0.0), None
    if isinstance(v, (int, float)) and math.isfinite(v):
        return float(v), None
    if isinstance(v, str) and v.strip():
        return None, v
    raise line.fail("value", f"expected true/false, a number or a label, got {json.dumps(v)[:60]}")


def parse_line(line: _Line, wh: _Warehouse) -> Label:
    unknown = sorted(set(line.rec) - set(_FIELDS))
    if unknown:
        raise line.fail(unknown[0], f"not a field of a label (fields: {', '.join(_FIELDS)})")
    run_id = _run_of(line, wh)
    sample_id = line.text("sample_id")
    attempts = wh.attempts.get((run_id, sample_id))
    if not attempts:
        raise line.fail("sample_id", f"run {run_id!r} has no sample {sample_id!r}")
    attempt = line.integer("attempt", 0)
    if attempt is None:
        attempt = max(a for a, final in attempts.items() if final) if any(attempts.values()) else max(attempts)
    elif attempt not in attempts:
        raise line.fail("attempt", f"sample {sample_id!r} of run {run_id!r} has no attempt {attempt} "
                                   f"(attempts: {', '.join(map(str, sorted(attempts)))})")
    value, label = _value(line)
    return Label(run_id, sample_id, attempt, line.text("scanner"), line.text("labeler"), value, label)


def read_labels(path: Path, wh: _Warehouse, seen: dict[tuple[str, str, int, str, str], str]) -> list[Label]:
    """The labels of one file; ``seen``: the labels read so far (key -> file:line), to refuse a second one."""
    text = read_utf8(path, "labels file", IngestError)
    out: list[Label] = []
    for no, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise IngestError(f"{path}:{no}: not a JSON object ({str(exc)[:80]})") from None
        if not isinstance(rec, dict):
            raise IngestError(f"{path}:{no}: expected a JSON object, got {type(rec).__name__}")
        lab = parse_line(_Line(path, no, rec), wh)
        key = (lab.run_id, lab.sample_id, lab.attempt, lab.scanner, lab.labeler)
        if key in seen:
            raise IngestError(f"{path}:{no}: field 'labeler': {lab.labeler!r} labelled this attempt for scanner "
                              f"{lab.scanner!r} already ({seen[key]})")
        seen[key] = f"{path}:{no}"
        out.append(lab)
    if not out:
        raise IngestError(f"{path}: no labels (one JSON object per line)")
    return out


def load_labels(db: Path, files: Sequence[Path]) -> int:
    """Load every labels file into raw.human_labels in one transaction; returns the number of labels."""
    if not db.exists():
        raise IngestError(f"warehouse {db} does not exist: load the labelled runs with agenthop-ingest first")
    now = datetime.now(timezone.utc)
    with open_warehouse(db) as con:
        from .scanners.units import table_exists

        if not table_exists(con, "runs"):
            raise IngestError(f"warehouse {db} holds no runs: load the labelled runs first")
        wh = _Warehouse(con)
        seen: dict[tuple[str, str, int, str, str], str] = {}
        labels = [(f, lab) for f in files for lab in read_labels(f, wh, seen)]
        table = pa.table({
            "run_id": [x.run_id for _, x in labels], "sample_id": [x.sample_id for _, x in labels],
            "attempt": [x.attempt for _, x in labels], "scanner": [x.scanner for _, x in labels],
            "labeler": [x.labeler for _, x in labels], "value": [x.value for _, x in labels],
            "label": [x.label for _, x in labels], "source": [str(f) for f, _ in labels],
            "loaded_at": [now] * len(labels)}, schema=sschema.HUMAN_LABELS)
        with transaction(con):
            con.execute(ddl.create_table_sql("human_labels", sschema.HUMAN_LABELS))
            keys = table.select(["run_id", "sample_id", "attempt", "scanner", "labeler"])  # noqa: F841 (by name)
            con.execute("DELETE FROM raw.human_labels AS h WHERE EXISTS (SELECT 1 FROM keys AS k WHERE "
                        "k.run_id = h.run_id AND k.sample_id = h.sample_id AND k.attempt = h.attempt AND "
                        "k.scanner = h.scanner AND k.labeler = h.labeler)")
            insert_arrow(con, "human_labels", table)
    return len(labels)
