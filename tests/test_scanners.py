"""agenthop-scan: sql and llm scanners over a hand-built warehouse (tests/scanner_fixtures.py), expected
results worked out by hand; no work for unchanged scanners on unchanged runs; bad scanner files write
nothing; llm scanners against a loopback server: cached, resumable after SIGKILL, cost-capped, sharded."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
import scanner_fixtures as fx
from click.testing import CliRunner
from servers.openai_server import OpenAIServer, completion, error
from servers.scripted_http import Recorded, Reply

from agenthop.ingest.scanners import llm_kind
from agenthop.ingest.scanners.cli import main as scan_main
from agenthop.ingest.scanners.definitions import ScannerFileError, load_scanners

REPEAT = """\
scanners:
  - name: repeated_call
    version: "1"
    kind: sql
    description: the same call (tool and arguments) twice or more in one attempt
    query: |
      select run_id, sample_id, attempt, max(n) >= 2 as value,
             list(struct_pack(turn := first_turn, seq := first_seq)) filter (where n >= 2) as evidence
      from (select run_id, sample_id, attempt, tool, args_json, count(*) as n, min(turn) as first_turn,
                   min(seq) as first_seq
            from raw.tool_calls group by all)
      group by all
"""


def file_sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def results(db: Path, scanner: str | None = None) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        where = "" if scanner is None else f"WHERE scanner = '{scanner}'"
        return con.execute(f"SELECT run_id, sample_id, attempt, scanner, value, label FROM raw.scanner_results {where} "
                           "ORDER BY ALL").fetchall()


def scan(*args: object) -> object:
    return CliRunner().invoke(scan_main, [str(a) for a in args])


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    return fx.build(tmp_path / "w.duckdb")


def test_sql_scanner_results_by_hand_and_no_work_when_unchanged(db: Path, tmp_path: Path) -> None:
    f = tmp_path / "s.yml"
    f.write_text(REPEAT)
    r = scan("--scanners", f, "--db", db)
    assert r.exit_code == 0, r.output
    assert "2 run scan(s) written (6 units), 0 unchanged" in r.output
    # r1/s1 searches {"q": "a"} twice; r1/s3 attempt 0 fetches {"id": 1} twice; r2/s1 searches a then b;
    # r1/s2 made no call (no row from the query: value 0)
    assert results(db) == [
        ("r1", "s1", 0, "repeated_call", 1.0, None), ("r1", "s2", 0, "repeated_call", 0.0, None),
        ("r1", "s3", 0, "repeated_call", 1.0, None), ("r1", "s3", 1, "repeated_call", 0.0, None),
        ("r2", "s1", 0, "repeated_call", 0.0, None), ("r2", "s2", 0, "repeated_call", 0.0, None)]
    with duckdb.connect(str(db), read_only=True) as con:
        ev = con.execute("SELECT evidence FROM raw.scanner_results WHERE run_id = 'r1' AND sample_id = 's1'").fetchall()
        version = con.execute("SELECT DISTINCT scanner_version FROM raw.scanner_results").fetchall()
    assert ev == [([{"turn": 1, "seq": 0}],)]
    assert version[0][0].startswith("1 sha256:")
    sha = file_sha(db)
    r = scan("--scanners", f, "--db", db)
    assert r.exit_code == 0 and "0 run scan(s) written (0 units), 2 unchanged" in r.output, r.output
    assert file_sha(db) == sha  # no work: not even a write
    fx.rerun(db, "r2", "h2-new")  # r2 reloaded with other content: only r2 is scanned again
    r = scan("--scanners", f, "--db", db)
    assert "1 run scan(s) written (2 units), 1 unchanged" in r.output, r.output
    f.write_text(REPEAT.replace("max(n) >= 2", "max(n) >= 3"))  # the query changed, the version did not
    r = scan("--scanners", f, "--db", db, "--models", "m1")
    assert "1 run scan(s) written (4 units), 0 unchanged" in r.output, r.output
    assert [x[4] for x in results(db) if x[0] == "r1"] == [0.0, 0.0, 0.0, 0.0]


def test_scan_creates_its_tables_in_an_older_warehouse(tmp_path: Path) -> None:
    db = fx.build(tmp_path / "old.duckdb", with_scanner_tables=False)
    f = tmp_path / "s.yml"
    f.write_text(REPEAT)
    assert scan("--scanners", f, "--db", db, "--runs", "r2").exit_code == 0
    assert [x[:3] for x in results(db)] == [("r2", "s1", 0), ("r2", "s2", 0)]


BAD = [
    ("- name: x", "expected a top-level 'scanners:' list"),
    ("scanners:\n  - {name: x, version: 1, kind: grep, query: q}", "scanners[0] ('x'): field 'kind': unknown kind 'grep'"),
    ("scanners:\n  - {name: x, version: 1, kind: sql}", "field 'query': missing"),
    ("scanners:\n  - {name: x, version: 1, kind: sql, query: 'delete from raw.runs'}",
     "field 'query': expected a read-only SELECT, got a DELETE statement"),
    ("scanners:\n  - {name: x, version: 1, kind: sql, query: 'select 1; select 2'}", "expected one SELECT statement"),
    ("scanners:\n  - {name: x, version: 1, kind: sql, query: 'select * from raw.ingest_log'}",
     "field 'query': reads raw.ingest_log, which a scanner may not read"),
    ("scanners:\n  - {name: x, version: 1, kind: sql, query: 'select * from main.fct_trajectory'}",
     "reads main.fct_trajectory"),
    ("scanners:\n  - {name: x, version: 1, kind: sql, query: \"select * from read_csv('/etc/passwd')\"}",
     "calls the table function read_csv()"),
    ("scanners:\n  - {name: x, version: 1, kind: sql, query: 'select * from raw.runs', regex: a}",
     "field 'regex': not a field of a sql scanner"),
    ("scanners:\n  - {name: x, version: 1, kind: llm, model: m, prompt: 'no slot'}", "field 'prompt': has no {transcript}"),
    ("scanners:\n  - {name: x, version: 1, kind: llm, model: m, prompt: '{transcript}', answer: maybe}",
     "field 'answer': expected 'yes/no', 'number' or a list of labels"),
    ("scanners:\n  - {name: 'bad name', version: 1, kind: sql, query: 'select 1'}", "field 'name'"),
    ("scanners:\n  - {name: x, version: 1, kind: sql, query: 'select 1'}\n  - {name: x, version: 2, kind: sql, "
     "query: 'select 1'}", "scanners[1] ('x'): field 'name': another scanner of the file has this name"),
    ("scanners: [\n", "not valid YAML"),
]


@pytest.mark.parametrize(("text", "reason"), BAD)
def test_a_bad_scanner_file_is_one_line_and_writes_nothing(db: Path, tmp_path: Path, text: str, reason: str) -> None:
    f = tmp_path / "bad.yml"
    f.write_text(text)
    sha = file_sha(db)
    r = scan("--scanners", f, "--db", db)
    assert r.exit_code == 2 and reason in r.output and str(f) in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1
    assert file_sha(db) == sha


def test_a_query_that_fails_at_run_time_names_the_scanner(db: Path, tmp_path: Path) -> None:
    f = tmp_path / "s.yml"
    f.write_text("scanners:\n  - {name: x, version: 1, kind: sql, query: 'select run_id, sample_id, attempt from "
                 "raw.trajectories'}\n")
    sha = file_sha(db)
    r = scan("--scanners", f, "--db", db)
    assert r.exit_code == 2 and "scanner 'x': field 'query': returns no column 'value'" in r.output, r.output
    assert file_sha(db) == sha


def test_unknown_run_or_model_is_refused(db: Path, tmp_path: Path) -> None:
    f = tmp_path / "s.yml"
    f.write_text(REPEAT)
    assert "--runs nope: no such run" in scan("--scanners", f, "--db", db, "--runs", "nope").output
    assert "--models m9: no run of this model" in scan("--scanners", f, "--db", db, "--models", "m9").output


# ------------------------------------------------------------------------------------------------------------
# llm scanners

HEDGE = """\
scanners:
  - name: hedges
    version: "2"
    kind: llm
    backend: openai
    model: {model}
    base_url: {url}
    prompt: "Does the agent hedge its final answer?\\n{{transcript}}"
