"""Anthropic backend against a real loopback Messages API server, through the official SDK:
request shapes (system/tools/cache_control, thinking replay, tool_result messages, merged user
messages), token accounting with cache reads and writes, error classification, redaction."""

from __future__ import annotations

import json
from typing import Any

import pytest
from servers import tiny_sample
from servers.anthropic_server import AnthropicServer, error, message, text, thinking, tool_use
from servers.loop_driver import Waits, all_text, run, run_loop
from servers.scripted_http import Reply
from servers.sdk_env import FAKE_KEY, isolate

from agenthop.harness.backends.anthropic import AnthropicBackend, thinking_budget
from agenthop.harness.backends.base import BackendError, SampleContext, ToolSpec, TransientBackendError
from agenthop.harness.errors import AgentHopError

EPHEMERAL = {"type": "ephemeral"}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch)


# --------------------------------------------------------------------------------------------
# configuration


@pytest.mark.parametrize("effort,budget", [("low", 4096), ("medium", 8192), ("HIGH", 16384), ("2048", 2048)])
def test_thinking_budgets(effort: str, budget: int) -> None:
    assert thinking_budget(effort) == budget


def test_request_params_fix_the_high_effort_max_tokens_clash() -> None:
    high = AnthropicBackend("claude-x", api_key=FAKE_KEY, sampling={"reasoning_effort": "high", "temperature": 0.2,
                                                                     "top_k": 40})
    assert high.request_params() == {"max_tokens": 16384 + 4096, "thinking": {"type": "enabled",
                                                                               "budget_tokens": 16384},
                                     "extra_body": {"temperature": 1.0}}
    medium = AnthropicBackend("claude-x", api_key=FAKE_KEY, sampling={"reasoning_effort": "medium"})
    assert medium.request_params()["max_tokens"] == 16384
    plain = AnthropicBackend("claude-x", api_key=FAKE_KEY, sampling={"temperature": 0.2, "top_p": 0.9,
                                                                      "max_tokens": 2000})
    assert plain.request_params() == {"max_tokens": 2000, "extra_body": {"temperature": 0.2, "top_p": 0.9}}
    assert AnthropicBackend("claude-x", api_key=FAKE_KEY).request_params() == {"max_tokens": 16384}
    with pytest.raises(AgentHopError, match="max_tokens 8192 must be greater than the thinking budget 8192"):
        AnthropicBackend("claude-x", api_key=FAKE_KEY, sampling={"reasoning_effort": "medium", "max_tokens": 8192})
    with pytest.raises(AgentHopError, match="reasoning_effort 'extreme'"):
        AnthropicBackend("claude-x", api_key=FAKE_KEY, sampling={"reasoning_effort": "extreme"})
    with pytest.raises(AgentHopError, match="ANTHROPIC_API_KEY"):
        AnthropicBackend("claude-x")


def test_environment_key_is_not_forwarded_to_a_given_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    assert AnthropicBackend("claude-x")._api_key == FAKE_KEY
    with AnthropicServer([message([text("hi")])]) as srv:
        b = AnthropicBackend("claude-x", base_url=srv.base_url)
        run(b.start(_ctx()).complete(), b)
        assert FAKE_KEY not in json.dumps(srv.requests[0].headers)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    with pytest.raises(AgentHopError, match="ANTHROPIC_BASE_URL is set"):
        AnthropicBackend("claude-x")


# --------------------------------------------------------------------------------------------
# whole trajectories through the real loop


