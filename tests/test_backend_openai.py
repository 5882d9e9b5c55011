"""OpenAI-compatible backend against a real loopback chat-completions server, through the
official SDK: request shapes, parsing, token accounting, error classification, redaction."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from servers import tiny_sample
from servers.openai_server import OpenAIServer, completion, error, tool_call
from servers.loop_driver import Waits, all_text, run, run_loop, three_turns
from servers.scripted_http import Reply
from servers.sdk_env import FAKE_KEY, isolate

from agenthop.harness.backends.base import (
    BackendError,
    ModelResponse,
    SampleContext,
    ToolSpec,
    TransientBackendError,
)
from agenthop.harness.backends.openai import OpenAIBackend, uses_max_completion_tokens
from agenthop.harness.errors import AgentHopError

TOOLS = [
    ToolSpec("read_section", "Read a section.", {"type": "object", "properties": {
        "paper_id": {"type": "string"}, "section": {"type": "string"}}, "required": ["paper_id", "section"]}),
    ToolSpec("submit_answer", "Submit.", {"type": "object", "properties": {
        "answer": {"type": "string", "enum": ["A", "B", "C", "D"]}, "reasoning": {"type": "string"}},
        "required": ["answer", "reasoning"]}),
]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch)


def ctx() -> SampleContext:
    return SampleContext(item=tiny_sample.item(), system_prompt="SYS", user_prompt="QUESTION", tools=TOOLS,
                         condition="full")


# --------------------------------------------------------------------------------------------
# conversation level


def test_request_shape_parsing_and_history() -> None:
    replies = [
        completion(content="Let me read.", reasoning_content="gold is G",
                   tool_calls=[tool_call("c1", "read_section", {"paper_id": "p_gold", "section": "Results"}),
                               tool_call("c2", "read_section", '{"paper_id": "p_gold", "section": ')],
                   prompt_tokens=1000, completion_tokens=50, cached_tokens=600),
        completion(content="I think C.", reasoning_content="74.5-61.0=13.5", prompt_tokens=1500,
                   completion_tokens=20, deepseek_cache_hit=1200),
        completion(tool_calls=[tool_call("c3", "submit_answer", {"answer": "C", "reasoning": "13.5"})],
                   prompt_tokens=1600, completion_tokens=10),
    ]
    backend = OpenAIBackend("test-model", api_key=FAKE_KEY, sampling={"temperature": 0.7, "top_k": 20})

    async def scenario(srv: OpenAIServer) -> list[ModelResponse]:
        backend_ = OpenAIBackend("test-model", base_url=srv.base_url, api_key=FAKE_KEY,
                                 sampling={"temperature": 0.7, "top_k": 20})
        conv = backend_.start(ctx())
        r1, r2, r3 = await three_turns(
            conv, ["RESULT TEXT\nTurn: 1  |  Tokens used: 1,050  |  Budget used: 10",
                   "ERR\nTurn: 1  |  Tokens used: 1,050  |  Budget used: 10"],
            "Please use the available tools to investigate, or call submit_answer if you're ready.")
        conv.add_assistant(r3)
        await backend_.aclose()
        return [r1, r2, r3, conv.transcript()]  # type: ignore[list-item]

    with OpenAIServer(replies) as srv:
        r1, r2, r3, transcript = run(scenario(srv))
        bodies = srv.bodies
        assert srv.requests[0].path == "/v1/chat/completions"
        assert srv.requests[0].headers["authorization"] == f"Bearer {FAKE_KEY}"
        assert srv.requests[0].headers["x-stainless-retry-count"] == "0"
    assert repr(backend) == "OpenAIBackend(model='test-model', sampling={'temperature': 0.7, 'top_k': 20})"

    # parsing: merged reasoning text, tool calls, malformed arguments, usage with cache
    assert r1.text == "[thinking] gold is G\n[answer] Let me read."
    assert [(c.id, c.name, c.args) for c in r1.tool_calls] == [
        ("c1", "read_section", {"paper_id": "p_gold", "section": "Results"}),
        ("c2", "read_section", {"_raw": '{"paper_id": "p_gold", "section": '}),
    ]
    assert (r1.prompt_tokens, r1.completion_tokens, r1.cache_read_tokens, r1.cache_creation_tokens) == (400, 50, 600, 0)
    assert (r2.prompt_tokens, r2.cache_read_tokens) == (300, 1200)  # DeepSeek prompt_cache_hit_tokens
    assert (r3.prompt_tokens, r3.cache_read_tokens, r3.text) == (1600, 0, "")
    assert r3.tool_calls[0].args == {"answer": "C", "reasoning": "13.5"}

    # request 1: tools in function form, no tool_choice/parallel_tool_calls, sampling as set
    b0 = bodies[0]
    assert b0["model"] == "test-model"
    assert b0["messages"] == [{"role": "system", "content": "SYS"}, {"role": "user", "content": "QUESTION"}]
    assert b0["tools"][0] == {"type": "function", "function": {
        "name": "read_section", "description": "Read a section.", "parameters": TOOLS[0].parameters}}
    assert [t["function"]["name"] for t in b0["tools"]] == ["read_section", "submit_answer"]
    assert "tool_choice" not in b0 and "parallel_tool_calls" not in b0
    assert (b0["temperature"], b0["top_k"], b0["max_tokens"]) == (0.7, 20, 16384)
    assert "top_p" not in b0 and "reasoning_effort" not in b0 and "max_completion_tokens" not in b0

    # request 2: assistant message rebuilt with reasoning_content, one tool message per result, advisory
    m = bodies[1]["messages"]
    assert m[2] == {"role": "assistant", "content": "Let me read.", "reasoning_content": "gold is G", "tool_calls": [
        {"id": "c1", "type": "function", "function": {
            "name": "read_section", "arguments": '{"paper_id": "p_gold", "section": "Results"}'}},
        {"id": "c2", "type": "function", "function": {
            "name": "read_section", "arguments": json.dumps({"_raw": '{"paper_id": "p_gold", "section": '})}},
    ]}
    assert m[3] == {"role": "tool", "tool_call_id": "c1",
                    "content": "RESULT TEXT\nTurn: 1  |  Tokens used: 1,050  |  Budget used: 10"}
    assert m[4]["role"] == "tool" and m[4]["tool_call_id"] == "c2"
    advisory = "Budget exhausted. You MUST call submit_answer now with your best guess."
    assert m[5] == {"role": "user", "content": advisory}
    assert len(m) == 6

    # request 3: the nudge turn re-sends the answer only; reasoning stays out of visible content
    # (docs/backends.md#deliberate-differences-from-the-reference-harness)
    m = bodies[2]["messages"]
    assert m[6] == {"role": "assistant", "content": "I think C.", "reasoning_content": "74.5-61.0=13.5"}
    assert "[thinking]" not in json.dumps(bodies[2]["messages"])
    assert m[7]["role"] == "user" and m[7]["content"].startswith("Please use the available tools")

    # the transcript records the merged text and the tool rows with name and id
    assert [(t["role"], t["name"], t["tool_call_id"]) for t in transcript] == [
        ("system", None, None), ("user", None, None), ("assistant", None, None), ("tool", "read_section", "c1"),
        ("tool", "read_section", "c2"), ("user", None, None), ("assistant", None, None), ("user", None, None),
        ("assistant", None, None)]
    assert transcript[6]["content"] == "[thinking] 74.5-61.0=13.5\n[answer] I think C."


@pytest.mark.parametrize("model,expected", [
    ("gpt-5", True), ("gpt-5.1", True), ("gpt-5-mini", True), ("o1", True), ("o3-mini", True),
    ("o4-mini", True), ("openai/gpt-5", True), ("gpt-4o", False), ("deepseek-chat", False),
    ("Qwen/Qwen3-8B", False), ("omni-model", False),
])
def test_max_completion_tokens_models(model: str, expected: bool) -> None:
    assert uses_max_completion_tokens(model) is expected


def test_reasoning_models_get_max_completion_tokens_and_effort() -> None:
    with OpenAIServer([completion(content="x")]) as srv:
        b = OpenAIBackend("o3-mini", base_url=srv.base_url, api_key=FAKE_KEY,
                          sampling={"max_tokens": 3000, "reasoning_effort": "high", "top_p": None})
        run(b.start(ctx()).complete(), b)
        body = srv.bodies[0]
    assert body["max_completion_tokens"] == 3000 and body["reasoning_effort"] == "high"
    assert "max_tokens" not in body and "top_p" not in body and "temperature" not in body


def test_missing_usage_and_missing_call_ids() -> None:
    body = completion(tool_calls=[tool_call("", "submit_answer", {"answer": "A", "reasoning": "r"})]).body
    del body["usage"]
    with OpenAIServer([Reply(200, body), completion(content="ok")]) as srv:
        b = OpenAIBackend("m", base_url=srv.base_url, api_key=FAKE_KEY)

        async def go() -> ModelResponse:
            conv = b.start(ctx())
            r = await conv.complete()
            conv.add_assistant(r)
            conv.add_tool_results([(r.tool_calls[0], "done")])
            await conv.complete()
            return r

        r = run(go(), b)
        sent = srv.bodies[1]["messages"]
    assert (r.prompt_tokens, r.completion_tokens, r.cache_read_tokens) == (0, 0, 0)
    # the synthetic id is declared by the re-sent assistant message and used by the tool message
    assert r.tool_calls[0].id == "call_0_0"
    assert sent[2]["tool_calls"][0]["id"] == "call_0_0" and sent[3]["tool_call_id"] == "call_0_0"


# --------------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize("status,transient", [
    (429, True), (500, True), (502, True), (503, True), (529, True), (408, True),
    (400, False), (401, False), (403, False), (404, False), (422, False),
])
def test_status_classification(status: int, transient: bool) -> None:
    # the message deliberately contains "rate" and "500", which fooled the reference's substring test
    with OpenAIServer([error(status, "cannot generate: separate 500 tokens")]) as srv:
        b = OpenAIBackend("m", base_url=srv.base_url, api_key=FAKE_KEY)
        with pytest.raises(BackendError) as info:
            run(b.start(ctx()).complete(), b)
        assert len(srv.requests) == 1  # SDK retries are off
    assert isinstance(info.value, TransientBackendError) is transient
    assert f"HTTP {status}" in str(info.value) and "cannot generate" in str(info.value)


def test_connection_refused_and_timeout_are_transient() -> None:
    with OpenAIServer() as srv:
        dead_url = srv.base_url
    b = OpenAIBackend("m", base_url=dead_url, api_key=FAKE_KEY)
    with pytest.raises(TransientBackendError) as info:
        run(b.start(ctx()).complete(), b)
    assert str(info.value).startswith("APIConnectionError")
    assert info.value.__cause__ is None and info.value.__suppress_context__

    with OpenAIServer([Reply(200, completion(content="late").body, delay_s=2.0)]) as srv:
        b = OpenAIBackend("m", base_url=srv.base_url, api_key=FAKE_KEY, timeout_s=0.2)
        with pytest.raises(TransientBackendError) as info:
            run(b.start(ctx()).complete(), b)
    assert str(info.value).startswith("APITimeoutError")


def test_malformed_response_is_a_backend_error() -> None:
    with OpenAIServer([Reply(200, {"id": "x", "object": "chat.completion", "choices": []})]) as srv:
        b = OpenAIBackend("m", base_url=srv.base_url, api_key=FAKE_KEY)
        with pytest.raises(BackendError) as info:
            run(b.start(ctx()).complete(), b)
    assert not isinstance(info.value, TransientBackendError)
    assert "no choices" in str(info.value)


def test_key_and_endpoint_are_redacted_from_errors() -> None:
    with OpenAIServer() as srv:
        url = srv.base_url
        srv.push(error(401, f"Incorrect API key provided: {FAKE_KEY} for {url}/chat/completions",
                       "invalid_request_error"))
        b = OpenAIBackend("m", base_url=url, api_key=FAKE_KEY)
        with pytest.raises(BackendError) as info:
            run(b.start(ctx()).complete(), b)
    msg = str(info.value)
    assert FAKE_KEY not in msg and f"127.0.0.1:{srv.port}" not in msg
    assert msg == ("AuthenticationError: HTTP 401: Incorrect API key provided: [redacted] for "
                   "[redacted]/chat/completions")
    assert FAKE_KEY not in repr(b) and FAKE_KEY not in json.dumps(b.config())
    assert f"127.0.0.1:{srv.port}" not in json.dumps(b.config())


def test_configuration_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(AgentHopError, match="OPENAI_API_KEY"):
        OpenAIBackend("gpt-4o")
    with pytest.raises(AgentHopError, match="temprature"):
        OpenAIBackend("m", api_key=FAKE_KEY, sampling={"temprature": 0.5})
    with pytest.raises(AgentHopError, match="max_tokens must be a positive integer"):
        OpenAIBackend("m", api_key=FAKE_KEY, sampling={"max_tokens": "many"})
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    assert OpenAIBackend("gpt-4o")._api_key == FAKE_KEY
    # a server given by base URL without a key gets the conventional placeholder, never OPENAI_API_KEY
    # (which would hand the OpenAI key to a third-party endpoint)
    with OpenAIServer([completion(content="hi")]) as srv:
        b = OpenAIBackend("local", base_url=srv.base_url)
        run(b.start(ctx()).complete(), b)
        assert srv.requests[0].headers["authorization"] == "Bearer EMPTY"
    # the SDK's endpoint variable is refused, not followed (it would redirect the key)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(AgentHopError, match="OPENAI_BASE_URL is set"):
        OpenAIBackend("m")


def test_client_is_rebuilt_per_event_loop() -> None:
    first = completion(content="a")
    first.headers["Connection"] = "close"  # the unclosed first client keeps no socket open
    with OpenAIServer([first, completion(content="b")]) as srv:
        b = OpenAIBackend("m", base_url=srv.base_url, api_key=FAKE_KEY)

        async def call() -> tuple[str, int]:
            text = (await b.start(ctx()).complete()).text
            return text, id(b._client.get())

        text_a, client_a = asyncio.run(call())  # the loop ends without aclose()
        text_b, client_b = run(call(), b)  # a second asyncio.run gets a fresh client
    assert (text_a, text_b) == ("a", "b") and client_a != client_b


# --------------------------------------------------------------------------------------------
# whole trajectories through the real loop


def test_trajectory_through_the_loop() -> None:
    replies = [
        # turn 0: two parallel calls
        completion(content=None, tool_calls=[
            tool_call("c1", "list_sections", {"paper_id": "p_gold"}),
            tool_call("c2", "read_section", {"paper_id": "p_gold", "section": "Results"})],
            prompt_tokens=1000, completion_tokens=40),
        # turn 1: rate limited once (the server asks for 250 ms), then a text-only answer (nudged)
        Reply(429, error(429, "Rate limit reached").body, {"retry-after-ms": "250", "retry-after": "1"}),
        completion(content="The gain is 13.5 points.", reasoning_content="74.5 - 61.0", prompt_tokens=1500,
                   completion_tokens=30, cached_tokens=1000),
        # turn 2: submit
        completion(tool_calls=[tool_call("c3", "submit_answer", {"answer": "C", "reasoning": "74.5-61.0"})],
                   prompt_tokens=1700, completion_tokens=20, cached_tokens=1400),
    ]
    waits = Waits()
    with OpenAIServer(replies) as srv:
        backend = OpenAIBackend("test-model", base_url=srv.base_url, api_key=FAKE_KEY)
        results = run_loop(backend, waits)
        bodies, port = srv.bodies, srv.port
    assert len(results) == 1 and len(bodies) == 4
    r = results[0]
    t = r.trajectory
    assert (t["terminated_by"], t["predicted_answer"], t["predicted_index"], t["is_correct"]) == (
        "answer", "C", 2, True)
    assert (t["total_turns"], t["budget_used"], t["transient_retry_count"], t["api_error_count"]) == (3, 6, 1, 0)
    # regular input = prompt - cached; the cap quantity excludes cache reads
    assert (t["total_prompt_tokens"], t["total_completion_tokens"], t["cache_read_tokens"],
            t["cache_creation_tokens"], t["total_tokens"]) == (1800, 90, 2400, 0, 1890)
    assert t["reasoning"] == "74.5-61.0"
    assert [(x["turn"], x["role"], x["n_tool_calls"], x["prompt_tokens"], x["completion_tokens"],
             x["cache_read_tokens"], x["cumulative_tokens"], x["budget_after"]) for x in r.turns] == [
        (0, "assistant", 2, 1000, 40, 0, 1040, 24),
        (1, "assistant", 0, 500, 30, 1000, 1570, 24),
        (2, "assistant", 1, 300, 20, 1400, 1890, 24),
    ]
    assert [(c["turn"], c["tool"], c["status"], c["cost"]) for c in r.tool_calls] == [
        (0, "list_sections", "ok", 1), (0, "read_section", "ok", 5), (2, "submit_answer", "ok", 0)]
    assert r.turns[1]["content_chars"] == len("[thinking] 74.5 - 61.0\n[answer] The gain is 13.5 points.")
    assert waits.asked == [0.25]  # one transient backoff as the server asked, no turn used
    assert t["wait_s"] == pytest.approx(0.25, abs=0.2)

    # the 429'd request is re-sent unchanged; tool messages carry the footer of turn 1
    assert bodies[1] == bodies[2]
    tool_msgs = [m for m in bodies[2]["messages"] if m["role"] == "tool"]
    footer = "\nTurn: 1  |  Tokens used: 1,040  |  Budget used: 6"
    assert [m["tool_call_id"] for m in tool_msgs] == ["c1", "c2"]
    assert tool_msgs[0]["content"].startswith("Sections for paper 'p_gold' (2 sections):")
    assert tool_msgs[1]["content"] == f"=== Results ===\n\n{tiny_sample.RESULTS_TEXT}{footer}"
    assert tool_msgs[0]["content"].endswith(footer)
    last = bodies[3]["messages"]
    assert last[-2] == {"role": "assistant", "content": "The gain is 13.5 points.", "reasoning_content": "74.5 - 61.0"}
    assert last[-1] == {"role": "user", "content": "Please use the available tools to investigate, or call "
                        "submit_answer if you're ready.\nTurn: 2  |  Tokens used: 1,570  |  Budget used: 6"}
    assert [m["function"]["name"] for m in bodies[0]["tools"]] == [
        "get_paper_info", "get_references", "search_papers", "list_sections", "read_section", "think",
        "submit_answer"]

    # the transcript is recorded; nothing anywhere names the key or the endpoint
    assert [m["role"] for m in r.messages] == ["system", "user", "assistant", "tool", "tool", "assistant", "user",
                                               "assistant", "tool"]
    dump = all_text(results)
    assert FAKE_KEY not in dump and f"127.0.0.1:{port}" not in dump and "SECRET" not in dump


def test_non_transient_error_uses_a_turn() -> None:
    replies = [
        error(400, "context length exceeded", "invalid_request_error"),
        completion(tool_calls=[tool_call("c1", "submit_answer", {"answer": "B", "reasoning": "guess"})],
                   prompt_tokens=900, completion_tokens=10),
    ]
    waits = Waits()
    with OpenAIServer(replies) as srv:
        results = run_loop(OpenAIBackend("test-model", base_url=srv.base_url, api_key=FAKE_KEY), waits)
    t = results[0].trajectory
    assert (t["terminated_by"], t["is_correct"], t["total_turns"], t["api_error_count"],
            t["transient_retry_count"]) == ("answer", False, 2, 1, 0)
    assert [x["role"] for x in results[0].turns] == ["error", "assistant"]
    assert waits.asked == [2.0]


def test_repeated_server_errors_end_the_attempt_as_error_and_the_sample_is_retried() -> None:
    replies = [error(500, "boom")] * 11 + [
        completion(tool_calls=[tool_call("c1", "submit_answer", {"answer": "C", "reasoning": "r"})],
                   prompt_tokens=800, completion_tokens=12)]
    waits = Waits()
    with OpenAIServer(replies) as srv:
        results = run_loop(OpenAIBackend("test-model", base_url=srv.base_url, api_key=FAKE_KEY), waits)
        assert len(srv.requests) == 12  # no SDK-internal retries on top of the loop's
        port = srv.port
    first, second = (r.trajectory for r in results)
    assert (first["attempt"], first["is_final"], first["terminated_by"], first["transient_retry_count"],
            first["total_turns"], first["total_tokens"]) == (0, False, "error", 11, 1, 0)
    assert [x["role"] for x in results[0].turns] == ["error"]
    assert (second["attempt"], second["is_final"], second["terminated_by"], second["is_correct"],
            second["total_tokens"]) == (1, True, "answer", True, 812)
    backoffs = waits.asked[:10]  # no server hint: full jitter, bound 1, 2, 4, ... s
    assert all(0 <= w <= min(60.0, 2.0 ** k) for k, w in enumerate(backoffs)) and waits.asked[10:] == [30.0]
    dump = all_text(results)
    assert FAKE_KEY not in dump and f"127.0.0.1:{port}" not in dump


def test_reference_gaps_non_object_arguments_and_deepseek_cache_count() -> None:
    """Two differences the side-by-side run with the reference harness showed, pinned to its counts
    and texts: valid JSON arguments that are not an object reach the tool as they are (Python's own
    subscript error), and ``cached_tokens: 0`` with DeepSeek's ``prompt_cache_hit_tokens: N`` counts
    N cached, because the reference falls back to the DeepSeek field whenever the first is 0."""
    replies = [
        completion(tool_calls=[tool_call("c1", "get_paper_info", '["p_gold"]')], prompt_tokens=6124,
                   completion_tokens=30, cached_tokens=0, deepseek_cache_hit=2496),
        completion(tool_calls=[tool_call("c2", "submit_answer", {"answer": "C", "reasoning": "r"})],
                   prompt_tokens=6300, completion_tokens=10, cached_tokens=6000, deepseek_cache_hit=100),
    ]
    with OpenAIServer(replies) as srv:
        results = run_loop(OpenAIBackend("deepseek-chat", base_url=srv.base_url, api_key=FAKE_KEY), Waits())
        bodies = srv.bodies
    r = results[0]
    assert [(x["prompt_tokens"], x["cache_read_tokens"]) for x in r.turns] == [(3628, 2496), (300, 6000)]
    first = r.tool_calls[0]
    assert (first["status"], first["cost"], first["args_json"]) == ("invalid_args", 1, '["p_gold"]')
    tool_msg = next(m for m in bodies[1]["messages"] if m["role"] == "tool")
    assert tool_msg["content"].startswith("Error calling get_paper_info: Missing or invalid parameter \u2014 "
                                          "list indices must be integers or slices, not str\nTurn: 1")
    # the arguments are re-sent exactly as the model wrote them
    assert bodies[1]["messages"][2]["tool_calls"][0]["function"]["arguments"] == '["p_gold"]'
