"""Fuzzing ingest (bounded): damaged reference JSON and run-directory rows never produce a traceback,
and a refused ingest leaves the warehouse byte-identical."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agenthop.ingest.cli import main
from agenthop.schemas import trajectory as tschema
from ingest_fixtures import ref_trajectory, ref_turn, run_rows, write_release, write_run

FUZZ = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                derandomize=True)

# JSON values that have broken importers: huge and negative numbers, non-finite floats, lone
# surrogates, wrong types, deep nesting
_ODD_TEXT = st.sampled_from(["", "\ud800", "a\udfffb", "\x00", "=== Results ===\nx", "REJECTED: Insufficient budget",
                             "Unknown tool: x", "é" * 3, "\u2028"])
_SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 2**31, 2**63, 10**12, -(2**31) - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8), _ODD_TEXT,
)
JSON_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                           st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                           max_leaves=8)

TRAJ_FIELDS = list(ref_trajectory("st_0001", []).keys())
TURN_FIELDS = list(ref_turn(0, [], [], before=30, after=30).keys())


def ingest(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("fuzz")
    root = work / "bench"
    bench_sha = write_release(root)
    db = work / "w.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(root))
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(db))
    con.execute("CHECKPOINT")
    con.close()
    return {"db": db, "sha": bench_sha}


def check_outcome(db: Path, before: str, args: list[str]) -> None:
    """The ingest either loads or refuses with one line (exit 2) and an untouched warehouse."""
    res = ingest("--db", str(db), *args)  # an uncaught exception fails the test with its traceback
    assert res.exit_code in (0, 2), res.output
    assert "Traceback" not in res.output
    if res.exit_code == 2:
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
        assert sha(db) == before
        assert not Path(str(db) + ".wal").exists()


def _good_record() -> dict[str, Any]:
    turn = ref_turn(0, [("list_sections", {"paper_id": "p"}), ("submit_answer", {"answer": "B"})],
                    [("Paper 'p' not found.", 1), ("Answer submitted: B", 0)], before=30, after=29)
    return ref_trajectory("st_0001", [turn], budget_used=1, predicted_index=1, predicted_answer="B")


@FUZZ
@given(
    edits=st.lists(st.tuples(st.sampled_from(TRAJ_FIELDS), JSON_VALUES), min_size=1, max_size=3),
    turn_edits=st.lists(st.tuples(st.sampled_from(TURN_FIELDS), JSON_VALUES), max_size=2),
    summary=st.one_of(st.none(), st.dictionaries(st.sampled_from(["config", "fingerprint"]),
                                                 st.dictionaries(st.sampled_from(["budget", "max_turns",
                                                                                  "max_total_tokens", "started_at",
                                                                                  "schema_version"]),
                                                                 JSON_VALUES, max_size=2), max_size=2)),
    accept_dq=st.booleans(),
)
def test_reference_json_fuzz(template: dict, edits: list, turn_edits: list, summary: Any, accept_dq: bool) -> None:
    rec = _good_record()
    for key, value in edits:
        rec[key] = value
    if isinstance(rec.get("turns"), list) and rec["turns"] and isinstance(rec["turns"][0], dict):
        for key, value in turn_edits:
            rec["turns"][0][key] = value
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        db = work / "w.duckdb"
        shutil.copyfile(template["db"], db)
        folder = work / "ref-fuzz"
        folder.mkdir()
        # ensure_ascii: lone surrogates become \\ud800 escapes, as another program would write them
        (folder / "st_0001.json").write_text(json.dumps(rec, ensure_ascii=True), encoding="ascii")
        if summary is not None:
            (folder / "summary.json").write_text(json.dumps(summary, ensure_ascii=True), encoding="ascii")
        check_outcome(db, sha(db), ["--reference-json", str(folder), *(["--accept-dq"] if accept_dq else [])])


def _column_values(field: pa.Field) -> st.SearchStrategy:
    t = field.type
    if pa.types.is_integer(t):
        bits = t.bit_width
        return st.one_of(st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1), st.sampled_from([-1, 0, 7]))
    if pa.types.is_floating(t):
        return st.floats(allow_nan=True, allow_infinity=True)
    if pa.types.is_boolean(t):
        return st.booleans()
    if pa.types.is_timestamp(t):
        return st.none()
    return st.one_of(st.text(max_size=6), st.sampled_from(["ok", "st_0001", "full", "answer", "teleport"]))


@st.composite
def _row_edits(draw: st.DrawFn) -> list[tuple[str, int, str, Any]]:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        table = draw(st.sampled_from(list(tschema.REQUIRED_TABLES)))
        f = draw(st.sampled_from([f for f in tschema.TABLES[table] if f.name != "run_id"]))
        value = draw(_column_values(f) if not f.nullable else st.one_of(st.none(), _column_values(f)))
        if value is None and not f.nullable:
            value = 0
        out.append((table, draw(st.integers(0, 8)), f.name, value))
    return out


@FUZZ
@given(edits=_row_edits(), accept_dq=st.booleans())
def test_run_directory_rows_fuzz(template: dict, edits: list, accept_dq: bool) -> None:
    rows = run_rows("fuzz-run", template["sha"])
    for table, k, column, value in edits:
        target = rows[table][k % len(rows[table])]
        target[column] = value
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        db = work / "w.duckdb"
        shutil.copyfile(template["db"], db)
        d = write_run(work / "runs", rows)
        check_outcome(db, sha(db), ["--runs", str(d), *(["--accept-dq"] if accept_dq else [])])

