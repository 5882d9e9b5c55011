"""The providers' own search tools (native search) through the official SDKs and the real loop, against
loopback servers that answer as the Responses, Gemini and Anthropic APIs do: the search tool each
request declares, the searches recorded as tool_calls rows (queries, sources, statuses of failed
searches), what is re-sent, and the tokens as each provider reports them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from servers import native_episode
from servers.anthropic_server import (
    AnthropicServer, cited_text, server_tool_use, text, tool_use, web_search_error, web_search_result,
)
from servers.anthropic_server import message as a_message
from servers.gemini_server import GeminiServer, function_call as g_call, grounding
from servers.gemini_server import response as g_response
from servers.gemini_server import text as g_text
from servers.loop_driver import Waits, all_text
from servers.responses_server import (
    ResponsesServer, cited_message, function_call, message, reasoning, response, web_search_call,
)
from servers.sdk_env import FAKE_KEY, isolate

from agenthop.harness.backends.anthropic import AnthropicBackend
from agenthop.harness.backends.base import ModelResponse, ProviderCall, ToolCall
from agenthop.harness.backends.google import GoogleBackend
from agenthop.harness.backends.openai import OpenAIBackend
from agenthop.harness.backends.responses import ResponsesBackend
from agenthop.harness.backends.scripted import ScriptedBackend
from agenthop.harness.backends.sim import SimBackend
from agenthop.harness.errors import AgentHopError
from agenthop.harness.loop import Caps, LoopConfig, run_attempt
from agenthop.harness.provider_calls import provider_call_rows

U1, U2, U3 = "https://exo.example/kepler-186f", "https://nasa.example/habitable", "https://arxiv.example/1404.0001"
Q1, Q2, Q3 = "first Earth-size planet habitable zone", "Kepler-186f discovery 2014", "Kepler-186f radius"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch)


def _calls(result: Any) -> list[tuple[Any, ...]]:
    return [(c["turn"], c["call_index"], c["seq"], c["tool"], json.loads(c["args_json"]), c["search_query"],
             c["paper_id"], c["cost"], c["status"], c["error_type"], c["output_chars"]) for c in result.tool_calls]


def _turns(result: Any) -> list[tuple[Any, ...]]:
    return [(t["turn"], t["n_tool_calls"], t["prompt_tokens"], t["completion_tokens"], t["cache_read_tokens"],
             t["cache_creation_tokens"]) for t in result.turns]


def _served(server: Any, backend_for: Any) -> tuple[Any, list[Any]]:
    with server as srv:
        (result,) = native_episode.run_native(backend_for(srv.base_url), Waits())
        requests, refused = srv.requests, srv.refused
    assert refused == []
    dump = all_text([result])
    assert FAKE_KEY not in dump and f"127.0.0.1:{srv.port}" not in dump and srv.base_url not in dump
    return result, requests


# -- OpenAI Responses: the web_search tool, web_search_call items -------------------------------------

def test_responses_native_search_through_the_loop() -> None:
    replies = [
        response([reasoning("rs_1", ["Search first."], "ENC-1"),
                  web_search_call("ws_1", Q1, sources=[U1, U2]),
                  web_search_call("ws_2", [Q2, Q3], sources=[U3]),
                  web_search_call("ws_3", action={"type": "open_page", "url": U1}),
                  web_search_call("ws_4", "kepler 186f mass", status="failed"),
                  cited_message("msg_1", "It is Kepler-186f.", [(U1, "Kepler-186f")])],
                 input_tokens=5200, output_tokens=400, cached=1000, reasoning_tokens=120),
        response([web_search_call("ws_5", action={"type": "find_in_page", "url": U3, "pattern": "radius"}),
                  function_call("fc_1", "call_1", "final_answer", {"answer": "Kepler-186f"})],
                 input_tokens=6100, output_tokens=30, cached=5000),
    ]
    result, reqs = _served(ResponsesServer(replies), lambda url: ResponsesBackend("gpt-5.4", base_url=url,
                                                                                   api_key=FAKE_KEY))
    t = result.trajectory
    assert (t["terminated_by"], t["is_correct"], t["total_turns"], t["tool_errors"], t["budget_used"]) == (
        "answer", True, 2, 1, 0)
    assert _calls(result) == [
        (0, 0, 0, "web_search", {"query": Q1, "sources": [U1, U2]}, Q1, None, 0, "ok", None, 0),
        (0, 1, 1, "web_search", {"query": Q2, "sources": [U3]}, Q2, None, 0, "ok", None, 0),
        (0, 2, 2, "web_search", {"query": Q3, "sources": [U3]}, Q3, None, 0, "ok", None, 0),
        (0, 3, 3, "open_page", {"url": U1}, None, U1, 0, "ok", None, 0),
        (0, 4, 4, "web_search", {"query": "kepler 186f mass"}, "kepler 186f mass", None, 0, "tool_error",
         "failed", 0),
        (1, 0, 5, "find_in_page", {"url": U3, "pattern": "radius"}, None, U3, 0, "ok", None, 0),
        (1, 1, 6, "final_answer", {"answer": "Kepler-186f"}, None, None, 0, "ok", None, len("recorded")),
    ]
    # tokens as Responses reports them: input_tokens includes the cached ones, output the reasoning
    assert _turns(result) == [(0, 5, 4200, 400, 1000, 0), (1, 2, 1100, 30, 5000, 0)]
    assert t["total_prompt_tokens"] == 5300 and t["total_tokens"] == 5300 + 430

    first, second = reqs[0].body, reqs[1].body
    assert first["tools"][-1] == {"type": "web_search"} and first["tools"][0]["name"] == "final_answer"
    assert first["include"] == ["reasoning.encrypted_content", "web_search_call.action.sources"]
    # the output items go back as returned (the server refuses an altered web_search_call), then the nudge
    resent = [i.get("type") or i.get("role") for i in second["input"]]
    assert resent == ["user", "reasoning", "web_search_call", "web_search_call", "web_search_call",
                      "web_search_call", "message", "user"]
    assert second["input"][6]["content"][0]["annotations"][0]["url"] == U1
    assert second["input"][-1]["content"].startswith(native_episode.NUDGE)


def test_responses_without_native_search_declares_no_search_tool() -> None:
    with ResponsesServer([response([message("m", "hi")])]) as srv:
        backend = ResponsesBackend("gpt-5.4", base_url=srv.base_url, api_key=FAKE_KEY)

        async def one() -> Any:
            try:
                return await backend.start(native_episode.context(native_search=False)).complete()
            finally:
                await backend.aclose()

        import asyncio

        r = asyncio.run(one())
        body = srv.requests[0].body
    assert r.provider_calls == []
    assert [t["type"] for t in body["tools"]] == ["function"] and body["include"] == ["reasoning.encrypted_content"]


# -- Gemini: Google Search grounding ------------------------------------------------------------------

def test_gemini_google_search_grounding_through_the_loop() -> None:
    answer = "It is Kepler-186f."
    replies = [
        g_response([g_text(answer, signature="U0lH")], prompt=800, candidates=60, thoughts=40, tool_prompt=2300,
                   cached=300, grounding_metadata=grounding([Q1, Q2], [(U1, "exo.example"), (U2, "nasa.example")],
                                                           answer)),
        g_response([g_call("final_answer", {"answer": "Kepler-186f"}, signature="U0lHMg==")], prompt=1000,
                   candidates=12),
    ]
    result, reqs = _served(GeminiServer(replies), lambda url: GoogleBackend("gemini-3-pro-preview", base_url=url,
                                                                             api_key=FAKE_KEY))
    t = result.trajectory
    assert (t["terminated_by"], t["is_correct"], t["total_turns"], t["tool_errors"]) == ("answer", True, 2, 0)
    assert _calls(result) == [
        (0, 0, 0, "web_search", {"query": Q1, "sources": [U1, U2]}, Q1, None, 0, "ok", None, 0),
        (0, 1, 1, "web_search", {"query": Q2}, Q2, None, 0, "ok", None, 0),
        (1, 0, 2, "final_answer", {"answer": "Kepler-186f"}, None, None, 0, "ok", None, len("recorded")),
    ]
    # prompt = promptTokenCount - cached + toolUsePromptTokenCount (the grounding's search results)
    assert _turns(result) == [(0, 2, 800 - 300 + 2300, 100, 300, 0), (1, 1, 1000, 12, 0, 0)]
    first, second = reqs[0].body, reqs[1].body
    tools = {key: value for tool in first["tools"] for key, value in tool.items()}
    assert len(first["tools"]) == 2 and tools["googleSearch"] == {}
    assert [d["name"] for d in tools["functionDeclarations"]] == ["final_answer"]
    # the model turn is re-sent as returned (its signature on its part); grounding is not part of it
    model_turn = second["contents"][1]
    assert model_turn == {"role": "model", "parts": [{"text": answer, "thoughtSignature": "U0lH"}]}


# -- Anthropic: the web_search_20250305 server tool ---------------------------------------------------

def _anthropic(url: str) -> AnthropicBackend:
    return AnthropicBackend("claude-sonnet-4-6", base_url=url, api_key=FAKE_KEY)


def test_anthropic_web_search_server_tool_through_the_loop() -> None:
    replies = [
        a_message([text("I'll search."), server_tool_use("srvtoolu_1", Q1),
                   web_search_result("srvtoolu_1", [(U1, "Kepler-186f"), (U2, "Habitable zone")]),
                   server_tool_use("srvtoolu_2", Q2), web_search_error("srvtoolu_2", "too_many_requests"),
                   cited_text("It is Kepler-186f.", U1, "Kepler-186f", "EIDX-1")],
                  input_tokens=9000, output_tokens=350, cache_read=0, cache_creation=1200),
        a_message([tool_use("toolu_1", "final_answer", {"answer": "Kepler-186f"})],
                  input_tokens=400, output_tokens=20, cache_read=10_000, cache_creation=0),
    ]
    result, reqs = _served(AnthropicServer(replies), _anthropic)
    t = result.trajectory
    assert (t["terminated_by"], t["is_correct"], t["total_turns"], t["tool_errors"]) == ("answer", True, 2, 1)
    assert _calls(result) == [
        (0, 0, 0, "web_search", {"query": Q1, "sources": [U1, U2]}, Q1, None, 0, "ok", None, 0),
        (0, 1, 1, "web_search", {"query": Q2}, Q2, None, 0, "tool_error", "too_many_requests", 0),
        (1, 0, 2, "final_answer", {"answer": "Kepler-186f"}, None, None, 0, "ok", None, len("recorded")),
    ]
    # tokens as the Messages API reports them (input_tokens already without the cache)
    assert _turns(result) == [(0, 2, 9000, 350, 0, 1200), (1, 1, 400, 20, 10_000, 0)]
    first, second = reqs[0].body, reqs[1].body
    assert first["tools"][0]["name"] == "final_answer"
    assert first["tools"][1] == {"type": "web_search_20250305", "name": "web_search", "cache_control": {"type": "ephemeral"}}
    # the server blocks go back as returned (results with their encrypted content, citations with their index)
    assistant = second["messages"][1]
    assert assistant["role"] == "assistant"
    assert [b["type"] for b in assistant["content"]] == ["text", "server_tool_use", "web_search_tool_result",
                                                         "server_tool_use", "web_search_tool_result", "text"]
    assert assistant["content"][1] == server_tool_use("srvtoolu_1", Q1)
    assert assistant["content"][2] == web_search_result("srvtoolu_1", [(U1, "Kepler-186f"), (U2, "Habitable zone")])
    assert assistant["content"][4] == web_search_error("srvtoolu_2", "too_many_requests")
    assert assistant["content"][5]["citations"][0]["encrypted_index"] == "EIDX-1"
    assert second["messages"][2]["content"][-1]["text"].startswith(native_episode.NUDGE)


def test_anthropic_pause_turn_is_continued_within_the_turn() -> None:
    replies = [
        a_message([server_tool_use("srvtoolu_1", Q1), web_search_result("srvtoolu_1", [(U1, "K")]),
                   server_tool_use("srvtoolu_2", Q2)], input_tokens=3000, output_tokens=100, stop_reason="pause_turn"),
        a_message([web_search_result("srvtoolu_2", [(U3, "R")]),
                   tool_use("toolu_1", "final_answer", {"answer": "Kepler-186f"})], input_tokens=3500, output_tokens=50),
    ]
    result, reqs = _served(AnthropicServer(replies), _anthropic)
    assert len(reqs) == 2
    # the continuation re-sends the paused content as the assistant turn, and nothing after it
    cont = reqs[1].body["messages"]
    assert [m["role"] for m in cont] == ["user", "assistant"]
    assert [b["type"] for b in cont[1]["content"]] == ["server_tool_use", "web_search_tool_result", "server_tool_use"]
    # one turn for the loop: both searches (the second answered in the continuation), tokens summed
    assert _calls(result) == [
        (0, 0, 0, "web_search", {"query": Q1, "sources": [U1]}, Q1, None, 0, "ok", None, 0),
        (0, 1, 1, "web_search", {"query": Q2, "sources": [U3]}, Q2, None, 0, "ok", None, 0),
        (0, 2, 2, "final_answer", {"answer": "Kepler-186f"}, None, None, 0, "ok", None, len("recorded")),
    ]
    assert _turns(result) == [(0, 3, 6500, 150, 0, 0)]
    assert result.trajectory["terminated_by"] == "answer"


# -- backends without a search tool of their own -------------------------------------------------------

def test_backends_without_native_search_refuse_it_at_start() -> None:
    ctx = native_episode.context()
    backends = [OpenAIBackend("gpt-4.1", base_url="http://127.0.0.1:9/v1", api_key=FAKE_KEY),
                ScriptedBackend([]),
                SimBackend.__new__(SimBackend)]
    for backend, name in zip(backends, ("openai", "scripted", "sim")):
        with pytest.raises(AgentHopError, match=f"backend '{name}' has no native search.*responses, google, anthropic"):
            backend.start(ctx)


# -- the loop's recording rules, with a conversation that plays given responses -------------------------

class _Played:
    def __init__(self, responses: list[ModelResponse]) -> None:
        self.responses = list(responses)

    async def complete(self) -> ModelResponse:
        return self.responses.pop(0)

    def add_assistant(self, response: ModelResponse) -> None: ...

    def add_tool_results(self, results: list[tuple[ToolCall, str]]) -> None: ...

    def add_user(self, text: str) -> None: ...

    def transcript(self) -> list[dict[str, Any]]:
        return []


def _attempt(responses: list[ModelResponse], caps: Caps) -> Any:
    import asyncio

    episode = native_episode.NativeSearchEpisode(native_episode.context())
    cfg = LoopConfig(caps=caps, sleep=Waits(), max_attempts=1)
    return episode, asyncio.run(run_attempt(episode, _Played(responses), cfg, 0))


def test_provider_calls_past_the_token_cap_stay_recorded_as_run() -> None:
    search = ProviderCall("web_search", {"query": Q1}, "ok")
    answer = ToolCall("c1", "final_answer", {"answer": "Kepler-186f"})
    episode, res = _attempt([ModelResponse("", [answer], 900, 200, provider_calls=[search])],
                            Caps(max_total_tokens=1000))
    assert res.trajectory["terminated_by"] == "token_limit" and episode.executed == []
    assert [(c["call_index"], c["tool"], c["status"]) for c in res.tool_calls] == [
        (0, "web_search", "ok"), (1, "final_answer", "not_executed")]
    assert res.turns[0]["n_tool_calls"] == 2


def test_provider_call_rows_map_unknown_statuses_and_keep_the_budget() -> None:
    from agenthop.harness.loop import _call_row

    calls = [ProviderCall("web_search", {"query": "q"}, "searching"), ProviderCall("open_page", {"url": U1}, "ok",
                                                                                  result_chars=-5)]
    rows = provider_call_rows(calls, _call_row, "s", 0, 3, 7, lambda name, args: {"search_query": args.get("query")}, 12)
    assert [(r["turn"], r["call_index"], r["seq"], r["status"], r["error_type"], r["cost"], r["budget_after"],
             r["output_chars"], r["search_query"]) for r in rows] == [
        (3, 0, 7, "tool_error", "searching", 0, 12, 0, "q"), (3, 1, 8, "ok", None, 0, 12, 0, None)]
    assert provider_call_rows([], _call_row, "s", 0, 0, 0, lambda n, a: {}, 0) == []