"""


def _judge(fail_on: str | None = None, delay: float = 0.0):
    def reply(rec: Recorded) -> Reply:
        p = rec.body["messages"][-1]["content"]
        if fail_on and fail_on in p:
            return error(400, "refused")
        answer = "Yes, it hedges." if "not sure" in p else ("Unclear" if "teleport" in p else "No.")
        r = completion(content=answer, prompt_tokens=1000, completion_tokens=10)
        r.delay_s = delay
        return r
    return reply


def test_transcript_prompt_and_answers() -> None:
    assert llm_kind.read_answer("yes/no", "Yes, clearly") == (1.0, None)
    assert llm_kind.read_answer("yes/no", "I'd say no") == (0.0, None)
    assert llm_kind.read_answer("yes/no", "Unclear") is None
    assert llm_kind.read_answer("number", "about 3.5 times") == (3.5, None)
    assert llm_kind.read_answer(["gave up", "hedged", "committed"], "It HEDGED, then gave up") == (1.0, "hedged")
    assert llm_kind.read_answer(["a", "b"], "none") is None
    clipped = llm_kind.clip("x" * 1000, 200)
    assert len(clipped) == 200 and "800 characters left out" in clipped
    assert llm_kind.render_steps([(1, "assistant", None)], [(1, 0, "search", '{"q": 1}', "ok", None)]) == (
        '[turn 1] assistant\n  call #0 search({"q": 1}) -> ok')


def test_llm_scanner_calls_caches_and_resumes(db: Path, tmp_path: Path) -> None:
    f = tmp_path / "s.yml"
    with OpenAIServer(responder=_judge(fail_on="teleport")) as srv:
        f.write_text(HEDGE.format(model="test-model", url=srv.base_url))
        r = scan("--scanners", f, "--db", db, "-q")
        first = [x.body["messages"][-1]["content"] for x in srv.requests]
    assert r.exit_code == 2 and "1 call(s) failed" in r.output, r.output
    assert len(first) == 6 and all("Answer yes or no." in p for p in first)
    # r1/s1 has messages: its transcript is them; the others are built from turns and tool calls
    assert any("[3] assistant: B, but I am not sure." in p for p in first)
    assert any('call #0 search({"q": "c"}) -> ok' in p for p in first)
    got = results(db, "hedges")
    assert [(x[0], x[1], x[2], x[4]) for x in got] == [
        ("r1", "s1", 0, 1.0), ("r1", "s2", 0, 0.0), ("r1", "s3", 0, 0.0), ("r2", "s1", 0, 0.0), ("r2", "s2", 0, 0.0)]
    with OpenAIServer(responder=_judge()) as srv:
        f.write_text(HEDGE.format(model="test-model", url=srv.base_url))
        r = scan("--scanners", f, "--db", db)
        again = [x.body["messages"][-1]["content"] for x in srv.requests]
    assert r.exit_code == 0, r.output
    assert len(again) == 1 and "teleport" in again[0]  # only the prompt that failed is asked again
    # r2 was scanned whole the first time (a new base URL is not a new version); r1's three cached replies
    # are read again from the cache
    assert "1 run scan(s) written (4 units), 1 unchanged; 1 prompts asked, 3 answered from the cache, 1 replies " \
        "without an answer" in r.output
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute("SELECT value, explanation, scanner_version FROM raw.scanner_results WHERE sample_id = 's3' "
                          "AND attempt = 1").fetchall()[0]
    assert row[0] is None and row[1].startswith("no answer of the asked form: Unclear")
    assert "prompt-sha256:" in row[2] and row[2].endswith("model:test-model")
    with OpenAIServer(responder=_judge()) as srv:  # everything scanned: no call, no write
        f.write_text(HEDGE.format(model="test-model", url=srv.base_url))
        sha = file_sha(db)
        assert scan("--scanners", f, "--db", db).exit_code == 0 and srv.requests == [] and file_sha(db) == sha


def test_llm_scanner_resumes_after_sigkill_and_answers_every_unit_once(db: Path, tmp_path: Path) -> None:
    f, cache = tmp_path / "s.yml", tmp_path / "cache.jsonl"
    with OpenAIServer(responder=_judge(delay=0.4)) as srv:
        f.write_text(HEDGE.format(model="test-model", url=srv.base_url))
        env = dict(os.environ, AGENTHOP_DB=str(db))
        proc = subprocess.Popen([sys.executable, "-c", "from agenthop.ingest.scanners.cli import main; main()",
                                 "--scanners", str(f), "--cache", str(cache), "--concurrency", "1", "-q"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not cache.exists() or len(cache.read_text().splitlines()) < 2):
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert results(db) == []  # killed before its write: nothing half-written
    cached = [json.loads(x)["key"] for x in cache.read_text().splitlines()]
    assert 2 <= len(cached) < 6 and len(set(cached)) == len(cached)
    with OpenAIServer(responder=_judge()) as srv:
        f.write_text(HEDGE.format(model="test-model", url=srv.base_url))
        r = scan("--scanners", f, "--db", db, "--cache", cache)
        asked = len(srv.requests)
    assert r.exit_code == 0, r.output
    assert asked == 6 - len(cached)  # the cached prompts are not asked again
    keys = [json.loads(x)["key"] for x in cache.read_text().splitlines()]
    assert len(keys) == len(set(keys)) == 6  # every unit answered exactly once
    assert len(results(db)) == 6


def test_llm_scanner_stops_at_the_cost_cap(db: Path, tmp_path: Path) -> None:
    f = tmp_path / "s.yml"
    with OpenAIServer(responder=_judge()) as srv:
        # gpt-5.4: $1.25 per 1M input tokens and $10 per 1M output (the price table): one reply of
        # 1,000 + 10 tokens costs $0.00135, so a cap of $0.002 pays for one call and not two
        f.write_text(HEDGE.format(model="gpt-5.4", url=srv.base_url))
        r = scan("--scanners", f, "--db", db, "--max-cost-usd", "0.002", "--concurrency", "1")
        asked = len(srv.requests)
    assert r.exit_code == 2 and "--max-cost-usd 0.002 reached" in r.output, r.output
    assert 1 <= asked <= 2 and len(results(db)) == asked


def test_shards_together_give_the_whole_scan(db: Path, tmp_path: Path) -> None:
    f = tmp_path / "s.yml"
    f.write_text(REPEAT)
    whole = tmp_path / "whole.duckdb"
    fx.build(whole)
    assert scan("--scanners", f, "--db", whole).exit_code == 0
    r0 = scan("--scanners", f, "--db", db, "--shard", "0/2")
    assert r0.exit_code == 0, r0.output
    part = results(db)
    assert 0 < len(part) < 6
    assert scan("--scanners", f, "--db", db, "--shard", "1/2").exit_code == 0
    assert results(db) == results(whole)
    assert "0 run scan(s) written (0 units), 2 unchanged" in scan("--scanners", f, "--db", db, "--shard", "0/2").output


def test_load_scanners_reads_a_good_file(tmp_path: Path) -> None:
    f = tmp_path / "s.yml"
    f.write_text(REPEAT)
    (s,) = load_scanners(f)
    assert (s.name, s.kind, s.version) == ("repeated_call", "sql", "1")
    with pytest.raises(ScannerFileError):
        load_scanners(tmp_path / "missing.yml")


def test_deleting_a_run_deletes_its_scanner_results(db: Path, tmp_path: Path) -> None:
    from agenthop.ingest.cli import main as ingest_main

    f = tmp_path / "s.yml"
    f.write_text(REPEAT)
    assert scan("--scanners", f, "--db", db).exit_code == 0
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--delete-run", "r2"])
    assert r.exit_code == 0 and "scanner_results=2 scanner_runs=1" in r.output, r.output
    assert {x[0] for x in results(db)} == {"r1"}


# ------------------------------------------------------------------------------------------------------------
# pattern scanners (the transcript search)

PATTERNS = """\
scanners:
  - {name: rep, version: 1, kind: pattern, repeat: 2}
  - {name: not_sure, version: 1, kind: pattern, text: "NOT SURE", role: assistant}
  - {name: not_sure_cased, version: 1, kind: pattern, text: "NOT SURE", role: assistant, case_sensitive: true}
  - {name: search_submit, version: 1, kind: pattern, sequence: "search>submit"}
  - {name: failed, version: 1, kind: pattern, status: tool_error}
  - {name: quoted_a, version: 1, kind: pattern, tool: search, tool_args: '"q": "[ab]"'}
  - {name: fetch_word, version: 1, kind: pattern, text: 'fe?tch', regex: true}
