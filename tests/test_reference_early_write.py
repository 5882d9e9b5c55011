"""Reference folders are inserted while later ones are parsed (ingest/core.py _EarlyWrite): the same
rows in the same order as inserting everything after the checks, and a refused or failed import
still leaves the warehouse file byte for byte as it was."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from agenthop.ingest import core
from agenthop.ingest.cli import main
from ingest_fixtures import SAMPLE_IDS, SEED1, ref_trajectory, ref_turn, run_rows, write_json, write_release, write_run

TABLES = ("runs", "trajectories", "turns", "tool_calls", "messages", "dq_issues", "ingest_log")


def ingest(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def file_sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def rows(db: Path) -> dict[str, list[tuple]]:
    """Every run table in storage order (rowid), without the load time."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for t in TABLES:
            cols = [c for (c,) in con.sql(
                f"SELECT column_name FROM duckdb_columns() WHERE schema_name = 'raw' AND table_name = '{t}' "
                "AND column_name <> 'loaded_at' ORDER BY column_index").fetchall()]
            out[t] = con.sql(f"SELECT {', '.join(cols)} FROM raw.{t} ORDER BY rowid").fetchall()
        return out
    finally:
        con.close()


def folder(root: Path, name: str, n: int, *, output: str = "Title: Seed One") -> Path:
    d = root / name
    for k, sid in enumerate(SAMPLE_IDS[:n]):
        turn = ref_turn(0, [("get_paper_info", {"paper_id": SEED1})], [(f"{output} {k}", 1)], before=30, after=29)
        write_json(d / f"{sid}.json", ref_trajectory(sid, [turn], budget_used=1,
                                                     messages=[{"role": "tool", "content": f"{output} {k}"}]))
    return d


@pytest.fixture()
def setup(tmp_path: Path) -> dict:
    root = tmp_path / "bench"
    sha = write_release(root)
    db = tmp_path / "w.duckdb"
    exp = tmp_path / "exp"
    for name in ("m-a", "m-b", "m-c"):
        folder(exp, name, len(SAMPLE_IDS))
    run = write_run(tmp_path / "runs" / "r1", run_rows("r1", sha))
    res = ingest("--db", str(db), "--benchmark", str(root), "--reference-json", str(exp / "m-a"))
    assert res.exit_code == 0, res.output
    return {"db": db, "exp": exp, "run": run, "tmp": tmp_path}


def _no_early(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core._EarlyWrite, "add", lambda self, rd: None)


