"""``--search native`` end to end: the command line against the loopback OpenAI Responses server
(tests/servers/search_agent.py's native agent: the provider's own web searches, then the answer),
ingest into a fresh warehouse, dbt build of SciExplore's models and the shared cost mart; the
searches with their queries and the tokens the provider reported reach the tables the marts and
the report read."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
from click.testing import CliRunner
from conftest import run_dbt_build
from servers.responses_server import ResponsesServer
from servers.search_agent import native_responder, native_searches, native_usage
from sx_fixtures import N_SMALL, clean_env, harness, small_release  # noqa: F401 (fixture)

from agenthop.harness.benchmarks.sciexplore.prompts import system_prompt
from agenthop.ingest.cli import main as ingest_main

SELECT = ("--select", "path:models_sql/staging/sciexplore", "path:models_sql/intermediate/sciexplore",
          "path:models_sql/marts/sciexplore", "+model_cost", "+run_summary")
MODEL = "native-searcher"


def test_native_search_run_reaches_the_marts(small_release: Path, tmp_path: Path) -> None:
    out, db = tmp_path / "runs", tmp_path / "w.duckdb"
    args = ["run", "--benchmark", "sciexplore", "--data", str(small_release), "--paradigm", "search", "--search",
            "native", "--model", MODEL, "--model-id", "gpt-test", "--backend", "responses", "--workers", "2",
            "--out", str(out), "--no-progress"]
    with ResponsesServer(responder=native_responder) as srv:
        done = subprocess.run([*harness(), *args, "--base-url", srv.base_url], capture_output=True, text=True,
                              env=clean_env(), timeout=300)
        requests, refused = list(srv.requests), list(srv.refused)
    assert done.returncode == 0, done.stderr
    assert refused == [] and len(requests) == N_SMALL  # one response per task: searches, then the answer
    # each request declared the provider's search tool and no function tools
    assert all([t["type"] for t in r.body["tools"]] == ["web_search"] for r in requests)
    assert all("web_search_call.action.sources" in r.body["include"] for r in requests)
    # the system prompt names the built-in search, not the corpus tools a native run does not declare
    assert {r.body["instructions"] for r in requests} == {system_prompt("search", native=True)}
    prompts = {r.body["input"][0]["content"] for r in requests}
    tasks = {json.loads(line)["id"]: json.loads(line) for line in (small_release / "tasks.jsonl").read_text().splitlines()}
    prompt_of = {tid: next(p for p in prompts if p.startswith(t["question"] + "\n")) for tid, t in tasks.items()}
    expected = {tid: native_searches(p) for tid, p in prompt_of.items()}

    run_dir = next(p for p in out.iterdir() if p.is_dir())
    calls = pq.read_table(next(run_dir.glob("tool_calls-*.parquet"))).to_pylist()
    assert {(c["tool"], c["status"], c["cost"]) for c in calls} == {("web_search", "ok", 0)}

    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--benchmark", str(small_release), "--runs", str(out)],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    proc = run_dbt_build(db, tmp_path, *SELECT)
    assert proc.returncode == 0, proc.stdout[-3000:]
    with duckdb.connect(str(db), read_only=True) as con:
        # every search with its query, in order, in the trace the report's item pages show (and its staging model)
        for table in ("raw.sciexplore_trace", "staging.stg_sciexplore__trace"):
            got: dict[str, list[str]] = {}
            for tid, query, is_search in con.execute(
                    f"SELECT task_id, query, is_search FROM {table} ORDER BY task_id, seq").fetchall():
                assert is_search
                got.setdefault(tid, []).append(query)
            assert got == expected, table
        # per task and per type in the SciExplore marts
        n_search = dict(con.execute("SELECT task_id, n_search_calls FROM main.sciexplore_task_outcome "
                                    "WHERE judge = 'normalized-match'").fetchall())
        assert n_search == {tid: len(q) for tid, q in expected.items()}
        effort = con.execute("SELECT type, n_tasks, search_calls FROM main.sciexplore_search_effort "
                             "WHERE judge = 'normalized-match' ORDER BY type").fetchall()
        assert effort == [(f"T{k}", 2, sum(len(q) for tid, q in expected.items() if tid.startswith(f"t{k}")))
                          for k in range(1, 5)]
        [(model, paradigm, n_tasks)] = con.execute(
            "SELECT model, paradigm, n_tasks FROM main.sciexplore_summary WHERE judge = 'normalized-match'").fetchall()
        assert (model, paradigm, n_tasks) == (MODEL, "search", N_SMALL)
        # tokens as the Responses API reported them: prompt = input - cached, cached as cache reads
        usage = [native_usage(p) for p in prompt_of.values()]
        want = (sum(i - c for i, c, _ in usage), sum(o for _, _, o in usage), sum(c for _, c, _ in usage))
        assert con.execute("SELECT prompt_tokens, completion_tokens, cache_read_tokens FROM main.model_cost").fetchall() \
            == [want]
        assert con.execute("SELECT total_tokens FROM main.run_summary").fetchall() == [(want[0] + want[1],)]
        per_task = dict(con.execute("SELECT task_id, prompt_tokens + completion_tokens "
                                    "FROM staging.stg_sciexplore__responses").fetchall())
        assert per_task == {tid: native_usage(p)[0] - native_usage(p)[1] + native_usage(p)[2]
                            for tid, p in prompt_of.items()}
