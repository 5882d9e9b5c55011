"""agenthop-ingest: layout, loading, idempotency, replacement, partial runs, benchmark identity."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from click.testing import CliRunner

from agenthop.ingest import ddl
from agenthop.ingest.cli import main
from agenthop.schemas import agenthop as bs
from agenthop.schemas import trajectory as ts
from ingest_fixtures import SAMPLE_IDS, run_rows, write_release, write_run

CHECKED_TABLES = [t for t in ddl.all_tables() if t != "ingest_log"]


def ingest(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def table_checksums(db: Path) -> dict[str, tuple[int, str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for t in CHECKED_TABLES:
            out[t] = con.sql(
                f"SELECT count(*), md5(coalesce(string_agg(CAST(x AS VARCHAR), chr(10) "
                f"ORDER BY CAST(x AS VARCHAR)), '')) FROM raw.{t} x"
            ).fetchall()[0]
        return out
    finally:
        con.close()


def q(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.sql(sql).fetchall()
    finally:
        con.close()


def file_sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture()
def release(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "bench"
    return root, write_release(root)


@pytest.fixture()
def loaded(tmp_path: Path, release: tuple[Path, str]) -> dict:
    root, sha = release
    runs = tmp_path / "runs"
    write_run(runs, run_rows("run-a", sha), parts=2)
    write_run(runs, run_rows("run-b", sha, model="m2", samples=["st_0001", "mt_0001"]))
    db = tmp_path / "wh" / "agenthop.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(root), "--runs", str(runs))
    assert res.exit_code == 0, res.output
    return {"db": db, "bench": root, "sha": sha, "runs": runs, "output": res.output}


def test_ddl_type_mapping() -> None:
    assert ddl.duckdb_type(pa.int32()) == "INTEGER"
    assert ddl.duckdb_type(pa.int64()) == "BIGINT"
    assert ddl.duckdb_type(pa.string()) == "VARCHAR"
    assert ddl.duckdb_type(pa.list_(pa.string())) == "VARCHAR[]"
    assert ddl.duckdb_type(pa.timestamp("us", tz="UTC")) == "TIMESTAMPTZ"
    assert ddl.duckdb_type(pa.timestamp("ns")) == "TIMESTAMP_NS"
    assert ddl.duckdb_type(pa.struct([("a", pa.bool_())])) == 'STRUCT("a" BOOLEAN)'
    sql = ddl.create_table_sql("papers", bs.PAPERS)
    assert '"arxiv_id" VARCHAR NOT NULL' in sql and '"title" VARCHAR,' in sql


def test_layout_matches_schemas(loaded: dict) -> None:
    db = loaded["db"]
    for table in ddl.all_tables():
        cols = q(db, f"SELECT column_name FROM information_schema.columns WHERE table_schema='raw' "
                     f"AND table_name='{table}' ORDER BY ordinal_position")
        expected = [f.name for f in ddl.warehouse_schema(table)]
        assert [c[0] for c in cols] == expected
    for table, schema in {**bs.TABLES, **ts.TABLES}.items():
        extra = ["_partial", "_source"] if table == "runs" else []
        assert [f.name for f in ddl.warehouse_schema(table)] == [f.name for f in schema] + extra
    meta = dict(q(db, "SELECT key, value FROM raw.warehouse_meta"))
    assert meta["duckdb_version"] == duckdb.__version__
    assert meta["benchmark_sha256"] == loaded["sha"]
    assert not Path(str(db) + ".wal").exists()


def test_benchmark_rows(loaded: dict) -> None:
    db = loaded["db"]
    assert q(db, "SELECT sample_id, item_order, depth, options[2], filter_agreement, bridge_necessary "
                 "FROM raw.items ORDER BY item_order") == [
        ("st_0001", 0, 1, "5", "3", None),
        ("st_0002", 1, 2, "b", None, True),
        ("mt_0001", 2, 1, "x", "2", None),
    ]
    assert q(db, "SELECT role, rank, arxiv_id FROM raw.item_papers WHERE sample_id='mt_0001' ORDER BY role, rank") == [
        ("gold", 0, "2103.00002"), ("gold", 1, "2103.00003"), ("seed", 0, "2103.00001"),
    ]
    assert q(db, "SELECT role, rank FROM raw.item_papers WHERE sample_id='st_0002' ORDER BY role") == [
        ("bridge", 0), ("gold", 0), ("seed", 0),
    ]
    # node without arXiv id -> NULL; full text only when the arXiv id is in the pool
    assert q(db, "SELECT node_order, arxiv_id, has_full_text, year FROM raw.graph_nodes "
                 "WHERE sample_id='st_0001' ORDER BY node_order") == [
        (0, "2101.00001", True, 2023), (1, None, False, 2021), (2, "2101.00003", True, 2023),
        (3, "2101.09999", False, None),
    ]
    assert q(db, "SELECT src_paper_id = seed_paper_id, rank FROM raw.graph_edges JOIN raw.items USING (sample_id) "
                 "WHERE sample_id='st_0001' ORDER BY src_paper_id = seed_paper_id, rank") == [
        (False, 0), (True, 0), (True, 1), (True, 2),
    ]
    assert q(db, "SELECT section_index, alias, header, n_chars, length(text) FROM raw.sections "
                 "WHERE arxiv_id='2101.00003' ORDER BY section_index") == [
        (0, "A", "Introduction", 11, 11), (1, "B", "Results", 55, 55), (2, "C", "Results", 37, 37),
        (3, "D", "Apdx_A: Proofs", 17, 17),
    ]
    assert q(db, "SELECT n_sections FROM raw.papers WHERE arxiv_id='2103.00003'") == [(2,)]
    assert q(db, "SELECT label_index, arxiv_id, label_section, relevance FROM raw.recall_labels "
                 "WHERE sample_id='mt_0001' ORDER BY label_index") == [
        (0, "2103.00002", "Method", "direct"), (1, "2103.00003", "Method", "direct"),
        (2, None, "Discussion", "supporting"),
    ]


def test_run_rows_and_log(loaded: dict) -> None:
    db = loaded["db"]
    assert q(db, "SELECT run_id, model, _partial, _source FROM raw.runs ORDER BY run_id") == [
        ("run-a", "m1", False, str((loaded["runs"] / "run-a").resolve())),
        ("run-b", "m2", False, str((loaded["runs"] / "run-b").resolve())),
    ]
    assert q(db, "SELECT run_id, count(*) FROM raw.trajectories GROUP BY ALL ORDER BY 1") == [
        ("run-a", 3), ("run-b", 2),
    ]
    assert q(db, "SELECT count(*) FROM raw.tool_calls") == [(15,)]
    assert q(db, "SELECT count(*) FROM raw.messages") == [(10,)]
    log = q(db, "SELECT load_id, kind, run_id, action, row_counts FROM raw.ingest_log ORDER BY kind, run_id")
    assert [(r[0], r[1], r[2], r[3]) for r in log] == [
        (1, "benchmark", None, "inserted"), (1, "runs", "run-a", "inserted"), (1, "runs", "run-b", "inserted"),
    ]
    assert json.loads(log[1][4]) == {"runs": 1, "trajectories": 3, "turns": 6, "tool_calls": 9, "messages": 6}
    assert json.loads(log[0][4])["sections"] == 13
    out = loaded["output"]
    assert "benchmark inserted; runs 2 inserted, 0 replaced, 0 unchanged" in out
    assert "items=3" in out and "trajectories=5" in out and "tool_calls=15" in out


def test_reload_changes_nothing(loaded: dict) -> None:
    db = loaded["db"]
    before = table_checksums(db)
    res = ingest("--db", str(db), "--benchmark", str(loaded["bench"]), "--runs", str(loaded["runs"]))
    assert res.exit_code == 0, res.output
    assert "benchmark unchanged; runs 0 inserted, 0 replaced, 2 unchanged" in res.output
    assert table_checksums(db) == before
    assert q(db, "SELECT load_id, kind, action, row_counts FROM raw.ingest_log WHERE load_id = 2 "
                 "ORDER BY kind, run_id") == [
        (2, "benchmark", "unchanged", "{}"), (2, "runs", "unchanged", "{}"), (2, "runs", "unchanged", "{}"),
    ]


def test_changed_run_is_replaced_whole(loaded: dict, tmp_path: Path) -> None:
    db, sha = loaded["db"], loaded["sha"]
    run_b = loaded["runs"] / "run-b"
    for p in run_b.iterdir():
        p.unlink()
    rows = run_rows("run-b", sha, model="m2-new", samples=["st_0002"])
    rows["messages"] = []
    write_run(loaded["runs"], rows)
    before_a = q(db, "SELECT count(*) FROM raw.tool_calls WHERE run_id='run-a'")
    res = ingest("--db", str(db), "--runs", str(loaded["runs"]))
    assert res.exit_code == 0, res.output
    assert "runs 0 inserted, 1 replaced, 1 unchanged" in res.output
    assert q(db, "SELECT model FROM raw.runs WHERE run_id='run-b'") == [("m2-new",)]
    assert q(db, "SELECT sample_id FROM raw.trajectories WHERE run_id='run-b'") == [("st_0002",)]
    assert q(db, "SELECT count(*) FROM raw.turns WHERE run_id='run-b'") == [(2,)]
    assert q(db, "SELECT count(*) FROM raw.messages WHERE run_id='run-b'") == [(0,)]
    assert q(db, "SELECT count(*) FROM raw.tool_calls WHERE run_id='run-a'") == before_a
    assert q(db, "SELECT action FROM raw.ingest_log WHERE run_id='run-b' ORDER BY load_id") == [
        ("inserted",), ("replaced",),
    ]


def test_partial_run_needs_flag_and_is_marked(release: tuple[Path, str], tmp_path: Path) -> None:
    root, sha = release
    d = write_run(tmp_path / "runs", run_rows("run-p", sha, samples=["st_0001"]), success=False)
    db = tmp_path / "w.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(root), "--runs", str(d))
    assert res.exit_code == 2
    assert f"{d}: run directory has no _SUCCESS marker" in res.stderr and "--partial" in res.stderr
    assert not db.exists()
    res = ingest("--db", str(db), "--benchmark", str(root), "--runs", str(d), "--partial")
    assert res.exit_code == 0, res.output
    assert q(db, "SELECT run_id, _partial FROM raw.runs") == [("run-p", True)]
    # the finished run replaces the partial one
    write_run(tmp_path / "runs", run_rows("run-p", sha))
    res = ingest("--db", str(db), "--runs", str(d))
    assert res.exit_code == 0, res.output
    assert q(db, "SELECT _partial FROM raw.runs") == [(False,)]
    assert q(db, "SELECT count(*) FROM raw.trajectories") == [(3,)]


def test_other_benchmark_is_refused_while_runs_use_the_old_one(loaded: dict, tmp_path: Path) -> None:
    other = tmp_path / "bench2"
    sha2 = write_release(other, question_suffix=" (v2)")
    db = loaded["db"]
    before = file_sha(db)
    res = ingest("--db", str(db), "--benchmark", str(other))
    assert res.exit_code == 2
    assert str(other) in res.stderr and "--force" in res.stderr
    assert file_sha(db) == before
    res = ingest("--db", str(db), "--benchmark", str(other), "--force")
    assert res.exit_code == 0, res.output
    assert "benchmark replaced" in res.output
    assert q(db, "SELECT value FROM raw.warehouse_meta WHERE key='benchmark_sha256'") == [(sha2,)]
    assert q(db, "SELECT question FROM raw.items WHERE sample_id='st_0001'") == [
        ("By how much does accuracy rise? (v2)",),
    ]
    assert q(db, "SELECT count(*) FROM raw.sections") == [(13,)]
    assert q(db, "SELECT count(*) FROM raw.runs") == [(2,)]


def test_benchmark_replaced_when_no_runs(release: tuple[Path, str], tmp_path: Path) -> None:
    root, _ = release
    db = tmp_path / "w.duckdb"
    assert ingest("--db", str(db), "--benchmark", str(root)).exit_code == 0
    other = tmp_path / "bench2"
    sha2 = write_release(other, question_suffix="?")
    res = ingest("--db", str(db), "--benchmark", str(other))
    assert res.exit_code == 0, res.output
    assert q(db, "SELECT count(*), min(question) FROM raw.items") == [(3, "By how much does accuracy rise??")]
    assert q(db, "SELECT value FROM raw.warehouse_meta WHERE key='benchmark_sha256'") == [(sha2,)]


def test_agenthop_db_env_and_widths(release: tuple[Path, str], tmp_path: Path) -> None:
    """Integer widths and timestamp units may differ from the schema; extra columns are dropped."""
    root, sha = release

    def widen(table: str, t: pa.Table) -> pa.Table:
        cols = []
        for f in t.schema:
            c = t.column(f.name)
            if pa.types.is_int32(f.type):
                c = c.cast(pa.int64())
            elif pa.types.is_timestamp(f.type):
                c = c.cast(pa.timestamp("ns"))
            cols.append(c)
        out = pa.Table.from_arrays(cols, names=t.column_names)
        return out.append_column("extra_column", pa.array(["x"] * out.num_rows))

    runs = tmp_path / "runs"
    write_run(runs, run_rows("run-w", sha), edit=widen)
    db = tmp_path / "env.duckdb"
    res = ingest("--benchmark", str(root), "--runs", str(runs), env={"AGENTHOP_DB": str(db)})
    assert res.exit_code == 0, res.output
    assert q(db, "SELECT count(*), max(turn) FROM raw.turns") == [(6, 1)]
    assert q(db, "SELECT typeof(started_at), epoch(started_at)::BIGINT FROM raw.runs") == [
        ("TIMESTAMP WITH TIME ZONE", 1767323045),
    ]


def test_nothing_to_load_is_a_usage_error(tmp_path: Path) -> None:
    res = ingest("--db", str(tmp_path / "x.duckdb"))
    assert res.exit_code == 2 and "nothing to load" in res.output
    assert not (tmp_path / "x.duckdb").exists()


def test_runs_without_benchmark_are_refused(tmp_path: Path) -> None:
    d = write_run(tmp_path / "runs", run_rows("r", "0" * 16))
    db = tmp_path / "sub" / "w.duckdb"
    res = ingest("--db", str(db), "--runs", str(d))
    assert res.exit_code == 2 and "no benchmark is loaded" in res.stderr
    assert not db.exists() and not db.parent.exists()


def test_same_run_twice_in_one_invocation(loaded: dict, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    write_run(copy, run_rows("run-a", loaded["sha"], samples=["st_0001"]))
    before = file_sha(loaded["db"])
    res = ingest("--db", str(loaded["db"]), "--runs", str(loaded["runs"]), "--runs", str(copy))
    assert res.exit_code == 2 and "'run-a' is given twice" in res.stderr
    assert file_sha(loaded["db"]) == before
    assert SAMPLE_IDS  # fixture sanity


def test_progress_lines_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from agenthop.ingest import progress as prog

    monkeypatch.setattr(prog, "LINE_INTERVAL_S", 0.0)
    out = io.StringIO()
    p = prog.Progress(stream=out)
    assert list(p.iterate([1, 2, 3], "reading runs", "run")) == [1, 2, 3]
    lines = out.getvalue().splitlines()
    assert [ln.split(" (")[0] for ln in lines] == [
        "agenthop-ingest: reading runs: 1/3 runs", "agenthop-ingest: reading runs: 2/3 runs",
    ]
    quiet = io.StringIO()
    q = prog.Progress(quiet=True, stream=quiet)
    assert list(q.iterate([1, 2], "x")) == [1, 2]
    q.phase("big step", big=True)
    assert quiet.getvalue() == ""


def test_quiet_prints_nothing(release: tuple[Path, str], tmp_path: Path) -> None:
    root, _ = release
    res = ingest("--db", str(tmp_path / "q.duckdb"), "--benchmark", str(root), "--quiet")
    assert res.exit_code == 0 and res.output == ""


def test_a_source_with_its_own_items_is_checked_against_them() -> None:
    """Imported logs that carry their items need no loaded release; their sample ids are still checked."""
    import pyarrow as pa

    from agenthop.ingest.conform import IngestError
    from agenthop.ingest.runs import Checks, check_benchmark, validate_table

    checks = Checks()  # nothing loaded
    table = pa.table({"run_id": ["r"], "sample_id": ["task-1"]})
    with pytest.raises(IngestError, match="no release of benchmark 'inspect:toy' is loaded"):
        validate_table("trajectories", table, "r", checks, "log.eval", "inspect:toy")
    own = checks.with_own_items("inspect:toy", "abc", pa.array(["task-1", "task-2"]))
    check_benchmark("r", "abc", own, "log.eval", "inspect:toy")
    validate_table("trajectories", table, "r", own, "log.eval", "inspect:toy")
    bad = pa.table({"run_id": ["r"], "sample_id": ["task-9"]})
    with pytest.raises(IngestError, match="not in the loaded benchmark's items: 'task-9'"):
        validate_table("trajectories", bad, "r", own, "log.eval", "inspect:toy")
    assert checks.releases == {}  # the original checks are unchanged
