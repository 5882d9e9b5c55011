"""Responses API backend against a loopback /v1/responses server, through the official openai SDK:
stateless requests, reasoning items re-sent before their function calls, summaries as [thinking]
text, usage accounting, retries and error turns."""

from __future__ import annotations

import json
from typing import Any

import pytest
from servers import tiny_sample
from servers.loop_driver import check_error_recovery, refused_resend, run, run_served, three_turns
from servers.responses_server import ResponsesServer, error, function_call, message, reasoning, response
from servers.sdk_env import FAKE_KEY, isolate

from agenthop.harness.backends.base import SampleContext
from agenthop.harness.backends.responses import ResponsesBackend
from agenthop.harness.errors import AgentHopError
from agenthop.harness.benchmarks.agenthop import prompts


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch)


def ctx() -> SampleContext:
    return tiny_sample.context()


RS1 = reasoning("rs_1", ["The seed cites the gold paper.", "Read its results."], "ENC-1")
RS2 = reasoning("rs_2", [], "ENC-2")


def test_request_shape_reasoning_items_and_usage() -> None:
    replies = [
        response([RS1, function_call("fc_1", "call_1", "list_sections", {"paper_id": "p_gold"}),
                  function_call("fc_2", "call_2", "read_section", '{"paper_id": "p_gold", "section": ')],
                 input_tokens=1000, output_tokens=300, cached=600, reasoning_tokens=250),
        response([RS2, message("msg_1", "The gain is 13.5 points.")], input_tokens=1500, output_tokens=40),
        response([function_call("fc_3", "call_3", "submit_answer", {"answer": "C", "reasoning": "13.5"})],
                 input_tokens=1600, output_tokens=10, cached=1500),
    ]

    async def scenario(srv: ResponsesServer) -> list[Any]:
        b = ResponsesBackend("gpt-5.4", base_url=srv.base_url, api_key=FAKE_KEY,
                             sampling={"reasoning_effort": "medium", "top_k": 40, "max_tokens": 8000})
        conv = b.start(ctx())
        r1, r2, r3 = await three_turns(conv, ["SECTIONS\nTurn: 1", "ERR\nTurn: 1"], "NUDGE")
        await b.aclose()
        return [r1, r2, r3, conv.transcript(), b]

    with ResponsesServer(replies) as srv:
        r1, r2, r3, transcript, backend = run(scenario(srv))
        reqs, refused = srv.requests, srv.refused
    assert refused == [] and [r.path for r in reqs] == ["/v1/responses"] * 3
    assert reqs[0].headers["authorization"] == f"Bearer {FAKE_KEY}"

    # parsing: summaries as [thinking] lines, calls with call_id, malformed arguments, usage
    assert r1.text == "[thinking] The seed cites the gold paper.\n[thinking] Read its results."
    assert [(c.id, c.name, c.args) for c in r1.tool_calls] == [
        ("call_1", "list_sections", {"paper_id": "p_gold"}),
        ("call_2", "read_section", {"_raw": '{"paper_id": "p_gold", "section": '})]
    assert (r1.prompt_tokens, r1.completion_tokens, r1.cache_read_tokens) == (400, 300, 600)
    assert (r2.text, r2.prompt_tokens, r2.cache_read_tokens) == ("The gain is 13.5 points.", 1500, 0)
    assert (r3.prompt_tokens, r3.completion_tokens, r3.cache_read_tokens) == (100, 10, 1500)

    b0 = reqs[0].body
    assert (b0["model"], b0["instructions"], b0["store"], b0["include"]) == (
        "gpt-5.4", "SYS", False, ["reasoning.encrypted_content"])
    assert b0["input"] == [{"role": "user", "content": "QUESTION"}]
    assert b0["reasoning"] == {"effort": "medium", "summary": "auto"} and b0["max_output_tokens"] == 8000
    assert b0["tools"][0] == {"type": "function", "name": "get_paper_info",
                              "description": prompts.tool_specs("full")[0].description,
                              "parameters": prompts.tool_specs("full")[0].parameters}
    for absent in ("top_k", "tool_choice", "parallel_tool_calls", "previous_response_id", "temperature"):
        assert absent not in b0

    # request 2: previous input, the output items as returned (reasoning first), one output per call,
    # then the advisory
    inp = reqs[1].body["input"]
    assert inp[1] == RS1
    assert [i["type"] for i in inp[1:6]] == ["reasoning", "function_call", "function_call",
                                              "function_call_output", "function_call_output"]
    assert inp[3]["arguments"] == '{"paper_id": "p_gold", "section": '  # re-sent as the model wrote it
    assert inp[4] == {"type": "function_call_output", "call_id": "call_1", "output": "SECTIONS\nTurn: 1"}
    assert inp[6] == {"role": "user", "content": "Budget exhausted. You MUST call submit_answer now with your "
                      "best guess."}
    # request 3: the whole history again (stateless), the text turn with its reasoning item
    assert reqs[2].body["input"][:7] == inp and reqs[2].body["input"][7] == RS2
    assert reqs[2].body["input"][-1] == {"role": "user", "content": "NUDGE"}
    assert [t["role"] for t in transcript] == ["system", "user", "assistant", "tool", "tool", "user", "assistant",
                                               "user"]
    assert FAKE_KEY not in repr(backend) and FAKE_KEY not in json.dumps(backend.config())


