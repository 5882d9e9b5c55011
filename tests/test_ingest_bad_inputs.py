"""Every class of bad input: exit 2, one message naming the file, warehouse byte-for-byte unchanged."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from agenthop.ingest.cli import main
from agenthop.ingest.conform import MAX_TEXT_BYTES
from ingest_fixtures import ref_trajectory, ref_turn, run_rows, write_json, write_release, write_run


def ingest(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def file_sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A warehouse holding the tiny benchmark and one good run, checkpointed and closed."""
    work = tmp_path_factory.mktemp("bad_inputs")
    root = work / "bench"
    sha = write_release(root)
    db = work / "w.duckdb"
    good = write_run(work / "good", run_rows("good", sha))
    res = ingest("--db", str(db), "--benchmark", str(root), "--runs", str(good))
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(db))
    con.execute("CHECKPOINT")
    con.close()
    return {"db": db, "sha": sha, "bench": root}


@pytest.fixture()
def base(template: dict, tmp_path: Path) -> dict:
    """A private copy of the template warehouse."""
    db = tmp_path / "w.duckdb"
    shutil.copyfile(template["db"], db)
    return {"db": db, "sha": template["sha"], "bench": template["bench"], "tmp": tmp_path, "before": file_sha(db)}


def _replace_part(d: Path, name: str, fn: Callable[[bytes], bytes]) -> Path:
    p = d / name
    p.write_bytes(fn(p.read_bytes()))
    return p


def _rewrite(d: Path, name: str, fn: Callable[[pa.Table], pa.Table]) -> Path:
    p = d / name
    pq.write_table(fn(pq.read_table(p)), p)
    return p