def test_trajectory_through_the_loop_with_thinking_and_caching() -> None:
    from agenthop.harness.loop import Caps

    replies = [
        # turn 0: thinking + two parallel calls; the first call writes the cache
        message([thinking("gold is G", "sig-0"), text("Checking G."),
                 tool_use("tu1", "list_sections", {"paper_id": "p_gold"}),
                 tool_use("tu2", "read_section", {"paper_id": "p_gold", "section": "Results"})],
                input_tokens=1200, output_tokens=80, cache_creation=1000, cache_read=0),
        # turn 1: overloaded once (not a turn), then another read that exhausts the budget of 11
        Reply(529, error(529, "overloaded_error", "Overloaded").body, {"retry-after": "2"}),
        message([thinking("check intro", "sig-1"), tool_use("tu3", "read_section",
                                                            {"paper_id": "p_gold", "section": "A"})],
                input_tokens=300, output_tokens=40, cache_creation=500, cache_read=1000),
        # turn 2: text only -> nudge
        message([text("It is 13.5 points.")], input_tokens=100, output_tokens=20, cache_read=1500),
        # turn 3: submit
        message([thinking("answer C", "sig-3"), tool_use("tu4", "submit_answer",
                                                         {"answer": "C", "reasoning": "74.5-61.0"})],
                input_tokens=200, output_tokens=30, cache_creation=100, cache_read=1500),
    ]
    waits = Waits()
    with AnthropicServer(replies) as srv:
        backend = AnthropicBackend("claude-test", base_url=srv.base_url, api_key=FAKE_KEY,
                                   sampling={"reasoning_effort": "high", "top_k": 40})
        results = run_loop(backend, waits, caps=Caps(budget=11))
        requests, port = srv.requests, srv.port
    assert len(results) == 1 and len(requests) == 5
    assert requests[0].path == "/v1/messages" and requests[0].headers["x-stainless-retry-count"] == "0"
    r = results[0]
    t = r.trajectory
    assert (t["terminated_by"], t["predicted_index"], t["is_correct"], t["total_turns"], t["budget_used"]) == (
        "answer", 2, True, 4, 11)
    assert (t["transient_retry_count"], t["api_error_count"]) == (1, 0)
    assert (t["total_prompt_tokens"], t["total_completion_tokens"], t["cache_read_tokens"],
            t["cache_creation_tokens"], t["total_tokens"]) == (1800, 170, 4000, 1600, 3570)
    assert [(x["turn"], x["n_tool_calls"], x["prompt_tokens"], x["completion_tokens"], x["cache_read_tokens"],
             x["cache_creation_tokens"], x["cumulative_tokens"]) for x in r.turns] == [
        (0, 2, 1200, 80, 0, 1000, 2280),
        (1, 1, 300, 40, 1000, 500, 3120),
        (2, 0, 100, 20, 1500, 0, 3240),
        (3, 1, 200, 30, 1500, 100, 3570),
    ]
    assert r.turns[0]["content_chars"] == len("[thinking] gold is G\nChecking G.")
    assert [(c["tool"], c["status"], c["resolved_header"]) for c in r.tool_calls] == [
        ("list_sections", "ok", None), ("read_section", "ok", "Results"), ("read_section", "ok", "Introduction"),
        ("submit_answer", "ok", None)]
    assert waits.asked == [2.0]  # the server's Retry-After

    b = [q.body for q in requests]
    # every request: system block and last tool cached, thinking enabled, temperature 1.0, no top_k
    for body in b:
        assert body["system"] == [{"type": "text", "text": body["system"][0]["text"], "cache_control": EPHEMERAL}]
        assert body["tools"][-1]["name"] == "submit_answer" and body["tools"][-1]["cache_control"] == EPHEMERAL
        assert all("cache_control" not in tool for tool in body["tools"][:-1])
        assert set(body["tools"][0]) == {"name", "description", "input_schema"}
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 16384}
        assert (body["max_tokens"], body["temperature"]) == (20480, 1.0)
        assert "top_k" not in body and "top_p" not in body and "tool_choice" not in body
    assert b[1] == b[2]  # the overloaded request is re-sent unchanged

    footer0 = "\nTurn: 1  |  Tokens used: 2,280  |  Budget used: 6"
    msgs = b[2]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    # the assistant turn is replayed as its raw blocks, thinking signature included
    assert msgs[1]["content"] == [
        {"type": "thinking", "thinking": "gold is G", "signature": "sig-0"},
        {"type": "text", "text": "Checking G."},
        {"type": "tool_use", "id": "tu1", "name": "list_sections", "input": {"paper_id": "p_gold"}},
        {"type": "tool_use", "id": "tu2", "name": "read_section", "input": {"paper_id": "p_gold",
                                                                           "section": "Results"}},
    ]
    # one user message of tool_result blocks; the turn read a section, so its last result is a breakpoint
    results0 = msgs[2]["content"]
    assert [(x["type"], x["tool_use_id"]) for x in results0] == [("tool_result", "tu1"), ("tool_result", "tu2")]
    assert results0[1]["content"] == f"=== Results ===\n\n{tiny_sample.RESULTS_TEXT}{footer0}"
    assert "cache_control" not in results0[0] and results0[1]["cache_control"] == EPHEMERAL

    # turn 1 read again: the breakpoint moved; the advisory joined the tool_result message
    msgs = b[3]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    assert all("cache_control" not in x for x in msgs[2]["content"])
    turn1 = msgs[4]["content"]
    assert [x["type"] for x in turn1] == ["tool_result", "text"]
    assert turn1[0]["cache_control"] == EPHEMERAL
    assert turn1[0]["content"].endswith("\nTurn: 2  |  Tokens used: 3,120  |  Budget used: 11")
    advisory = "Budget exhausted. You MUST call submit_answer now with your best guess."
    assert turn1[1] == {"type": "text", "text": advisory}
    assert msgs[3]["content"][0] == {"type": "thinking", "thinking": "check intro", "signature": "sig-1"}

    # turn 2 was text only: the nudge (with the footer) is a new user message after the assistant text
    msgs = b[4]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert msgs[5]["content"] == [{"type": "text", "text": "It is 13.5 points."}]
    nudge = ("Please use the available tools to investigate, or call submit_answer if you're ready."
             "\nTurn: 3  |  Tokens used: 3,240  |  Budget used: 11")
    assert msgs[6]["content"] == [{"type": "text", "text": nudge}]
    assert sum(1 for x in json.dumps(b[4]).split('"cache_control"')) - 1 == 3  # system, last tool, one result

    assert [m["role"] for m in r.messages] == ["system", "user", "assistant", "tool", "tool", "assistant", "tool",
                                               "user", "assistant", "user", "assistant", "tool"]
    dump = all_text(results)
    assert FAKE_KEY not in dump and f"127.0.0.1:{port}" not in dump and "SECRET" not in dump