def test_server_refuses_a_function_call_without_its_reasoning_item() -> None:
    """What chat completions does to GPT-5.x reasoning (drops it) is refused, as by the real API."""
    replies = [response([RS1, function_call("fc_1", "call_1", "think", {"reasoning": "x"})]),
               response([message("msg_1", "unused")])]

    async def scenario(srv: ResponsesServer) -> None:
        b = ResponsesBackend("gpt-5.4", base_url=srv.base_url, api_key=FAKE_KEY)
        err = await refused_resend(b, lambda raw: raw[1:], "Noted.")  # the reasoning item dropped
        assert "without its required 'reasoning' item: 'rs_1'" in str(err)

    with ResponsesServer(replies) as srv:
        run(scenario(srv))
        assert len(srv.refused) == 1 and len(srv.replies) == 1


def test_sampling_and_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    b = ResponsesBackend("gpt-5.3-codex", api_key=FAKE_KEY,
                         sampling={"reasoning_effort": "high", "reasoning_summary": "none", "temperature": 0.2})
    assert b.request_params() == {"store": False, "include": ["reasoning.encrypted_content"],
                                  "max_output_tokens": 16384, "reasoning": {"effort": "high"}, "temperature": 0.2}
    assert "reasoning" not in ResponsesBackend("gpt-5.4", api_key=FAKE_KEY).request_params()
    with pytest.raises(AgentHopError, match="reasoning_summary"):
        ResponsesBackend("gpt-5.4", api_key=FAKE_KEY, sampling={"reasoning_summary": "long"})
    with pytest.raises(AgentHopError, match="reasoning_summary applies only to the responses backend"):
        from agenthop.harness.backends.openai import OpenAIBackend

        OpenAIBackend("gpt-5", api_key=FAKE_KEY, sampling={"reasoning_summary": "auto"})
    with pytest.raises(AgentHopError, match="OPENAI_API_KEY"):
        ResponsesBackend("gpt-5.4")
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    assert ResponsesBackend("gpt-5.4")._api_key == FAKE_KEY


def test_trajectory_through_the_loop() -> None:
    rate_limited = error(429, "Rate limit reached", "rate_limit_exceeded")
    rate_limited.headers["retry-after-ms"] = "250"
    replies = [
        response([RS1, function_call("fc_1", "call_1", "list_sections", {"paper_id": "p_gold"}),
                  function_call("fc_2", "call_2", "read_section", {"paper_id": "p_gold", "section": "Results"})],
                 input_tokens=1000, output_tokens=60, reasoning_tokens=40),
        rate_limited,
        error(500, "The server had an error"),
        error(400, "Invalid 'input[3]'.", "invalid_request_error"),
        response([RS2, function_call("fc_3", "call_3", "submit_answer", {"answer": "C", "reasoning": "13.5"})],
                 input_tokens=1700, output_tokens=30, cached=1400, reasoning_tokens=20),
    ]
    served = run_served(ResponsesServer(replies),
                        lambda url: ResponsesBackend("gpt-5.4", base_url=url, api_key=FAKE_KEY))
    # the 429 waits what retry-after-ms asks
    r = check_error_recovery(served, hinted_wait=0.25)
    assert [(x["role"], x["prompt_tokens"], x["completion_tokens"], x["cache_read_tokens"]) for x in r.turns] == [
        ("assistant", 1000, 60, 0), ("error", 0, 0, 0), ("assistant", 300, 30, 1400)]
    assert [(c["tool"], c["status"]) for c in r.tool_calls] == [
        ("list_sections", "ok"), ("read_section", "ok"), ("submit_answer", "ok")]
    outputs = [i for i in served.requests[4].body["input"] if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == ["call_1", "call_2"]
    assert outputs[1]["output"].endswith("\nTurn: 1  |  Tokens used: 1,060  |  Budget used: 6")
