"""agenthop-ingest --scout-results: Inspect Scout scan folders (the layout and columns Scout 0.6 writes: one Parquet
file per scanner under scans/scan_id=<id>/, one row per transcript and scanner) become scanner results of the
attempts they name; bad rows are one error and write nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scanner_fixtures as fx
from click.testing import CliRunner

from agenthop.ingest.cli import main as ingest_main
from agenthop.ingest.scanners.scout import evidence, explanation, read_value


def _scan(root: Path, scanner: str, rows: list[dict]) -> Path:
    folder = root / "scans" / "scan_id=AbCdEfGhIjKlMnOpQrStUv"
    folder.mkdir(parents=True, exist_ok=True)
    cols = ["transcript_id", "transcript_source_id", "transcript_task_id", "transcript_task_repeat",
            "transcript_metadata", "scanner_name", "scanner_version", "value", "value_type", "label", "explanation",
            "scan_error"]
    table = pa.table({c: [r.get(c) for r in rows] for c in cols},
                     schema=pa.schema([(c, pa.int64() if c == "transcript_task_repeat" else pa.large_string())
                                       for c in cols]))
    pq.write_table(table, folder / f"{scanner}.parquet")
    (folder / "_summary.json").write_text("{}")
    return root / "scans"


def _row(tid: str, meta: dict | None, value: str, value_type: str, **extra: object) -> dict:
    return {"transcript_id": tid, "transcript_metadata": json.dumps(meta) if meta else None, "scanner_name": "secrets",
            "scanner_version": "0", "value": value, "value_type": value_type, "explanation": f"[M2]: {tid}", **extra}


def test_read_value() -> None:
    assert read_value("3", "number") == (3.0, None)
    assert read_value("true", "boolean") == (1.0, None)
    assert read_value("leak", "string") == (None, "leak")
    assert read_value('[{"value": 2}, {"value": 0}, {"value": true}]', "resultset") == (2.0, None)
    assert read_value(None, "null") == (None, None)


def test_scout_results_load_as_scanner_results(tmp_path: Path) -> None:
    db = fx.build(tmp_path / "w.duckdb")
    scans = _scan(tmp_path, "secrets", [
        _row("t1", {"run_id": "r1", "sample_id": "s1"}, "2", "number"),
        _row("t2", {"run_id": "r1", "sample_id": "s3", "attempt": 0}, "false", "boolean"),
        _row("t3", {"run_id": "r2", "sample_id": "s2"}, "0", "number"),
        _row("t4", {"run_id": "r2", "sample_id": "s1"}, "", "null", scan_error="boom"),
    ])
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--scout-results", str(scans)])
    assert r.exit_code == 0, r.output
    assert "loaded 3 Inspect Scout result(s) of 1 scanner(s); 1 row(s) with a scan error skipped" in r.output
    with duckdb.connect(str(db), read_only=True) as con:
        got = con.execute("SELECT run_id, sample_id, attempt, scanner, scanner_version, value, explanation "
                          "FROM raw.scanner_results ORDER BY ALL").fetchall()
    assert got == [("r1", "s1", 0, "secrets", "scout 0 scan:AbCdEfGhIjKlMnOpQrStUv", 2.0, "[M2]: t1"),
                   ("r1", "s3", 0, "secrets", "scout 0 scan:AbCdEfGhIjKlMnOpQrStUv", 0.0, "[M2]: t2"),
                   ("r2", "s2", 0, "secrets", "scout 0 scan:AbCdEfGhIjKlMnOpQrStUv", 0.0, "[M2]: t3")]


def test_an_inspect_transcript_is_found_by_eval_id_and_epoch(tmp_path: Path) -> None:
    db = fx.build(tmp_path / "w.duckdb")
    con = duckdb.connect(str(db))
    fx.insert(con, "runs", [{"run_id": "inspect-EVAL1-e2", "model": "m", "backend": "inspect-log", "condition": "",
                             "benchmark": "inspect:t", "config_json": "{}"}])
    fx.insert(con, "trajectories", [{"run_id": "inspect-EVAL1-e2", "sample_id": "7", "attempt": 0, "is_final": True,
                                     "terminated_by": "answer"}])
    con.close()
    scans = _scan(tmp_path, "secrets", [_row("uuid-1", None, "true", "boolean", transcript_source_id="EVAL1",
                                             transcript_task_id="7", transcript_task_repeat=2)])
    assert CliRunner().invoke(ingest_main, ["--db", str(db), "--scout-results", str(scans)]).exit_code == 0
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT run_id, sample_id, value FROM raw.scanner_results").fetchall() == [
            ("inspect-EVAL1-e2", "7", 1.0)]


@pytest.mark.parametrize(("row", "reason"), [
    (_row("t9", {"run_id": "r9", "sample_id": "s1"}, "1", "number"), "field 'run_id': no run 'r9'"),
    (_row("t9", {"run_id": "r1", "sample_id": "s9"}, "1", "number"), "field 'sample_id': run 'r1' has no sample 's9'"),
    (_row("t9", {"run_id": "r1", "sample_id": "s1", "attempt": 5}, "1", "number"), "field 'attempt'"),
    (_row("t9", None, "1", "number"), "field 'transcript_metadata': names no run_id"),
])
def test_a_bad_scout_row_is_one_error_and_writes_nothing(tmp_path: Path, row: dict, reason: str) -> None:
    db = fx.build(tmp_path / "w.duckdb")
    scans = _scan(tmp_path, "secrets", [_row("t1", {"run_id": "r1", "sample_id": "s1"}, "1", "number"), row])
    sha = hashlib.sha256(db.read_bytes()).hexdigest()
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--scout-results", str(scans)])
    assert r.exit_code == 2 and "row 2 (transcript 't9')" in r.output and reason in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1
    assert hashlib.sha256(db.read_bytes()).hexdigest() == sha


def test_result_set_explanation_and_evidence_as_scout_writes_them() -> None:
    """Scout 0.6.1's own output: a labelled grep is one ``resultset`` row with no explanation of its own; the
    items carry theirs and their message references (ids ``<transcript id>-<n>`` from our export)."""
    items = [{"value": 0, "references": [], "label": "leak"},
             {"value": 2, "explanation": "[M3]: ASSISTANT: **x**", "label": "files",
              "references": [{"type": "message", "cite": "[M3]", "id": "T-3"}, {"type": "message", "cite": "[M4]", "id": "T-4"}]}]
    row = {"transcript_id": "T", "value": json.dumps(items), "value_type": "resultset", "explanation": None,
           "message_references": "[]"}
    meta = {"message_turns": [None, None, [0, None], [0, 1], [1, None]]}
    assert explanation(row) == "files: [M3]: ASSISTANT: **x**"
    assert evidence(row, meta) == [{"turn": 0, "seq": None}, {"turn": 0, "seq": 1}]
    plain = {"transcript_id": "T", "value": "1", "value_type": "number", "explanation": "[M5]: hi",
             "message_references": '[{"type": "message", "cite": "[M5]", "id": "T-5"}, {"type": "message", "id": "U-1"}]'}
    assert explanation(plain) == "[M5]: hi"
    assert evidence(plain, {"message_turns": json.dumps(meta["message_turns"])}) == [{"turn": 1, "seq": None}]
    assert evidence(plain, {}) is None  # not our export: no evidence
