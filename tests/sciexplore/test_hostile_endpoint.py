"""SciExplore search runs against a hostile OpenAI-compatible endpoint on 127.0.0.1: what ingest would
refuse (a reply text past the 5 MiB cap, a tool call without a name, arguments past the cap) is an
error turn of its sample, what is sent back stays bounded, and the run ingests (docs/harness.md)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from servers.openai_server import OpenAIServer, completion, tool_call
from servers.scripted_http import Recorded, Reply
from servers.sdk_env import isolate
from sx_fixtures import small_release  # noqa: F401 (fixture)

from agenthop.harness import benchmarks
from agenthop.harness.panel import ModelSpec, RunSpec
from agenthop.harness.run_plan import plan_run
from agenthop.harness.runner import COMPLETE, RunOptions, run_model
from agenthop.ingest.cli import main as ingest_main

MIB = 1024 * 1024
FINAL = "Final answer: I could not find the answer."
#: no waiting between error turns and attempts; two attempts per sample
FAST = {"error_sleep_cap_s": 0.0, "sample_retry_waits": (0.0,), "max_attempts": 2}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch)


def per_task(script: Callable[[int], Reply]) -> Callable[[Recorded], Reply]:
    """A responder answering the k-th request about a task (0-based) with ``script(k)``."""
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    def respond(rec: Recorded) -> Reply:
        prompt = next(m["content"] for m in rec.body["messages"] if m["role"] == "user")
        with lock:
            k = seen[prompt]
            seen[prompt] += 1
        return script(k)
    return respond


def final(k: int = 0) -> Reply:
    return completion(content=FINAL, prompt_tokens=100, completion_tokens=10)


def search(query: str, k: int) -> Reply:
    return completion(tool_calls=[tool_call(f"c{k}", "web_search", {"query": query})], prompt_tokens=100,
                      completion_tokens=10)


def hostile_run(release_dir: Path, out: Path, responder: Callable[[Recorded], Reply]) -> tuple[Path, list[int]]:
    """Two tasks of the search paradigm over the corpus; the run directory and every request's size."""
    release = benchmarks.load(release_dir)
    with OpenAIServer(responder=responder) as srv:
        run = plan_run(RunSpec(ModelSpec(name="hostile", backend="openai", base_url=srv.base_url), "search", 0,
                               benchmark="sciexplore"), {}, {"search": "corpus"})
        res = run_model(run, release, out, RunOptions(progress=False, workers=2, loop_overrides=FAST), limit=2)
        sizes = [len(json.dumps(r.body)) for r in srv.requests]
    assert res.status == COMPLETE and res.n_done == 2
    run_dir = Path(res.run_dir)
    assert (run_dir / "_SUCCESS").exists()
    return run_dir, sizes


def rows(run_dir: Path, table: str) -> list[dict[str, Any]]:
    return [r for p in sorted(run_dir.glob(f"{table}-*.parquet")) for r in pq.read_table(p).to_pylist()]


def ingest_ok(tmp_path: Path, release_dir: Path, out: Path) -> Path:
    db = tmp_path / "w.duckdb"
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--benchmark", str(release_dir), "--runs", str(out)],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return db


