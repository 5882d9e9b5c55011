"""agenthop-judge against a loopback OpenAI-compatible server: verdicts, cache by prompt hash, resume."""

from __future__ import annotations

from pathlib import Path

import duckdb
from click.testing import CliRunner
from servers.openai_server import OpenAIServer, completion, error
from servers.scripted_http import Recorded, Reply
from sx_fixtures import GOOD, ingest, release, write_jsonl  # noqa: F401 (fixtures)

from agenthop.harness.benchmarks.sciexplore.judge_cli import main as judge_main
from agenthop.harness.benchmarks.sciexplore.llm_judge import judge_version, read_verdict


def _prompt(rec: Recorded) -> str:
    return rec.body["messages"][-1]["content"]


def grader(fail_on: str | None = None):
    def reply(rec: Recorded) -> Reply:
        p = _prompt(rec)
        if fail_on and fail_on in p:
            return error(400, "refused")
        if "Predicted value: 9" in p or "Nope" in p:
            return completion(content="INCORRECT: another value")
        if "I don't know" in p:
            return completion(content="Verdict: not attempted")
        return completion(content="CORRECT")
    return reply


def test_read_verdict() -> None:
    assert read_verdict("correct.") == "CORRECT" and read_verdict("It is INCORRECT") == "INCORRECT"
    assert read_verdict("NOT ATTEMPTED") == "NOT_ATTEMPTED" and read_verdict("maybe") is None


def test_judge_calls_caches_and_resumes(tmp_path: Path, release: Path, ingest) -> None:
    db = tmp_path / "w.duckdb"
    assert ingest("--db", db, "--benchmark", release, "--responses", write_jsonl(tmp_path / "r.jsonl", GOOD)).exit_code == 0
    runner = CliRunner()
    with OpenAIServer(responder=grader(fail_on="Nope")) as srv:
        r = runner.invoke(judge_main, ["--judge-model", "test-model", "--base-url", srv.base_url, "--db", str(db), "-q"])
        first_calls = len(srv.requests)
    assert r.exit_code == 2 and "1 call(s) failed" in r.output, r.output
    assert first_calls == 8  # a1, b1, two citations, four cells; the refused one is not retried (400)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM raw.judgments WHERE judge = 'llm:test-model'").fetchall() == [(7,)]
    with OpenAIServer(responder=grader()) as srv:
        r = runner.invoke(judge_main, ["--judge-model", "test-model", "--base-url", srv.base_url, "--db", str(db), "-q"])
        assert r.exit_code == 0, r.output
        assert [("Nope" in _prompt(x)) for x in srv.requests] == [True]  # only the missing prompt is asked again
    assert "1 prompts asked, 7 answered from the cache" in r.output
    with duckdb.connect(str(db), read_only=True) as con:
        got = con.execute("SELECT task_id, unit, coalesce(slot, row_key, ''), coalesce(\"column\", ''), verdict, "
                          "judge_version FROM raw.judgments WHERE judge = 'llm:test-model' ORDER BY ALL").fetchall()
        same = con.execute(
            "SELECT count(*) FROM raw.judgments a JOIN raw.judgments b USING (run_id, task_id, unit) "
            "WHERE a.judge = 'normalized-match' AND b.judge = 'llm:test-model' AND a.verdict = b.verdict "
            "AND a.slot IS NOT DISTINCT FROM b.slot AND a.ref_index IS NOT DISTINCT FROM b.ref_index "
            "AND a.row_key IS NOT DISTINCT FROM b.row_key AND a.\"column\" IS NOT DISTINCT FROM b.\"column\"").fetchall()
    assert [g[:5] for g in got] == [
        ("a1", "answer", "", "", "correct"), ("b1", "answer", "", "", "not_attempted"),
        ("c1", "citation", "CITE_1", "", "correct"), ("c1", "citation", "CITE_1", "", "incorrect"),
        ("d1", "cell", "Kalo", "Gap", "correct"), ("d1", "cell", "Kalo", "Material", "correct"),
        ("d1", "cell", "Mira", "Gap", "incorrect"), ("d1", "cell", "Mira", "Material", "correct")]
    assert {g[5] for g in got} == {judge_version("test-model")} and "model:test-model" in got[0][5]
    assert same == [(8,)]  # the same units as normalized-match, so the agreement mart can pair them
    assert (tmp_path / "w.duckdb.judge-cache.jsonl").is_file()


def test_judge_refuses_without_a_release(tmp_path: Path) -> None:
    r = CliRunner().invoke(judge_main, ["--judge-model", "m", "--base-url", "http://127.0.0.1:9/v1",
                                        "--db", str(tmp_path / "none.duckdb")])
    assert r.exit_code == 2 and "does not exist" in r.output
