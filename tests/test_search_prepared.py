"""The search index's units of runs held in memory (ingest/transcripts/prepared.py) against units.py's SQL
over the raw tables: the same rows, in the same stored order, with the same unit numbers and words."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from agenthop.ingest.transcripts import index
from agenthop.ingest.transcripts.prepared import RunUnits, batch_units, run_units
from agenthop.ingest.transcripts.units import COLUMNS, outputs_sql, stored_units_sql

S, I = pa.string(), pa.int32()
NAMES = ", ".join(name for name, _ in COLUMNS)


def _messages(rows: list[tuple]) -> pa.Table:
    cols = ["run_id", "sample_id", "attempt", "idx", "role", "name", "content"]
    types = [S, S, I, I, S, S, S]
    return pa.table({c: pa.array([r[k] for r in rows], t) for k, (c, t) in enumerate(zip(cols, types))})


def _turns(rows: list[tuple]) -> pa.Table:
    cols, types = ["run_id", "sample_id", "attempt", "turn", "role"], [S, S, I, I, S]
    return pa.table({c: pa.array([r[k] for r in rows], t) for k, (c, t) in enumerate(zip(cols, types))})


def _calls(rows: list[tuple]) -> pa.Table:
    cols = ["run_id", "sample_id", "attempt", "turn", "tool", "seq", "status", "args_json"]
    types = [S, S, I, I, S, I, S, S]
    return pa.table({c: pa.array([r[k] for r in rows], t) for k, (c, t) in enumerate(zip(cols, types))})


#: Two runs (given in reverse order) whose rows cover what the turn rule and the stored order depend
#: on: messages before the first assistant message, more assistant messages than assistant turns (an
#: error turn between), a role that sorts before "assistant", null contents and arguments, rows of an
#: item and attempts out of order, a run id and items that sort differently as bytes and as cases.
MESSAGES = [
    ("run-b", "st_2", 0, 0, "system", None, "You navigate papers."),
    ("run-b", "st_2", 0, 1, "user", None, "Question two"),
    ("run-b", "st_2", 0, 2, "assistant", None, "I will look"),
    ("run-b", "st_2", 0, 3, "tool", "get_paper_info", "Title: A"),
    ("run-b", "st_2", 0, 4, "assistant", None, None),
    ("run-b", "st_2", 0, 5, "agent", None, "a note"),
    ("run-b", "st_2", 0, 6, "assistant", None, "third assistant message, no third assistant turn"),
    ("run-b", "st_2", 0, 7, "tool", "submit_answer", "Answer submitted: (b)"),
    ("run-b", "St_1", 1, 1, "assistant", None, "retry: answer"),
    ("run-b", "St_1", 1, 0, "user", None, "Question one"),
    ("run-b", "St_1", 0, 0, "user", None, "Question one"),
    ("run-b", "St_1", 0, 1, "tool", "search_papers", "Result: nothing"),
]
TURNS = [
    ("run-b", "st_2", 0, 0, "assistant"), ("run-b", "st_2", 0, 1, "error"), ("run-b", "st_2", 0, 2, "assistant"),
    ("run-b", "St_1", 1, 0, "assistant"),
]
CALLS = [
    ("run-b", "st_2", 0, 0, "get_paper_info", 0, "ok", '{"paper_id": "p1"}'),
    ("run-b", "st_2", 0, 2, "submit_answer", 1, "ok", None),
    ("run-b", "St_1", 1, 0, "submit_answer", 0, "not_executed", "{}"),
]
MESSAGES_A = [
    ("Run-a", "st_1", 0, 0, "user", None, "q"),
    ("Run-a", "st_1", 0, 1, "assistant", None, "Timeout: retrying"),
    ("Run-a", "st_1", 0, 2, "tool", "read_section", "=== Results ===\n\ntimeout"),
]
TURNS_A = [("Run-a", "st_1", 0, 0, "assistant")]
CALLS_A = [("Run-a", "st_1", 0, 0, "read_section", 0, "ok", '{"paper_id": "p2", "section": "B"}')]

RUNS = {"run-b": (MESSAGES, TURNS, CALLS), "Run-a": (MESSAGES_A, TURNS_A, CALLS_A)}


def _raw(con: duckdb.DuckDBPyConnection) -> None:
    """raw.messages, raw.turns and raw.tool_calls of RUNS (the columns units.py reads)."""
    con.execute("CREATE SCHEMA raw")
    for name, make, parts in (("messages", _messages, 0), ("turns", _turns, 1), ("tool_calls", _calls, 2)):
        rows = make([row for run in RUNS.values() for row in run[parts]])  # noqa: F841 (read by name)
        con.execute(f"CREATE TABLE raw.{name} AS SELECT * FROM rows")


def _held(con: duckdb.DuckDBPyConnection) -> list[RunUnits]:
    out = []
    for run_id, (msgs, turns, calls) in RUNS.items():
        out.append(run_units(con, run_id, _turns(turns), _calls(calls), _messages(msgs)))
    return out


def _sql_units(con: duckdb.DuckDBPyConnection, start: int) -> tuple[list[tuple], list[tuple]]:
    """The rows index.py's SQL would store, numbered from ``start``, in its stored order."""
    units = con.execute(f"SELECT {NAMES}, {start - 1} + row_number() OVER (ORDER BY {index.CLUSTER_ORDER}) AS uid "
                        f"FROM ({stored_units_sql()}) ORDER BY uid").fetchall()
    first = start + len(units)
    outputs = con.execute(f"SELECT {NAMES}, {first - 1} + row_number() OVER (ORDER BY {index.OUTPUT_ORDER}) AS uid "
                          f"FROM ({outputs_sql()}) ORDER BY uid").fetchall()
    return units, outputs