def q(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


BIG_TEXT = "word " * (2 * MIB + 1)  # 10 MiB and 5 bytes


@pytest.mark.parametrize(("first", "problem"), [
    (lambda: completion(content=BIG_TEXT, prompt_tokens=100, completion_tokens=10),
     "the reply's text has 10,485,765 bytes, above the 5 MiB"),
    (lambda: completion(tool_calls=[tool_call("c0", "", {"query": "kinase"})], prompt_tokens=100,
                        completion_tokens=10), "tool call 0 of the reply has an empty name"),
    (lambda: search("kinase " * (10 * MIB // 7), 0), "tool call 0 ('web_search') of the reply has arguments of"),
], ids=["10MiB-final-reply", "empty-tool-name", "10MiB-query"])
def test_a_reply_ingest_would_refuse_is_an_error_turn(small_release: Path, tmp_path: Path, first: Callable[[], Reply],
                                                      problem: str) -> None:
    """The first reply about each task is hostile, the next one a good answer: the sample records one
    error turn (with the hostile reply's tokens) and ends answered; the run ingests."""
    out = tmp_path / "runs"
    run_dir, sizes = hostile_run(small_release, out, per_task(lambda k: first() if k == 0 else final()))
    errors = [t for t in rows(run_dir, "turns") if t["role"] == "error"]
    assert len(errors) == 2 and all(problem in t["error_text"] for t in errors), errors
    assert all((t["prompt_tokens"], t["completion_tokens"]) == (100, 10) for t in errors)
    finals = [t for t in rows(run_dir, "trajectories") if t["is_final"]]
    assert [(t["terminated_by"], t["api_error_count"], t["total_prompt_tokens"]) for t in finals] == [("answer", 1, 200)] * 2
    assert [t["predicted_answer"] for t in finals] == [FINAL, FINAL]
    assert rows(run_dir, "tool_calls") == []  # the hostile reply's calls did not run
    assert max(sizes) < 100_000  # the hostile reply was not sent back
    db = ingest_ok(tmp_path, small_release, out)
    assert q(db, "SELECT status, count(*) FROM raw.sciexplore_responses GROUP BY ALL") == [("not_attempted", 2)]
    assert q(db, "SELECT count(*) FROM raw.turns WHERE role = 'error'") == [(2,)]


def test_a_model_that_keeps_replying_badly_errors_its_sample(small_release: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    bad = completion(tool_calls=[tool_call("c0", "  ", {"query": "kinase"})], prompt_tokens=5, completion_tokens=1)
    run_dir, _ = hostile_run(small_release, out, per_task(lambda k: bad))
    trajs = rows(run_dir, "trajectories")
    assert sorted((t["attempt"], t["terminated_by"], t["is_final"], t["total_turns"]) for t in trajs) == \
        [(0, "error", False, 5)] * 2 + [(1, "error", True, 5)] * 2
    db = ingest_ok(tmp_path, small_release, out)
    assert q(db, "SELECT status, count(*) FROM raw.sciexplore_responses GROUP BY ALL") == [("error", 2)]


def test_what_is_sent_back_stays_bounded(small_release: Path, tmp_path: Path) -> None:
    """Three web_search calls with a 1 MiB query each (under the cap) before the answer: each is stored
    whole, but what the next requests carry of them is cut, so no request grows by megabytes."""
    query = ("kinase binding " * MIB)[:MIB]
    out = tmp_path / "runs"
    run_dir, sizes = hostile_run(small_release, out, per_task(lambda k: search(query, k) if k < 3 else final()))
    calls = rows(run_dir, "tool_calls")
    assert len(calls) == 6 and all(c["search_query"] == query and c["status"] == "ok" for c in calls)
    assert all(len(c["args_json"]) > MIB for c in calls)
    # every request holds at most three queries cut to 100,000 characters and three results (each
    # showing the query cut to 1,000): not the 6 MiB the three whole queries and their echoes were
    assert max(sizes) < 400_000, max(sizes)
    messages = rows(run_dir, "messages")
    tool_results = [m["content"] for m in messages if m["role"] == "tool"]
    assert tool_results and all("characters more)" in t and len(t) < 10_000 for t in tool_results)
    db = ingest_ok(tmp_path, small_release, out)
    assert q(db, "SELECT count(*), min(length(query)) FROM raw.sciexplore_trace") == [(6, MIB)]


def test_the_cap_is_the_one_ingest_uses() -> None:
    from agenthop.ingest import conform
    from agenthop.schemas.limits import MAX_TEXT_BYTES

    assert conform.MAX_TEXT_BYTES is MAX_TEXT_BYTES


def test_an_answer_whose_json_would_pass_the_cap_keeps_its_text(small_release: Path, tmp_path: Path) -> None:
    """A 3 MiB final answer of quotation marks is under the cap as text but not as JSON (each mark escaped):
    the trajectory keeps the text and no answer_json, and ingest judges the text."""
    text = "Final answer: " + '"' * (3 * MIB)
    out = tmp_path / "runs"
    run_dir, _ = hostile_run(small_release, out, per_task(lambda k: completion(content=text, prompt_tokens=1,
                                                                                 completion_tokens=1)))
    finals = [t for t in rows(run_dir, "trajectories") if t["is_final"]]
    assert [(t["terminated_by"], t["predicted_answer"] == text, t["answer_json"]) for t in finals] == \
        [("answer", True, None)] * 2
    db = ingest_ok(tmp_path, small_release, out)
    assert q(db, "SELECT count(*), min(length(answer_text)) FROM raw.sciexplore_responses") == [(2, len(text))]
