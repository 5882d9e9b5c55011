"""The content hash of a reference-JSON model folder: taken by the tasks that parse its files (each
file read once), equal to the hash of the up-front check, and recognising the hash that versions
before it stored, so an unchanged folder stays unchanged in a warehouse they wrote."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from agenthop.ingest import reference_json as refjson
from tests.test_ingest_reference_json import RID, imported, ingest, q  # noqa: F401  (fixture)


def _legacy_sha256(folder: Path) -> str:
    """The folder hash of earlier versions, written out independently: one SHA-256 stream over each
    JSON file's relative name and bytes (top-level files sorted, then _failed_attempts/ sorted)."""
    h = hashlib.sha256()
    top = sorted(p.name for p in folder.glob("*.json"))
    failed = sorted(p.name for p in (folder / "_failed_attempts").glob("*.json"))
    for rel in [*top, *(f"_failed_attempts/{n}" for n in failed)]:
        h.update(rel.encode() + b"\0")
        h.update((folder / rel).read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _expected_sha256(folder: Path) -> str:
    """The current definition, written out: SHA-256 over (relative name, NUL, SHA-256 of the bytes)."""
    h = hashlib.sha256()
    top = sorted(p.name for p in folder.glob("*.json"))
    failed = sorted(p.name for p in (folder / "_failed_attempts").glob("*.json"))
    for rel in [*top, *(f"_failed_attempts/{n}" for n in failed)]:
        h.update(rel.encode() + b"\0" + hashlib.sha256((folder / rel).read_bytes()).digest())
    return h.hexdigest()


def _logged(db: Path) -> dict[str, str]:
    rows = q(db, "SELECT run_id, arg_max(content_sha256, load_id) FROM raw.ingest_log "
                 "WHERE run_id IS NOT NULL AND action IN ('inserted', 'replaced') GROUP BY run_id")
    return dict(rows)


def _counts(db: Path) -> list[tuple]:
    return q(db, "SELECT (SELECT count(*) FROM raw.trajectories), (SELECT count(*) FROM raw.tool_calls), "
                 "(SELECT count(*) FROM raw.messages), (SELECT count(*) FROM raw.runs)")


def test_hash_taken_while_parsing_is_the_folder_hash(imported: dict) -> None:
    """The hash logged on insert (taken from the bytes the tasks parsed, plus summary.json) is the
    documented definition, and the one the up-front check computes."""
    exp = imported["exp"]
    logged = _logged(imported["db"])
    for folder in sorted(p for p in exp.iterdir() if p.is_dir()):
        rid = refjson.run_id_of(folder.name)
        assert logged[rid] == _expected_sha256(folder) == refjson.content_sha256(folder), folder.name
    assert (exp / "ref-model" / "_failed_attempts").is_dir() and (exp / "ref-model" / "summary.json").is_file()


@pytest.mark.parametrize("pool", [False, True], ids=["in-process", "worker-pool"])
def test_every_file_counts_in_the_hash(imported: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       pool: bool) -> None:
    """Files no task parses (summary.json, failed attempts of a sample without a final file) and
    files of tasks handed to the record-by-record reader are hashed too, by the workers or here."""
    if pool:
        monkeypatch.setattr(refjson, "POOL_MIN_SAMPLES", 0)
        monkeypatch.setattr(refjson, "TASK_SAMPLES", 1)
    exp = tmp_path / "copy"
    import shutil

    shutil.copytree(imported["exp"], exp)
    folder = exp / "ref-model"
    (folder / "_failed_attempts" / "st_9999.attempt_0.json").write_text('{"sample_id": "st_9999"}', encoding="utf-8")
    rec = json.loads((folder / "st_0001.json").read_text(encoding="utf-8"))
    rec["budget_used"] = float(rec["budget_used"])  # 2.0 for 2: that task is read record by record
    (folder / "st_0001.json").write_text(json.dumps(rec), encoding="utf-8")
    db = tmp_path / "w.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(imported["bench"]), "--reference-json", str(exp))
    assert res.exit_code == 0, res.output
    assert _logged(db)[RID] == _expected_sha256(folder) == refjson.content_sha256(folder)
    # and a change in a file no task reads still replaces the run
    (folder / "_failed_attempts" / "st_9999.attempt_0.json").write_text('{"sample_id": "st_9999", "x": 1}',
                                                                        encoding="utf-8")
    res = ingest("--db", str(db), "--reference-json", str(exp))
    assert res.exit_code == 0 and "runs 0 inserted, 1 replaced, 1 unchanged" in res.output, res.output


def test_unchanged_folder_is_recognised_and_nothing_is_written(imported: dict) -> None:
    db, exp = imported["db"], imported["exp"]
    before = _counts(db), q(db, "SELECT max(load_id) FROM raw.ingest_log")
    res = ingest("--db", str(db), "--reference-json", str(exp))
    assert res.exit_code == 0 and "runs 0 inserted, 0 replaced, 2 unchanged" in res.output, res.output
    assert _counts(db) == before[0]
    # the invocation logs its unchanged inputs only
    last = q(db, f"SELECT action, row_counts FROM raw.ingest_log WHERE load_id = {before[1][0][0] + 1} "
                 "AND run_id IS NOT NULL")
    assert last == [("unchanged", "{}"), ("unchanged", "{}")]


def test_warehouse_of_an_earlier_version_keeps_its_runs_unchanged(imported: dict) -> None:
    """A warehouse whose ingest_log holds the earlier hash (as earlier versions wrote it): an unchanged
    folder is still unchanged (no row rewritten), and a changed one is replaced as before."""
    import duckdb

    db, exp = imported["db"], imported["exp"]
    con = duckdb.connect(str(db))
    try:
        for folder in (exp / "ref-model", exp / "ref-model_noretrieval"):
            con.execute("UPDATE raw.ingest_log SET content_sha256 = ? WHERE run_id = ?",
                        [_legacy_sha256(folder), refjson.run_id_of(folder.name)]).fetchall()
    finally:
        con.close()
    assert _logged(db)[RID] == _legacy_sha256(exp / "ref-model") != _expected_sha256(exp / "ref-model")
    assert refjson.legacy_content_sha256(exp / "ref-model") == _legacy_sha256(exp / "ref-model")
    before = _counts(db)
    res = ingest("--db", str(db), "--reference-json", str(exp))
    assert res.exit_code == 0 and "runs 0 inserted, 0 replaced, 2 unchanged" in res.output, res.output
    assert _counts(db) == before
    (exp / "ref-model" / "mt_0001.json").unlink()
    res = ingest("--db", str(db), "--reference-json", str(exp))
    assert res.exit_code == 0 and "runs 0 inserted, 1 replaced, 1 unchanged" in res.output, res.output
    assert _logged(db)[RID] == _expected_sha256(exp / "ref-model")  # from then on the current hash
