"""The same 12-item benchmark through --backend google, --backend openai and --backend responses,
against loopback servers that play the same agent (tests/servers/agent_play.py): identical tool
sequences, statuses, texts and outcomes, so a provider's protocol changes nothing about what the
harness measures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from servers import agent_play
from servers.gemini_server import GeminiServer
from servers.openai_server import OpenAIServer
from servers.responses_server import ResponsesServer
from servers.sdk_env import isolate
from click.testing import CliRunner

from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
from agenthop.harness.cli import main as cli_main
from agenthop.harness.benchmarks.agenthop.loader import load_release
from agenthop.harness.panel import ModelSpec, RunSpec
from agenthop.harness.runner import COMPLETE, RunOptions, run_model

N_ITEMS = 12
CALL_COLUMNS = ("sample_id", "attempt", "turn", "call_index", "seq", "tool", "args_json", "paper_id", "section_query",
                "resolved_header", "resolved_section_index", "search_query", "answer", "cost", "status",
                "output_chars", "budget_after")
OUTCOME_COLUMNS = ("sample_id", "attempt", "is_final", "predicted_answer", "predicted_index", "is_correct",
                   "terminated_by", "total_turns", "budget_used", "total_prompt_tokens", "total_completion_tokens",
                   "total_tokens", "tool_errors", "api_error_count", "transient_retry_count", "reasoning")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch)


def _rows(run_dir: Path, name: str, columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    rows = pq.ParquetDataset(sorted(run_dir.glob(f"{name}-*.parquet"))).read().to_pylist()
    return sorted(tuple(r[c] for c in columns) for r in rows)


def _tool_messages(run_dir: Path) -> list[tuple[Any, ...]]:
    rows = pq.ParquetDataset(sorted(run_dir.glob("messages-*.parquet"))).read().to_pylist()
    return sorted((r["sample_id"], r["idx"], r["name"], r["content"]) for r in rows if r["role"] in ("tool", "user"))


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("equivalence") / "bench"
    make_benchmark(root, N_ITEMS, seed=11)
    return root


def test_google_openai_and_responses_backends_measure_the_same_agent_identically(bench_dir: Path,
                                                                                 tmp_path: Path) -> None:
    release = load_release(bench_dir)
    opts = RunOptions(progress=False, workers=4, record_messages=True)
    with GeminiServer(responder=agent_play.gemini_responder) as gem, \
            OpenAIServer(responder=agent_play.openai_responder) as oai, \
            ResponsesServer(responder=agent_play.responses_responder) as rsp:
        google = run_model(RunSpec(ModelSpec(name="gemini-3-pro-preview", backend="google", base_url=gem.base_url),
                                   "full", 0), release, tmp_path / "runs", opts)
        chat = run_model(RunSpec(ModelSpec(name="gpt-4.1", backend="openai", base_url=oai.base_url), "full", 0),
                         release, tmp_path / "runs", opts)
        resp = run_model(RunSpec(ModelSpec(name="gpt-5.4", backend="responses", base_url=rsp.base_url), "full", 0),
                         release, tmp_path / "runs", opts)
        # every thought signature and every reasoning item went back where it belongs
        assert gem.refused == [] and rsp.refused == []
        assert len(gem.requests) == len(oai.requests) == len(rsp.requests)
    assert {r.status for r in (google, chat, resp)} == {COMPLETE} and google.n_done == chat.n_done == N_ITEMS
    g_dir, c_dir, r_dir = Path(google.run_dir), Path(chat.run_dir), Path(resp.run_dir)

    g_calls = _rows(g_dir, "tool_calls", CALL_COLUMNS)
    for other in (c_dir, r_dir):
        assert g_calls == _rows(other, "tool_calls", CALL_COLUMNS)
        assert _rows(g_dir, "trajectories", OUTCOME_COLUMNS) == _rows(other, "trajectories", OUTCOME_COLUMNS)
        assert _tool_messages(g_dir) == _tool_messages(other)

    # the agent's four paths all occurred, so the comparison covers parallel calls, a failed read,
    # a search and a nudged text turn
    statuses = {row[CALL_COLUMNS.index("status")] for row in g_calls}
    tools = {row[CALL_COLUMNS.index("tool")] for row in g_calls}
    assert {"ok", "section_not_found"} <= statuses
    assert {"get_references", "get_paper_info", "list_sections", "read_section", "search_papers",
            "submit_answer"} <= tools
    turns = _rows(g_dir, "turns", ("sample_id", "turn", "n_tool_calls"))
    assert any(n == 2 for _, _, n in turns) and any(n == 0 for _, _, n in turns)
    outcomes = _rows(g_dir, "trajectories", ("terminated_by", "is_correct"))
    assert {t for t, _ in outcomes} == {"answer"} and len({c for _, c in outcomes}) == 2


def test_cli_detects_gemini_and_runs_it_with_the_reference_preset(bench_dir: Path, tmp_path: Path) -> None:
    """`run --model gemini-3-pro-preview --base-url URL` (no --backend): google backend, preset sent."""
    with GeminiServer(responder=agent_play.gemini_responder) as gem:
        res = CliRunner().invoke(cli_main, ["run", "--data", str(bench_dir), "--model", "gemini-3-pro-preview",
                                            "--base-url", gem.base_url, "--limit", "2", "--out", str(tmp_path),
                                            "--no-progress"])
        bodies, refused = [r.body for r in gem.requests], gem.refused
    assert res.exit_code == 0, res.output
    assert ("backend google (Google Gemini API, detected from the model id), endpoint the given --base-url, no key "
            "(placeholder key for the given --base-url)") in res.stderr
    assert "n=2/2" in res.stdout and refused == []
    gen = bodies[0]["generationConfig"]
    assert (gen["topK"], gen["thinkingConfig"]) == (64, {"include_thoughts": True, "thinking_level": "MEDIUM"})
    assert f"127.0.0.1:{gem.port}" not in res.output