"""


def test_pattern_scanners_by_hand(db: Path, tmp_path: Path) -> None:
    f = tmp_path / "p.yml"
    f.write_text(PATTERNS)
    r = scan("--scanners", f, "--db", db)
    assert r.exit_code == 0, r.output
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT scanner, run_id, sample_id, attempt, value, evidence FROM raw.scanner_results "
                           "WHERE value > 0 ORDER BY ALL").fetchall()
        n = con.execute("SELECT scanner, count(*) FROM raw.scanner_results GROUP BY ALL ORDER BY ALL").fetchall()
    assert {c for _, c in n} == {6}  # every attempt classified, zeros included
    got = {(s, r, sa, a): (v, ev) for s, r, sa, a, v, ev in rows}
    assert got == {
        # one distinct call made twice: search {"q": "a"} (first at turn 1, seq 0), fetch {"id": 1}
        ("rep", "r1", "s1", 0): (1.0, [{"turn": 1, "seq": 0}]),
        ("rep", "r1", "s3", 0): (1.0, [{"turn": 1, "seq": 0}]),
        # the last assistant message of r1/s1 (its second assistant turn); case matters only when asked
        ("not_sure", "r1", "s1", 0): (1.0, [{"turn": 2, "seq": None}]),
        # search then submit, consecutive: from seq 1 in both runs
        ("search_submit", "r1", "s1", 0): (1.0, [{"turn": 2, "seq": 1}]),
        ("search_submit", "r2", "s1", 0): (1.0, [{"turn": 2, "seq": 1}]),
        ("failed", "r1", "s3", 0): (1.0, [{"turn": 1, "seq": 0}]),
        # searches for a or b: r1/s1 twice, r2/s1 twice ("c" in r2/s2 does not match)
        ("quoted_a", "r1", "s1", 0): (2.0, [{"turn": 1, "seq": 0}, {"turn": 2, "seq": 1}]),
        ("quoted_a", "r2", "s1", 0): (2.0, [{"turn": 1, "seq": 0}, {"turn": 2, "seq": 1}]),
        # fetch_word: "fetch" is in no message, argument or output text (a call's tool name is not its text)
    }
    assert "0 run scan(s) written (0 units), 14 unchanged" in scan("--scanners", f, "--db", db).output


@pytest.mark.parametrize(("entry", "reason"), [
    ("{name: x, version: 1, kind: pattern, text: '(', regex: true}", "field 'text':"),
    ("{name: x, version: 1, kind: pattern, text: a, role: robot}", "field 'role': 'robot' is not one of"),
    ("{name: x, version: 1, kind: pattern, repeat: 1}", "field 'repeat': 1 is not 2 or more"),
    ("{name: x, version: 1, kind: pattern, repeat: two}", "field 'repeat': expected int, got str"),
    ("{name: x, version: 1, kind: pattern, regex: true}", "nothing to search for"),
    ("{name: x, version: 1, kind: pattern, text: a, model: m}", "field 'model': not a field of a pattern scanner"),
])
def test_a_bad_pattern_scanner_is_one_line(db: Path, tmp_path: Path, entry: str, reason: str) -> None:
    f = tmp_path / "bad.yml"
    f.write_text(f"scanners:\n  - {entry}\n")
    sha = file_sha(db)
    r = scan("--scanners", f, "--db", db)
    assert r.exit_code == 2 and reason in r.output and str(f) in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and file_sha(db) == sha


def test_llm_scanner_reads_a_warehouse_made_before_turns_had_error_text(db: Path, tmp_path: Path) -> None:
    with duckdb.connect(str(db)) as con:
        con.execute("ALTER TABLE raw.turns DROP COLUMN error_text")
    f = tmp_path / "s.yml"
    with OpenAIServer(responder=_judge()) as srv:
        f.write_text(HEDGE.format(model="test-model", url=srv.base_url))
        r = scan("--scanners", f, "--db", db, "--runs", "r2")
    assert r.exit_code == 0 and len(results(db)) == 2, r.output


def test_a_scanner_file_or_cache_that_is_not_utf8_is_one_line(db: Path, tmp_path: Path) -> None:
    f = tmp_path / "s.yml"
    f.write_bytes(b"scanners:\n  - {name: \xff}\n")
    r = scan("--scanners", f, "--db", db)
    assert r.exit_code == 2 and f"{f}: scanner file is not UTF-8" in r.output
    cache = tmp_path / "c.jsonl"
    cache.write_bytes(b"\xff\n")
    f.write_text(HEDGE.format(model="m", url="http://127.0.0.1:9/v1"))
    r = scan("--scanners", f, "--db", db, "--cache", cache)
    assert r.exit_code == 2 and "scanner cache is not UTF-8" in r.output and "give another --cache" in r.output
