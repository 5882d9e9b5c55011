"""agenthop-ingest --labels: human labels into raw.human_labels (run_id or model + epoch/replicate, the final
attempt by default); a bad line is one error naming file:line:field and leaves the warehouse unchanged."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import pytest
import scanner_fixtures as fx
from click.testing import CliRunner

from agenthop.ingest.cli import main as ingest_main


def _write(p: Path, rows: list[object]) -> Path:
    p.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return p


def labels(db: Path) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT run_id, sample_id, attempt, scanner, labeler, value, label FROM raw.human_labels "
                           "ORDER BY ALL").fetchall()


def ingest(*args: object):
    return CliRunner().invoke(ingest_main, [str(a) for a in args])


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    return fx.build(tmp_path / "w.duckdb", with_scanner_tables=False)  # an older warehouse: the table comes with it


def test_labels_load_resolve_and_replace(db: Path, tmp_path: Path) -> None:
    f = _write(tmp_path / "l.jsonl", [
        {"run_id": "r1", "sample_id": "s1", "scanner": "hedges", "value": True, "labeler": "ann"},
        {"run_id": "r1", "sample_id": "s3", "scanner": "hedges", "value": 0, "labeler": "ann"},  # final: attempt 1
        {"run_id": "r1", "sample_id": "s3", "attempt": 0, "scanner": "hedges", "value": False, "labeler": "ann"},
        {"model": "m2", "epoch": 1, "sample_id": "s2", "scanner": "kind", "value": "gave up", "labeler": "bo"},
        {"model": "m2", "replicate": 0, "sample_id": "s1", "scanner": "hedges", "value": 0.5, "labeler": "bo"},
        "",
    ])
    r = ingest("--db", db, "--labels", f)
    assert r.exit_code == 0 and "loaded 5 label(s)" in r.output, r.output
    assert labels(db) == [
        ("r1", "s1", 0, "hedges", "ann", 1.0, None), ("r1", "s3", 0, "hedges", "ann", 0.0, None),
        ("r1", "s3", 1, "hedges", "ann", 0.0, None), ("r2", "s1", 0, "hedges", "bo", 0.5, None),
        ("r2", "s2", 0, "kind", "bo", None, "gave up")]
    g = _write(tmp_path / "g.jsonl", [{"run_id": "r1", "sample_id": "s1", "scanner": "hedges", "value": False,
                                       "labeler": "ann"}])
    assert ingest("--db", db, "--labels", g).exit_code == 0
    assert labels(db)[0] == ("r1", "s1", 0, "hedges", "ann", 0.0, None) and len(labels(db)) == 5


GOOD = {"run_id": "r1", "sample_id": "s1", "scanner": "hedges", "value": True, "labeler": "ann"}


@pytest.mark.parametrize(("line", "reason"), [
    ({**GOOD, "run_id": "r9"}, ":2: field 'run_id': no run 'r9'"),
    ({**GOOD, "sample_id": "s9"}, ":2: field 'sample_id': run 'r1' has no sample 's9'"),
    ({**GOOD, "attempt": 4}, ":2: field 'attempt': sample 's1' of run 'r1' has no attempt 4"),
    ({k: v for k, v in GOOD.items() if k != "labeler"}, ":2: field 'labeler': missing"),
    ({**GOOD, "value": None}, ":2: field 'value': expected true/false, a number or a label"),
    ({k: v for k, v in {**GOOD, "model": "m1"}.items() if k != "run_id"}, ":2: field 'epoch': missing"),
    ({k: v for k, v in {**GOOD, "model": "m1", "epoch": 2}.items() if k != "run_id"},
     ":2: field 'model': no run of model 'm1' with epoch 2"),
    ({**GOOD, "colour": 1}, ":2: field 'colour': not a field of a label"),
    ("{not json", ":2: not a JSON object"),
    (GOOD, ":2: field 'labeler': 'ann' labelled this attempt for scanner 'hedges' already"),
])
def test_a_bad_label_line_names_file_line_field_and_writes_nothing(db: Path, tmp_path: Path, line: object,
                                                                   reason: str) -> None:
    f = _write(tmp_path / "bad.jsonl", [GOOD, line])
    sha = hashlib.sha256(db.read_bytes()).hexdigest()
    r = ingest("--db", db, "--labels", f)
    assert r.exit_code == 2 and f"{f}{reason}" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1
    assert hashlib.sha256(db.read_bytes()).hexdigest() == sha


def test_labels_load_alone(db: Path, tmp_path: Path) -> None:
    f = _write(tmp_path / "l.jsonl", [GOOD])
    r = ingest("--db", db, "--labels", f, "--runs", tmp_path)
    assert r.exit_code == 2 and "--labels and --scout-results each load in a call of their own" in r.output
