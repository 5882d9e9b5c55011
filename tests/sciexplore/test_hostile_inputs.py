"""Hostile SciExplore inputs: responses lines, judgments files, judge names and judge caches that once
ended in tracebacks (or loaded as they were) are refused with one line naming the file, the line and
the field; the warehouse is left as it was and no judge call is paid for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from servers.openai_server import OpenAIServer, completion
from servers.scripted_http import Recorded, Reply
from sx_fixtures import GOOD, TASKS, file_sha, ingest, release, write_jsonl  # noqa: F401 (fixtures)

from agenthop.harness.benchmarks.sciexplore.judge_cli import main as judge_main


def _line(**over: object) -> str:
    """A responses line for task a1 with fields replaced, as raw JSON text (``over`` values are JSON)."""
    fields = {"model": '"m"', "paradigm": '"search"', "replicate": "0", "task_id": '"a1"', "status": '"answered"',
              "answer": '"ACC-1"', "trace": "[]", "prompt_tokens": "10", "completion_tokens": "5",
              "wall_time_s": "1.5", **over}
    return "{" + ", ".join(f'"{k}": {v}' for k, v in fields.items()) + "}"


@pytest.fixture
def loaded(tmp_path: Path, release: Path, ingest) -> tuple[Path, str]:
    """A warehouse holding the release and the good responses, and its file's hash."""
    db = tmp_path / "w.duckdb"
    assert ingest("--db", db, "--benchmark", release, "--responses", write_jsonl(tmp_path / "ok.jsonl", GOOD)).exit_code == 0
    return db, file_sha(db)


HOSTILE_RESPONSES = [
    (_line(prompt_tokens=str(2**70)), "prompt_tokens", "beyond the largest allowed"),
    (_line(completion_tokens=str(2**41)), "completion_tokens", "must be between 0 and"),
    (_line(trace=json.dumps([{"tool": "web_search", "query": "q", "result_chars": 2**70}])),
     "trace[0].result_chars", "beyond the largest allowed"),
    (_line(replicate=str(2**40)), "replicate", "must be between 0 and 2147483647"),
    (_line(answer=r'"ACC\ud800"'), "answer", "lone surrogate"),
    (_line(model=r'"m\udfff"'), "model", "lone surrogate"),
    (_line(answer="[" * 100_000 + "]" * 100_000), "answer", "nested more than 64 levels deep"),
    (_line(answer='{"CITE_1": ' + "[" * 70 + "]" * 70 + "}"), "answer.CITE_1[0][0][0]", "nested more than 64 levels"),
    (_line(wall_time_s="NaN"), "wall_time_s", "must be finite"),
    (_line(wall_time_s="Infinity"), "wall_time_s", "must be finite"),
    (_line(wall_time_s="-Infinity"), "wall_time_s", "must be finite"),
    (_line(wall_time_s="1e400"), "wall_time_s", "must be finite"),
    (_line(wall_time_s="-0.5"), "wall_time_s", "finite number >= 0"),
]


@pytest.mark.parametrize(("line", "field", "reason"), HOSTILE_RESPONSES,
                         ids=[f"{i}-{f}" for i, (_, f, _) in enumerate(HOSTILE_RESPONSES)])
def test_hostile_responses_are_one_line_and_change_nothing(tmp_path: Path, loaded: tuple[Path, str], ingest,
                                                           line: str, field: str, reason: str) -> None:
    db, sha = loaded
    bad = write_jsonl(tmp_path / "bad.jsonl", [GOOD[1], line])
    r = ingest("--db", db, "--responses", bad)
    assert r.exit_code == 2, r.output
    out = r.output.strip()
    assert "\n" not in out and "Traceback" not in out, out
    assert f"{bad}:2: field '{field}" in out and reason in out, out
    assert file_sha(db) == sha


def test_a_hostile_first_load_leaves_no_warehouse(tmp_path: Path, release: Path, ingest) -> None:
    db = tmp_path / "w.duckdb"
    bad = write_jsonl(tmp_path / "bad.jsonl", [_line(answer=r'"\ud800"')])
    r = ingest("--db", db, "--benchmark", release, "--responses", bad)
    assert r.exit_code == 2 and f"{bad}:1: field 'answer'" in r.output, r.output
    assert not db.exists()


def _judgment(judge: str) -> dict:
    return {"model": "m", "paradigm": "search", "replicate": 0, "task_id": "a1", "unit": "answer",
            "verdict": "correct", "judge": judge, "judge_version": "v1", "rationale": None}