def test_held_units_are_the_sql_units_in_the_same_order() -> None:
    con = duckdb.connect()
    _raw(con)
    expected_units, expected_outputs = _sql_units(con, 101)
    index._create(con)
    batch = batch_units(_held(con), 101)
    assert (batch.n_units, batch.n_outputs) == (len(expected_units), len(expected_outputs))
    index._insert_held(con, batch)
    assert con.execute(f"SELECT {NAMES}, uid FROM search.units ORDER BY rowid").fetchall() == expected_units
    assert con.execute(f"SELECT {NAMES}, uid FROM search.outputs ORDER BY rowid").fetchall() == expected_outputs
    # the cases the rows were chosen for
    turns = {(r[1], r[2], r[7], r[4]): r[3] for r in expected_units + expected_outputs}
    assert turns[("st_2", 0, 0, "message")] == 0  # before the first assistant message: its turn
    assert turns[("st_2", 0, 6, "message")] == 2  # third assistant message, two assistant turns: 3 - 1
    assert [r[5] for r in expected_units[:4]] == ["agent", "assistant", "assistant", "assistant"]


@pytest.fixture(scope="module")
def reference_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/test_ingest_reference_json.py's reference folder, ingested (its runs enter the index held)."""
    from test_ingest_reference_json import ingest, write_experiments
    from ingest_fixtures import write_release

    tmp = tmp_path_factory.mktemp("prepared")
    sha = write_release(tmp / "bench")
    write_experiments(tmp / "experiments", sha)
    db = tmp / "w.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(tmp / "bench"), "--reference-json", str(tmp / "experiments"))
    assert res.exit_code == 0, res.output
    return db


def _search_tables(db: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            "units": con.execute(f"SELECT {NAMES}, uid FROM search.units ORDER BY rowid").fetchall(),
            "outputs": con.execute(f"SELECT {NAMES}, uid FROM search.outputs ORDER BY rowid").fetchall(),
            "postings": con.execute("SELECT token, uid FROM search.postings ORDER BY rowid").fetchall(),
            "vocab": con.execute("SELECT token, n_units, common FROM search.vocab ORDER BY token").fetchall(),
        }
    finally:
        con.close()


def test_an_import_indexes_as_a_rebuild_from_the_raw_tables(reference_warehouse: Path, tmp_path: Path) -> None:
    held = _search_tables(reference_warehouse)
    assert held["units"] and held["outputs"] and held["postings"]
    copy = tmp_path / "rebuilt.duckdb"
    shutil.copyfile(reference_warehouse, copy)
    index.reindex_warehouse(copy)  # units.py's SQL over the raw tables
    assert _search_tables(copy) == held


def test_the_import_takes_the_held_units(reference_warehouse: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference import hands its runs' units to the index (which then runs no units.py SELECT)."""
    from test_ingest_reference_json import ingest, write_experiments
    from ingest_fixtures import write_release

    taken: list[int] = []
    insert_held = index._insert_held
    monkeypatch.setattr(index, "_insert_held", lambda con, batch: (taken.append(batch.n_units), insert_held(con, batch)))
    monkeypatch.setattr(index, "unit_keys_sql", lambda *a: pytest.fail("the raw tables were read"))
    sha = write_release(tmp_path / "bench")
    write_experiments(tmp_path / "experiments", sha)
    db = tmp_path / "w.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(tmp_path / "bench"), "--reference-json", str(tmp_path / "experiments"))
    assert res.exit_code == 0, res.output
    assert taken and taken[0] > 0
    assert _search_tables(db) == _search_tables(reference_warehouse)


def test_a_run_indexed_in_parts_is_read_from_the_raw_tables(reference_warehouse: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A run larger than a batch is indexed in parts by item, from the raw tables: the same index."""
    from test_ingest_reference_json import ingest, write_experiments
    from ingest_fixtures import write_release

    monkeypatch.setattr(index, "BATCH_MESSAGES", 2)
    held: list[int] = []
    insert_held = index._insert_held
    monkeypatch.setattr(index, "_insert_held", lambda con, batch: (held.append(batch.messages.num_rows),
                                                                   insert_held(con, batch)))
    sha = write_release(tmp_path / "bench")
    write_experiments(tmp_path / "experiments", sha)
    db = tmp_path / "w.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(tmp_path / "bench"), "--reference-json", str(tmp_path / "experiments"))
    assert res.exit_code == 0, res.output
    assert all(n <= 2 for n in held)  # whole runs of up to a batch only
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT max(n) FROM (SELECT count(*) AS n FROM raw.messages GROUP BY run_id)").fetchall()[0][0] > 2
    con.close()
    parts = _search_tables(db)
    whole = _search_tables(reference_warehouse)
    # numbered batch by batch, the units differ in number and order only: the same rows otherwise
    for name in ("units", "outputs"):
        assert sorted(r[:-1] for r in parts[name]) == sorted(r[:-1] for r in whole[name])