def _both(setup: dict, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[dict, dict]:
    """The import's rows with early inserts and without (each into a copy of the warehouse)."""
    out = []
    for early in (True, False):
        db = setup["tmp"] / f"copy-{early}.duckdb"
        shutil.copyfile(setup["db"], db)
        with monkeypatch.context() as m:
            if not early:
                _no_early(m)
            res = ingest("--db", str(db), *args)
        assert res.exit_code == 0, res.output
        out.append(rows(db))
    return out[0], out[1]


def test_same_rows_in_the_same_order(setup: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    # m-a changes (its loaded rows are replaced), m-b and m-c are new; a --runs run comes first
    exp = setup["exp"]
    folder(exp, "m-a", len(SAMPLE_IDS), output="Title: changed")
    early, late = _both(setup, monkeypatch, "--runs", str(setup["run"]), "--reference-json", str(exp))
    assert early == late
    assert len(early["runs"]) == 4 and len(early["messages"]) > len(SAMPLE_IDS)


def test_quality_checked_in_groups_finds_the_same(setup: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """The data-quality rules run on the runs inserted so far while the import waits for its worker;
    with violations of two rules in the first and the last folder, --accept-dq records the same
    rows in the same order as one check of all runs at the end."""
    exp = setup["exp"]
    for name in ("m-a", "m-c"):
        write_json(exp / name / f"{SAMPLE_IDS[0]}.json", ref_trajectory(SAMPLE_IDS[0], [], predicted_index=9))
        write_json(exp / name / f"{SAMPLE_IDS[1]}.json", ref_trajectory(SAMPLE_IDS[1], [], budget_used=3))
    checked = []
    real = core._EarlyWrite.add

    def add(self, rd):  # check what is inserted before each folder: m-a, then m-b; m-c is left to the end
        self.check_quality()
        checked.append(list(self.dq_runs or []))
        real(self, rd)

    monkeypatch.setattr(core._EarlyWrite, "add", add)
    early, late = _both(setup, monkeypatch, "--accept-dq", "--reference-json", str(exp))
    assert len(checked[-1]) == 2, checked  # m-a and m-b checked apart, m-c at the end
    assert early == late
    assert len(early["dq_issues"]) == 4, early["dq_issues"]


def test_a_failing_early_insert_leaves_the_write_to_the_end(setup: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = core.insert_arrow

    def flaky(con, table, data, **options):
        calls.append(table)
        if len(calls) == 3:
            raise duckdb.IOException("disk hiccup")
        real(con, table, data, **options)

    monkeypatch.setattr(core, "insert_arrow", flaky)
    early, late = _both(setup, monkeypatch, "--reference-json", str(setup["exp"]))
    assert early == late


@pytest.mark.parametrize("damage", ["malformed", "unknown_sample", "data_quality"])
def test_a_refusal_after_early_inserts_changes_nothing(setup: dict, damage: str) -> None:
    db, exp = setup["db"], setup["exp"]
    folder(exp, "m-a", len(SAMPLE_IDS), output="Title: changed")  # replaced: its old rows deleted early
    last = exp / "m-c" / f"{SAMPLE_IDS[-1]}.json"
    if damage == "malformed":
        last.write_text('{"sample_id": "x", "turns": [', encoding="utf-8")
        expect = f"error: {last}: malformed JSON"
    elif damage == "unknown_sample":
        write_json(exp / "m-c" / "zz_0001.json", ref_trajectory("zz_0001", []))
        expect = f"error: {exp / 'm-c' / 'zz_0001.json'}: sample id 'zz_0001' is not in the loaded benchmark"
    else:
        write_json(last, ref_trajectory(SAMPLE_IDS[-1], [], predicted_index=9))
        expect = f"error: {last}: row record, column 'predicted_index' (trajectories): is 9"
    before = file_sha(db)
    res = ingest("--db", str(db), "--reference-json", str(exp))
    assert res.exit_code == 2
    assert res.stderr.startswith(expect), res.stderr
    assert file_sha(db) == before
    assert not Path(str(db) + ".wal").exists()


def test_a_refused_import_into_a_new_warehouse_leaves_no_file(setup: dict) -> None:
    db = setup["tmp"] / "new" / "w.duckdb"
    exp = setup["exp"]
    write_json(exp / "m-c" / "zz_0001.json", ref_trajectory("zz_0001", []))
    res = ingest("--db", str(db), "--benchmark", str(setup["tmp"] / "bench"), "--reference-json", str(exp))
    assert res.exit_code == 2, res.output
    assert not db.parent.exists()


def test_keys_checked_per_run_or_else_over_all(setup: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys are checked per run while later folders are parsed; when that finds a duplicate (or a run
    was not checked so), the check over all runs runs as before and gives its message."""
    from agenthop.ingest import runs as runsmod

    full = []
    real = runsmod.check_keys
    monkeypatch.setattr(runsmod, "check_keys", lambda *a: full.append(1) or real(*a))
    exp = str(setup["exp"])
    res = ingest("--db", str(setup["tmp"] / "a.duckdb"), "--benchmark", str(setup["tmp"] / "bench"),
                 "--reference-json", exp)
    assert res.exit_code == 0 and not full, res.output
    monkeypatch.setattr(core, "_increasing", lambda *a: False)  # undecided: grouped per run
    monkeypatch.setattr(core, "find_duplicate", lambda *a: {"run_id": "x"})
    res = ingest("--db", str(setup["tmp"] / "b.duckdb"), "--benchmark", str(setup["tmp"] / "bench"),
                 "--reference-json", exp)
    assert res.exit_code == 0 and full == [1], res.output
    full.clear()
    _no_early(monkeypatch)
    res = ingest("--db", str(setup["tmp"] / "c.duckdb"), "--benchmark", str(setup["tmp"] / "bench"),
                 "--reference-json", exp)
    assert res.exit_code == 0 and full == [1], res.output


def test_increasing_keys_settle_the_key_check() -> None:
    import pyarrow as pa

    t = pa.table({"run_id": ["r"] * 4, "sample_id": ["a", "a", "b", "b"], "turn": [0, 1, 0, 1]})
    keys = ["run_id", "sample_id", "turn"]
    assert core._increasing(t, keys)
    assert not core._increasing(t.take([0, 2, 1, 3]), keys)  # out of order: undecided
    assert not core._increasing(t.take([0, 1, 1, 2]), keys)  # a repeated key
    assert not core._increasing(pa.table({"run_id": ["r", None]}), ["run_id"])
    assert core._increasing(t.slice(0, 1), keys)