@pytest.mark.parametrize(("judge", "reason"), [
    ("normalized-match ", "whitespace around it"),
    (" human", "whitespace around it"),
    ("Normalized-Match", "built-in judge"),
    ("x" * 300, "has 300 characters"),
    ("a\nb", "control"),
    ("", "is empty"),
])
def test_judgments_refuse_bad_judge_names(tmp_path: Path, loaded: tuple[Path, str], ingest, judge: str,
                                          reason: str) -> None:
    db, sha = loaded
    bad = write_jsonl(tmp_path / "j.jsonl", [_judgment(judge)])
    r = ingest("--db", db, "--judgments", bad)
    assert r.exit_code == 2 and f"{bad}:1: field 'judge'" in r.output and reason in r.output, r.output
    assert file_sha(db) == sha


def _grader(rec: Recorded) -> Reply:
    return completion(content="CORRECT")


def _judge(db: Path, srv: OpenAIServer, *extra: str):
    return CliRunner().invoke(judge_main, ["--judge-model", "test-model", "--base-url", srv.base_url, "--db", str(db),
                                           "-q", *extra], catch_exceptions=False)


@pytest.mark.parametrize(("name", "reason"), [
    ("j" * 300, "has 300 characters; a judge name has at most 120"),
    ("normalized-match ", "whitespace around it"),
    ("normalized-match", "built-in judge"),
])
def test_judge_name_is_checked_before_any_call(tmp_path: Path, loaded: tuple[Path, str], name: str, reason: str) -> None:
    db, sha = loaded
    with OpenAIServer(responder=_grader) as srv:
        r = _judge(db, srv, "--judge-name", name)
        calls = len(srv.requests)
    assert r.exit_code == 2 and reason in r.output and "\n" not in r.output.strip(), r.output
    assert calls == 0  # nothing paid for
    assert file_sha(db) == sha and not (tmp_path / "w.duckdb.judge-cache.jsonl").exists()


def test_a_long_valid_judge_name_loads(loaded: tuple[Path, str]) -> None:
    db, _ = loaded
    name = "llm:" + "/".join(["a-very-long-judge"] * 6)  # 110 characters, slashes and a colon in it
    with OpenAIServer(responder=_grader) as srv:
        r = _judge(db, srv, "--judge-name", name)
    assert r.exit_code == 0, r.output
    assert "verdicts from judgments files" in r.output


@pytest.mark.parametrize(("content", "reason"), [
    (b'{"key": "k", "reply": "CORRECT"}\n\xff\xfe not text\n', "judge cache is not UTF-8"),
    (b'{"key": "k", "reply": 5}\n', ":1: field 'reply': expected string, got int 5"),
    (b'{"key": 7, "reply": "CORRECT"}\n', ":1: field 'key': expected string"),
    (b'{"key": "k", "reply": "ok"}\n12\n', ":2: a judge cache line is an object"),
    (b'{"key": "k", "reply": "\\ud800"}\n', ":1: field 'reply': holds a lone surrogate"),
])
def test_a_bad_judge_cache_is_refused_before_any_call(tmp_path: Path, loaded: tuple[Path, str], content: bytes,
                                                      reason: str) -> None:
    db, sha = loaded
    cache = tmp_path / "cache.jsonl"
    cache.write_bytes(content)
    with OpenAIServer(responder=_grader) as srv:
        r = _judge(db, srv, "--cache", str(cache))
        calls = len(srv.requests)
    assert r.exit_code == 2 and str(cache) in r.output and reason in r.output, r.output
    assert "\n" not in r.output.strip() and calls == 0
    assert file_sha(db) == sha and cache.read_bytes() == content


def test_a_cache_line_cut_short_is_asked_again(tmp_path: Path) -> None:
    from agenthop.harness.benchmarks.sciexplore.judge_run import read_cache

    cache = tmp_path / "c.jsonl"
    cache.write_text('{"key": "a", "reply": "CORRECT"}\n{"key": "b", "rep', encoding="utf-8")
    assert read_cache(cache) == {"a": "CORRECT"}


@pytest.mark.parametrize(("task_no", "path", "field"), [
    (1, ["year"], "year"),
    (2, ["groups", 0, "references", 0, "year"], "groups[0].references[0].year"),
])
def test_a_release_year_beyond_what_the_warehouse_stores_is_refused(tmp_path: Path, ingest, task_no: int,
                                                                    path: list, field: str) -> None:
    tasks = json.loads(json.dumps(TASKS))
    node = tasks[task_no]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = 2**40
    rel = tmp_path / "release"
    rel.mkdir()
    write_jsonl(rel / "tasks.jsonl", tasks)
    db = tmp_path / "w.duckdb"
    r = ingest("--db", db, "--benchmark", rel)
    assert r.exit_code == 2, r.output
    assert f"tasks.jsonl:{task_no + 1}: field '{field}': must be between" in r.output and "\n" not in r.output.strip()
    assert not db.exists()
