"""The same 12-item benchmark through --backend google and --backend openai, against loopback servers
that play the same agent (tests/servers/agent_play.py): identical tool sequences, statuses, texts and
outcomes, so a provider's protocol changes nothing about what the harness measures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from servers import agent_play
from servers.gemini_server import GeminiServer
from servers.openai_server import OpenAIServer
from servers.sdk_env import isolate

from agenthop.harness.benchmark.generator import make_benchmark
from agenthop.harness.benchmark.loader import load_release
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


def test_google_and_openai_backends_measure_the_same_agent_identically(tmp_path: Path) -> None:
    make_benchmark(tmp_path / "bench", N_ITEMS, seed=11)
    release = load_release(tmp_path / "bench")
    opts = RunOptions(progress=False, workers=4, record_messages=True)
    with GeminiServer(responder=agent_play.gemini_responder) as gem, \
            OpenAIServer(responder=agent_play.openai_responder) as oai:
        google = run_model(RunSpec(ModelSpec(name="gemini-3-pro-preview", backend="google", base_url=gem.base_url),
                                   "full", 0), release, tmp_path / "runs", opts)
        chat = run_model(RunSpec(ModelSpec(name="gpt-4.1", backend="openai", base_url=oai.base_url), "full", 0),
                         release, tmp_path / "runs", opts)
        assert gem.refused == []  # every thought signature went back on its part
        assert len(gem.requests) == len(oai.requests)
    assert google.status == chat.status == COMPLETE and google.n_done == chat.n_done == N_ITEMS
    g_dir, c_dir = Path(google.run_dir), Path(chat.run_dir)

    g_calls = _rows(g_dir, "tool_calls", CALL_COLUMNS)
    assert g_calls == _rows(c_dir, "tool_calls", CALL_COLUMNS)
    assert _rows(g_dir, "trajectories", OUTCOME_COLUMNS) == _rows(c_dir, "trajectories", OUTCOME_COLUMNS)
    assert _tool_messages(g_dir) == _tool_messages(c_dir)

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