def test_turns_without_read_section_set_no_breakpoint() -> None:
    replies = [
        message([tool_use("tu1", "get_references", {"paper_id": "p_seed"})], input_tokens=500, output_tokens=10),
        message([tool_use("tu2", "submit_answer", {"answer": "A", "reasoning": "r"})], input_tokens=600,
                output_tokens=10),
    ]
    with AnthropicServer(replies) as srv:
        results = run_loop(AnthropicBackend("claude-test", base_url=srv.base_url, api_key=FAKE_KEY), Waits())
        b = srv.bodies
    assert results[0].trajectory["terminated_by"] == "answer"
    assert "cache_control" not in b[1]["messages"][2]["content"][0]
    assert "thinking" not in b[0] and "temperature" not in b[0] and b[0]["max_tokens"] == 16384


def test_repeated_overload_ends_the_attempt_as_error() -> None:
    replies = [error(529, "overloaded_error")] * 6 + [error(500)] * 5
    waits = Waits()
    with AnthropicServer(replies) as srv:
        results = run_loop(AnthropicBackend("claude-test", base_url=srv.base_url, api_key=FAKE_KEY), waits,
                           max_attempts=1)
        assert len(srv.requests) == 11
    t = results[0].trajectory
    assert (t["terminated_by"], t["is_final"], t["transient_retry_count"], t["total_turns"], t["total_tokens"]) == (
        "error", True, 11, 1, 0)
    assert len(waits.asked) == 10 and all(0 <= w <= min(60.0, 2.0 ** k) for k, w in enumerate(waits.asked))


# --------------------------------------------------------------------------------------------
# errors


def _ctx() -> SampleContext:
    tools = [ToolSpec("think", "Think.", {"type": "object", "properties": {"reasoning": {"type": "string"}}})]
    return SampleContext(item=tiny_sample.item(), system_prompt="SYS", user_prompt="Q", tools=tools,
                         condition="full")


@pytest.mark.parametrize("status,etype,transient", [
    (429, "rate_limit_error", True), (500, "api_error", True), (503, "api_error", True),
    (529, "overloaded_error", True), (408, "timeout_error", True), (400, "invalid_request_error", False),
    (401, "authentication_error", False), (403, "permission_error", False), (404, "not_found_error", False),
])
def test_status_classification(status: int, etype: str, transient: bool) -> None:
    with AnthropicServer([error(status, etype, "prompt would generate 500 separate rate")]) as srv:
        b = AnthropicBackend("claude-test", base_url=srv.base_url, api_key=FAKE_KEY)
        with pytest.raises(BackendError) as info:
            run(b.start(_ctx()).complete(), b)
        assert len(srv.requests) == 1
    assert isinstance(info.value, TransientBackendError) is transient
    assert str(info.value).endswith(f"HTTP {status}: prompt would generate 500 separate rate")


def test_connection_errors_are_transient_and_secrets_are_redacted() -> None:
    with AnthropicServer() as srv:
        dead = srv.base_url
    with pytest.raises(TransientBackendError, match="^APIConnectionError"):
        b = AnthropicBackend("claude-test", base_url=dead, api_key=FAKE_KEY)
        run(b.start(_ctx()).complete(), b)

    with AnthropicServer([Reply(200, message([text("late")]).body, delay_s=2.0)]) as srv:
        b = AnthropicBackend("claude-test", base_url=srv.base_url, api_key=FAKE_KEY, timeout_s=0.2)
        with pytest.raises(TransientBackendError, match="^APITimeoutError"):
            run(b.start(_ctx()).complete(), b)

    with AnthropicServer() as srv:
        srv.push(error(401, "authentication_error", f"invalid x-api-key {FAKE_KEY} at {srv.base_url}/v1/messages"))
        b = AnthropicBackend("claude-test", base_url=srv.base_url, api_key=FAKE_KEY)
        with pytest.raises(BackendError) as info:
            run(b.start(_ctx()).complete(), b)
    assert str(info.value) == "AuthenticationError: HTTP 401: invalid x-api-key [redacted] at [redacted]/v1/messages"
    assert info.value.__cause__ is None
    assert FAKE_KEY not in repr(b) and FAKE_KEY not in json.dumps(b.config())
    assert f"127.0.0.1:{srv.port}" not in json.dumps(b.config())