def _bad_run(base: dict, kind: str) -> tuple[list[str], str, str]:
    """Build one bad input; return (cli args, file the message must name, phrase it must contain)."""
    tmp, sha = base["tmp"], base["sha"]
    runs = tmp / "bad"
    d = write_run(runs, run_rows("bad-run", sha), parts=2) if kind != "no_success" else None
    if kind == "truncated":
        p = _replace_part(d, "turns-00001.parquet", lambda b: b[: len(b) // 2])
        return ["--runs", str(d)], str(p), "not a readable Parquet file"
    if kind == "not_parquet":
        p = d / "tool_calls-00002.parquet"
        p.write_text("run_id,sample_id\nbad-run,st_0001\n")
        return ["--runs", str(d)], str(p), "not a readable Parquet file"
    if kind == "missing_column":
        p = _rewrite(d, "tool_calls-00000.parquet", lambda t: t.drop_columns(["status"]))
        return ["--runs", str(d)], str(p), "missing column 'status'"
    if kind == "mistyped_column":
        p = _rewrite(
            d, "trajectories-00000.parquet",
            lambda t: t.set_column(t.schema.get_field_index("budget_used"), "budget_used",
                                   pa.array([str(v) for v in t.column("budget_used").to_pylist()])),
        )
        return ["--runs", str(d)], str(p), "column 'budget_used' has type string, expected int32"
    if kind == "null_in_required":
        p = _rewrite(
            d, "turns-00000.parquet",
            lambda t: t.set_column(t.schema.get_field_index("role"), "role", pa.nulls(t.num_rows, pa.string())),
        )
        return ["--runs", str(d)], str(p), "column 'role'"
    if kind == "duplicate_keys":
        p = _rewrite(d, "turns-00001.parquet", lambda t: pa.concat_tables([t, t.slice(0, 1)]))
        return ["--runs", str(d)], str(p), "duplicate key in turns"
    if kind == "duplicate_keys_across_parts":
        first = pq.read_table(d / "tool_calls-00000.parquet").slice(0, 1)
        p = _rewrite(d, "tool_calls-00001.parquet", lambda t: pa.concat_tables([t, first]))
        return ["--runs", str(d)], str(d / "tool_calls-00000.parquet"), "duplicate key in tool_calls"
    if kind == "unknown_sample":
        p = _rewrite(
            d, "trajectories-00001.parquet",
            lambda t: t.set_column(t.schema.get_field_index("sample_id"), "sample_id",
                                   pa.array(["st_9999"] * t.num_rows)),
        )
        return ["--runs", str(d)], str(p), "not in the loaded benchmark's items: 'st_9999'"
    if kind == "foreign_run_id":
        p = _rewrite(
            d, "turns-00000.parquet",
            lambda t: t.set_column(0, "run_id", pa.array(["other-run"] * t.num_rows)),
        )
        return ["--runs", str(d)], str(p), "run_id 'other-run' does not belong"
    if kind == "unknown_status":
        p = _rewrite(
            d, "tool_calls-00000.parquet",
            lambda t: t.set_column(t.schema.get_field_index("status"), "status",
                                   pa.array(["ok"] * (t.num_rows - 1) + ["exploded"])),
        )
        return ["--runs", str(d)], str(p), "row 4, column 'status' (tool_calls): has unknown value 'exploded'"
    if kind == "non_utf8":
        def bad_text(t: pa.Table) -> pa.Table:
            raw = pa.array([b"ok"] * (t.num_rows - 1) + [b"caf\xe9 \xff"], pa.binary()).view(pa.string())
            return t.set_column(t.schema.get_field_index("content"), "content", raw)
        p = _rewrite(d, "messages-00000.parquet", bad_text)
        return ["--runs", str(d)], str(p), "not valid UTF-8"
    if kind == "huge_text":
        p = _rewrite(
            d, "messages-00001.parquet",
            lambda t: t.set_column(t.schema.get_field_index("content"), "content",
                                   pa.array(["x" * (MAX_TEXT_BYTES + 1)] + ["y"] * (t.num_rows - 1))),
        )
        return ["--runs", str(d)], str(p), "above the 5 MiB (5,242,880-byte) cap"
    if kind == "sha_mismatch":
        rows = run_rows("other-bench", "f" * 16)
        d2 = write_run(runs, rows)
        return ["--runs", str(d2)], str(d2 / "runs-00000.parquet"), "pass --force"
    if kind == "no_success":
        d2 = write_run(runs, run_rows("unfinished", sha), success=False)
        return ["--runs", str(d2)], str(d2), "no _SUCCESS marker"
    if kind == "two_runs_rows":
        _rewrite(d, "runs-00000.parquet", lambda t: pa.concat_tables([t, t]))
        return ["--runs", str(d)], str(d), "exactly one row"
    raise AssertionError(kind)


def _bad_reference(base: dict, kind: str) -> tuple[list[str], str, str]:
    folder = base["tmp"] / "experiments" / "ref-m"
    good = ref_trajectory("st_0001", [ref_turn(0, [("submit_answer", {"answer": "B"})], [("Answer submitted: B", 0)],
                                               before=30, after=30)])
    write_json(folder / "st_0001.json", good)
    p = folder / "st_0002.json"
    if kind == "malformed_json":
        p.write_text('{"sample_id": "st_0002", "turns": [\n  {"role": "assistant",,}\n]}', encoding="utf-8")
        return ["--reference-json", str(folder.parent)], str(p), "malformed JSON at line 2"
    if kind == "json_non_utf8":
        p.write_bytes(b'{"sample_id": "st_0002", "reasoning": "caf\xe9"}')
        return ["--reference-json", str(folder)], str(p), "not valid UTF-8"
    if kind == "json_missing_field":
        rec = ref_trajectory("st_0002", [])
        del rec["terminated_by"]
        write_json(p, rec)
        return ["--reference-json", str(folder)], str(p), "missing field 'terminated_by'"
    if kind == "json_unknown_sample":
        write_json(folder / "st_7777.json", ref_trajectory("st_7777", []))
        return ["--reference-json", str(folder)], str(folder), "'st_7777'"
    if kind == "json_sha_mismatch":
        write_json(folder / "summary.json", {"fingerprint": {"benchmark_sha256": "0123456789abcdef"}})
        return ["--reference-json", str(folder)], str(folder / "summary.json"), "pass --force"
    if kind == "json_missing_failed_attempt":
        write_json(p, ref_trajectory("st_0002", [], retry_count=1))
        return ["--reference-json", str(folder)], str(p), "retry_count is 1"
    if kind == "summary_huge_budget":
        write_json(folder / "summary.json", {"config": {"budget": 10**12}})
        return ["--reference-json", str(folder)], str(folder / "summary.json"), \
            "field 'config.budget' is 1000000000000, outside the 32-bit integer range"
    if kind == "json_lone_surrogate":
        rec = json.dumps(ref_trajectory("st_0002", [], reasoning="x"), ensure_ascii=True)
        p.write_text(rec.replace('"reasoning": "x"', '"reasoning": "\\ud800x"'), encoding="ascii")
        return ["--reference-json", str(folder)], str(p), \
            "field 'reasoning' holds a lone surrogate escape (\\ud800), which is not text"
    if kind == "json_lone_surrogate_in_turn":
        rec = ref_trajectory("st_0002", [ref_turn(0, [("think", {"thought": "x"})], [("ok", 0)], before=30, after=30)])
        text = json.dumps(rec, ensure_ascii=True).replace('"thought": "x"', '"thought": "\\udc00"')
        p.write_text(text, encoding="ascii")
        return ["--reference-json", str(folder)], str(p), "field 'turns[0].tool_calls[0].args.thought' holds a lone"
    if kind == "json_huge_count":
        write_json(p, ref_trajectory("st_0002", [], budget_used=10**12))
        return ["--reference-json", str(folder)], str(p), \
            "field 'budget_used' is 1000000000000, outside the 32-bit integer range"
    if kind == "json_too_deep":
        p.write_text('{"sample_id": "st_0002", "messages": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
        return ["--reference-json", str(folder)], str(p), "nested too deeply"
    raise AssertionError(kind)


RUN_CASES = [
    "truncated", "not_parquet", "missing_column", "mistyped_column", "null_in_required", "duplicate_keys",
    "duplicate_keys_across_parts", "unknown_sample", "foreign_run_id", "unknown_status", "non_utf8",
    "huge_text", "sha_mismatch", "no_success", "two_runs_rows",
]
REF_CASES = [
    "malformed_json", "json_non_utf8", "json_missing_field", "json_unknown_sample", "json_sha_mismatch",
    "json_missing_failed_attempt", "summary_huge_budget", "json_lone_surrogate", "json_lone_surrogate_in_turn",
    "json_huge_count", "json_too_deep",
]


@pytest.mark.parametrize("kind", RUN_CASES + REF_CASES)
def test_bad_input_leaves_warehouse_untouched(base: dict, kind: str) -> None:
    make = _bad_reference if kind in REF_CASES else _bad_run
    args, named_file, phrase = make(base, kind)
    # a good run in the same invocation must not be loaded either
    good2 = write_run(base["tmp"] / "good2", run_rows("good2", base["sha"]))
    res = ingest("--db", str(base["db"]), "--runs", str(good2), *args)
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ")
    assert named_file in lines[0], lines[0]
    assert phrase in lines[0], lines[0]
    assert "Traceback" not in res.output
    assert file_sha(base["db"]) == base["before"]
    assert not Path(str(base["db"]) + ".wal").exists()


def test_sha_mismatch_loads_with_force(base: dict) -> None:
    d = write_run(base["tmp"] / "other", run_rows("other-bench", "f" * 16))
    res = ingest("--db", str(base["db"]), "--runs", str(d), "--force")
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(base["db"]), read_only=True)
    assert con.sql("SELECT benchmark_sha256 FROM raw.runs WHERE run_id='other-bench'").fetchall() == [("f" * 16,)]
    con.close()


def test_bad_input_into_new_file_leaves_no_file(tmp_path: Path) -> None:
    root = tmp_path / "bench"
    sha = write_release(root)
    d = write_run(tmp_path / "runs", run_rows("r", sha))
    (d / "turns-00000.parquet").write_bytes(b"PAR1 garbage")
    db = tmp_path / "new" / "w.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(root), "--runs", str(d))
    assert res.exit_code == 2 and "turns-00000.parquet" in res.stderr
    assert not db.exists() and not Path(str(db) + ".wal").exists() and not db.parent.exists()


def test_failed_load_removes_every_folder_it_created(tmp_path: Path) -> None:
    root = tmp_path / "bench"
    sha = write_release(root)
    d = write_run(tmp_path / "runs", run_rows("r", sha))
    (d / "turns-00000.parquet").write_bytes(b"PAR1 garbage")
    db = tmp_path / "a" / "b" / "c" / "w.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(root), "--runs", str(d))
    assert res.exit_code == 2 and "turns-00000.parquet" in res.stderr
    assert not (tmp_path / "a").exists()


def test_db_under_a_file_is_a_clear_error(tmp_path: Path) -> None:
    root = tmp_path / "bench"
    write_release(root)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    db = blocker / "w.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(root))
    assert res.exit_code == 2, res.output
    assert res.stderr.strip() == f"error: warehouse {db}: {blocker} is a file, not a directory"
    assert blocker.read_text() == "a file, not a folder"


def test_corrupt_page_is_one_line(base: dict) -> None:
    """Arrow's message for a damaged page (footer intact) spans lines; the error stays one line."""
    d = write_run(base["tmp"] / "runs", run_rows("corrupt", base["sha"]))
    part = d / "tool_calls-00000.parquet"
    raw = bytearray(part.read_bytes())
    for k in range(4, len(raw) // 2, 7):
        raw[k] ^= 0x5A
    part.write_bytes(bytes(raw))
    res = ingest("--db", str(base["db"]), "--runs", str(d))
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "tool_calls-00000.parquet: not a readable Parquet file" in lines[0], res.stderr
    assert file_sha(base["db"]) == base["before"]


def test_missing_inputs_are_named(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    res = ingest("--db", str(db), "--runs", str(tmp_path / "nope"))
    assert res.exit_code == 2 and f"--runs {tmp_path / 'nope'}: no such directory" in res.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    res = ingest("--db", str(db), "--runs", str(empty))
    assert res.exit_code == 2 and "no run directories" in res.stderr
    res = ingest("--db", str(db), "--benchmark", str(empty))
    assert res.exit_code == 2 and "qa/full.jsonl is missing" in res.stderr
    res = ingest("--db", str(db), "--reference-json", str(empty))
    assert res.exit_code == 2 and "no <sample_id>.json" in res.stderr
    assert not db.exists()


def test_not_a_warehouse(tmp_path: Path) -> None:
    root = tmp_path / "bench"
    write_release(root)
    db = tmp_path / "w.duckdb"
    db.write_text("this is not a database")
    res = ingest("--db", str(db), "--benchmark", str(root))
    assert res.exit_code == 2 and f"warehouse {db} cannot be opened" in res.stderr
    assert db.read_text() == "this is not a database"


def test_summary_json_is_checked(base: dict) -> None:
    folder = base["tmp"] / "experiments" / "ref-s"
    write_json(folder / "st_0001.json", ref_trajectory("st_0001", []))
    (folder / "summary.json").write_text("{not json", encoding="utf-8")
    res = ingest("--db", str(base["db"]), "--reference-json", str(folder))
    assert res.exit_code == 2 and f"{folder / 'summary.json'}: malformed JSON" in res.stderr
    assert file_sha(base["db"]) == base["before"]


def test_bad_benchmark_leaves_warehouse_untouched(base: dict) -> None:
    other = base["tmp"] / "bench_bad"
    write_release(other, question_suffix="!")
    qa = other / "qa/full.jsonl"
    lines = qa.read_text(encoding="utf-8").splitlines(keepends=True)
    qa.write_text(lines[0] + '{"id": "st_0002", "depth": \n' + "".join(lines[2:]), encoding="utf-8")
    res = ingest("--db", str(base["db"]), "--benchmark", str(other), "--force")
    assert res.exit_code == 2
    assert "qa/full.jsonl:2" in res.stderr and "Traceback" not in res.output
    assert file_sha(base["db"]) == base["before"]


def test_enormous_section_is_rejected(base: dict) -> None:
    other = base["tmp"] / "bench_big"
    write_release(other, question_suffix="!")
    papers = other / "paper_pool/papers.jsonl"
    rows = [json.loads(line) for line in papers.read_text(encoding="utf-8").splitlines()]
    rows[0]["sections"][1]["text"] = "word " * (MAX_TEXT_BYTES // 5 + 1)
    papers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    res = ingest("--db", str(base["db"]), "--benchmark", str(other), "--force")
    assert res.exit_code == 2
    assert res.stderr.startswith(
        f"error: {papers} (raw.sections): column 'text' value #1 has 5,242,885 bytes, "
        "above the 5 MiB (5,242,880-byte) cap"
    )
    assert file_sha(base["db"]) == base["before"]


@pytest.mark.parametrize(
    ("files", "final_kw", "phrase"),
    [
        ([0, 1], {"retry_count": 1}, "retry_count is 1 but _failed_attempts/ holds 2"),
        ([0], {}, "missing field 'retry_count'"),
        ([0], {"retry_count": 1, "total_prompt_tokens": 10}, "total_prompt_tokens is 10, less than"),
    ],
)
def test_inconsistent_attempts_are_refused(base: dict, files: list[int], final_kw: dict, phrase: str) -> None:
    folder = base["tmp"] / "ref-a"
    for k in files:
        write_json(folder / "_failed_attempts" / f"st_0001.attempt_{k}.json",
                   ref_trajectory("st_0001", [], terminated_by="error", total_prompt_tokens=100))
    final = ref_trajectory("st_0001", [], **{"total_prompt_tokens": 500, **final_kw})
    if "retry_count" not in final_kw:
        del final["retry_count"]
    write_json(folder / "st_0001.json", final)
    res = ingest("--db", str(base["db"]), "--reference-json", str(folder))
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: {folder / 'st_0001.json'}") and phrase in res.stderr, res.stderr
    assert file_sha(base["db"]) == base["before"]
