"""SciExplore ingest: release, responses and judgments files; idempotent, transactional, refusals."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from sx_fixtures import GOOD, file_sha, ingest, release, response, write_jsonl  # noqa: F401 (fixtures)

from agenthop.ingest.sources.sciexplore_responses import responses_run_id


def _q(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_release_responses_and_verdicts(tmp_path: Path, release: Path, ingest) -> None:
    db = tmp_path / "w.duckdb"
    resp = write_jsonl(tmp_path / "r.jsonl", GOOD)
    r = ingest("--db", db, "--benchmark", release, "--responses", resp)
    assert r.exit_code == 0, r.output
    assert "benchmark inserted" in r.output and "4 inserted" in r.output
    [(run_id, backend, sha)] = _q(db, "SELECT run_id, backend, benchmark_sha256 FROM raw.sciexplore_runs")
    assert backend == "responses-file" and run_id == responses_run_id("m", "search", 0, sha)
    assert run_id.startswith("m__search__r0__")
    verdicts = _q(db, "SELECT task_id, unit, coalesce(slot, row_key, ''), coalesce(ref_index, -1), "
                      "coalesce(\"column\", ''), verdict FROM raw.judgments ORDER BY ALL")
    assert verdicts == [
        ("a1", "answer", "", -1, "", "correct"),
        ("b1", "answer", "", -1, "", "not_attempted"),
        ("c1", "citation", "CITE_1", 0, "", "correct"),
        ("c1", "citation", "CITE_1", 1, "", "incorrect"),
        ("d1", "cell", "Kalo", -1, "Gap", "correct"),
        ("d1", "cell", "Kalo", -1, "Material", "correct"),
        ("d1", "cell", "Mira", -1, "Gap", "incorrect"),
        ("d1", "cell", "Mira", -1, "Material", "correct"),
    ]
    assert _q(db, "SELECT count(*), sum(is_search::int) FROM raw.sciexplore_trace") == [(2, 1)]
    assert _q(db, "SELECT format_ok FROM raw.sciexplore_responses WHERE task_id = 'd1'") == [(True,)]
    assert _q(db, "SELECT count(*) FROM raw.sciexplore_t4_cells") == [(4,)]
    assert _q(db, "SELECT count(*) FROM raw.sciexplore_t3_references") == [(3,)]
    assert _q(db, "SELECT benchmark, sha256, n_items FROM raw.benchmarks") == [("sciexplore", sha, 4)]


def test_reload_is_idempotent_and_merges_by_task(tmp_path: Path, release: Path, ingest) -> None:
    db = tmp_path / "w.duckdb"
    assert ingest("--db", db, "--benchmark", release, "--responses", write_jsonl(tmp_path / "r.jsonl", GOOD)).exit_code == 0
    before = _q(db, "SELECT * FROM raw.judgments ORDER BY ALL")
    r = ingest("--db", db, "--responses", tmp_path / "r.jsonl")
    assert "0 inserted, 0 replaced, 4 unchanged" in r.output
    # an unchanged file is logged as unchanged: the marts stay current
    assert _q(db, "SELECT kind, action FROM raw.ingest_log ORDER BY load_id DESC LIMIT 1") == [("responses-file", "unchanged")]
    assert _q(db, "SELECT * FROM raw.judgments ORDER BY ALL") == before
    # a second judge on a1 and b1, then a1's answer changes: a1's other verdict goes, b1's stays
    judg = write_jsonl(tmp_path / "j.jsonl", [
        {"model": "m", "paradigm": "search", "replicate": 0, "task_id": t, "unit": "answer", "verdict": "correct",
         "judge": "human", "judge_version": "v1", "rationale": None} for t in ("a1", "b1")])
    r = ingest("--db", db, "--judgments", judg)
    assert r.exit_code == 0 and "2 verdicts from judgments files" in r.output, r.output
    assert ingest("--db", db, "--judgments", judg).exit_code == 0  # same keys again: replaced, not doubled
    assert _q(db, "SELECT count(*) FROM raw.judgments WHERE judge = 'human'") == [(2,)]
    r = ingest("--db", db, "--responses", write_jsonl(tmp_path / "r2.jsonl", [response("a1", "ACC-2")]))
    assert "0 inserted, 1 replaced, 0 unchanged" in r.output
    assert "1 verdict(s) of other judges dropped" in r.output
    assert _q(db, "SELECT task_id FROM raw.judgments WHERE judge = 'human'") == [("b1",)]
    assert _q(db, "SELECT verdict FROM raw.judgments WHERE task_id = 'a1'") == [("incorrect",)]
    assert _q(db, "SELECT count(*) FROM raw.sciexplore_responses") == [(4,)]  # other tasks stay
    assert _q(db, "SELECT count(*) FROM raw.sciexplore_trace") == [(0,)]  # a1's old trace replaced


def _judgment(task_id: str, unit: str, **key) -> dict:
    return {"model": "m", "paradigm": "search", "replicate": 0, "task_id": task_id, "unit": unit,
            "verdict": "correct", "judge": "llm:x", "judge_version": "p1", "rationale": "r", **key}


@pytest.mark.parametrize(
    ("flag", "lines", "line", "reason"),
    [
        ("--responses", [GOOD[0], response("zz", "x")], 2, "field 'task_id': unknown task id 'zz'"),
        ("--responses", [response("c1", {"CITE_9": []})], 1, "field 'answer.CITE_9': task 'c1' has no slot"),
        ("--responses", [GOOD[0], GOOD[1], GOOD[0]], 3, "is already given at"),
        ("--responses", [response("c1", {"CITE_1": [], "[CITE_1]": []})], 1, "slot CITE_1 is given twice"),
        ("--responses", [response("a1", "x", paradigm="rag")], 1, "field 'paradigm': must be one of"),
        ("--responses", [response("a1", "x", status="done")], 1, "field 'status'"),
        ("--responses", [response("a1", "x") | {"replicate": -1}], 1, "field 'replicate'"),
        ("--responses", [response("a1", "x", trace=[{"query": "q"}])], 1, "field 'trace[0].tool': missing"),
        ("--responses", ["{not json"], 1, "not valid JSON"),
        ("--responses", [GOOD[0], GOOD[1] | {"simulated": True}], 2, "mixes simulated and real lines"),
        ("--judgments", [_judgment("c1", "citation", slot="CITE_1", ref_index=2)], 1,
         "field 'ref_index': the system gave 2 reference(s) for CITE_1"),
        ("--judgments", [_judgment("c1", "citation", slot="CITE_7", ref_index=0)], 1, "has no slot 'CITE_7'"),
        ("--judgments", [_judgment("d1", "cell", row_key="Zen", column="Gap")], 1, "'Zen' is not a primary key"),
        ("--judgments", [_judgment("d1", "cell", row_key="Kalo", column="Size")], 1, "'Size' is not a column"),
        ("--judgments", [_judgment("a1", "cell", row_key="Kalo", column="Gap")], 1, "it has no 'cell' units"),
        ("--judgments", [_judgment("a1", "answer") | {"model": "other"}], 1, "no SciExplore run"),
        ("--judgments", [_judgment("a1", "answer"), _judgment("a1", "answer")], 2, "already given at"),
        ("--judgments", [_judgment("a1", "answer") | {"judge": "normalized-match"}], 1, "built-in judge"),
        ("--judgments", [_judgment("a1", "answer") | {"verdict": "maybe"}], 1, "field 'verdict'"),
    ],
)
def test_bad_inputs_are_refused_and_change_nothing(tmp_path: Path, release: Path, ingest, flag: str,
                                                   lines: list, line: int, reason: str) -> None:
    db = tmp_path / "w.duckdb"
    assert ingest("--db", db, "--benchmark", release, "--responses", write_jsonl(tmp_path / "ok.jsonl", GOOD)).exit_code == 0
    sha = file_sha(db)
    bad = write_jsonl(tmp_path / "bad.jsonl", lines)
    r = ingest("--db", db, flag, bad)
    assert r.exit_code == 2, r.output
    assert f"{bad}:{line}:" in r.output and reason in r.output, r.output
    assert "Traceback" not in r.output
    assert file_sha(db) == sha


def test_responses_need_a_release(tmp_path: Path, release: Path, ingest) -> None:
    db = tmp_path / "w.duckdb"
    resp = write_jsonl(tmp_path / "r.jsonl", GOOD)
    r = ingest("--db", db, "--responses", resp)
    assert r.exit_code == 2 and "no SciExplore release is loaded" in r.output
    assert not db.exists()  # a failed first load leaves no file behind


def test_bad_release_is_refused(tmp_path: Path, release: Path, ingest) -> None:
    (release / "tasks.jsonl").write_text('{"id": "x", "type": "T1"}\n')
    r = ingest("--db", tmp_path / "w.duckdb", "--benchmark", release)
    assert r.exit_code == 2 and "tasks.jsonl:1: field 'domain': missing" in r.output, r.output


def test_another_release_needs_force_when_runs_exist(tmp_path: Path, release: Path, ingest) -> None:
    db = tmp_path / "w.duckdb"
    assert ingest("--db", db, "--benchmark", release, "--responses", write_jsonl(tmp_path / "r.jsonl", GOOD)).exit_code == 0
    assert "benchmark unchanged" in ingest("--db", db, "--benchmark", release).output
    with (release / "tasks.jsonl").open("a") as fh:
        fh.write('{"id": "a2", "type": "T1", "domain": "d", "question": "q", "answer": "x", "aliases": [], '
                 '"hops": 3, "databases": []}\n')
    sha = file_sha(db)
    r = ingest("--db", db, "--benchmark", release)
    assert r.exit_code == 2 and "pass --force" in r.output and file_sha(db) == sha
    r = ingest("--db", db, "--benchmark", release, "--force")
    assert r.exit_code == 0 and "benchmark replaced" in r.output
    assert _q(db, "SELECT n_items FROM raw.benchmarks WHERE benchmark = 'sciexplore'") == [(5,)]
