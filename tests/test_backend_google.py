"""Gemini backend against a loopback generateContent server, through the official google-genai SDK:
schema form, thought signatures re-sent on their parts, parallel calls and their responses in order,
thinking settings and [thinking] text, usage accounting, error classification and redaction."""

from __future__ import annotations

import json
from typing import Any

import pytest
from servers import tiny_sample
from servers.gemini_server import (
    MISSING_SIGNATURE,
    GeminiServer,
    error,
    function_call,
    response,
    text,
    thought,
)
from servers.loop_driver import check_error_recovery, refused_resend, run, run_served, three_turns
from servers.sdk_env import FAKE_KEY, isolate

from agenthop.harness.backends.base import BackendError, ModelResponse, SampleContext, TransientBackendError
from agenthop.harness.backends.google import GoogleBackend, gemini_schema, retry_delay_s, thinking_config
from agenthop.harness.errors import AgentHopError
from agenthop.harness.benchmarks.agenthop import prompts

SIG1, SIG2 = "c2lnLW9uZQ==", "c2lnLXR3bw=="  # base64 of "sig-one", "sig-two"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch)


def ctx() -> SampleContext:
    return tiny_sample.context()


def test_schema_form_gemini_accepts() -> None:
    search = next(t for t in prompts.tool_specs("full") if t.name == "search_papers")
    schema = gemini_schema(search.parameters)
    assert schema["type"] == "OBJECT" and schema["required"] == ["query"]
    assert schema["properties"]["top_k"] == {"type": "INTEGER",
                                             "description": search.parameters["properties"]["top_k"]["description"]}
    submit = gemini_schema(next(t for t in prompts.tool_specs("full") if t.name == "submit_answer").parameters)
    assert submit["properties"]["answer"]["enum"] == ["A", "B", "C", "D"]
    assert "default" in search.parameters["properties"]["top_k"] and "default" not in schema["properties"]["top_k"]


def test_thinking_settings() -> None:
    assert thinking_config("gemini-3-pro-preview", "medium").model_dump(exclude_none=True) == {
        "include_thoughts": True, "thinking_level": "MEDIUM"}
    assert thinking_config("gemini-2.5-flash", "high").model_dump(exclude_none=True) == {
        "include_thoughts": True, "thinking_budget": 24576}
    assert thinking_config("gemini-2.5-pro", "2048").thinking_budget == 2048
    assert thinking_config("gemini-2.5-pro", None).model_dump(exclude_none=True) == {"include_thoughts": True}
    assert thinking_config("gemini-2.0-flash", None) is None
    with pytest.raises(AgentHopError, match="reasoning_effort 'max'"):
        thinking_config("gemini-3-flash-preview", "max")
    assert retry_delay_s({"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                                 "retryDelay": "2.5s"}]}}) == 2.5
    assert retry_delay_s({"error": {"details": []}}) is None


def test_request_shape_signatures_parallel_calls_and_usage() -> None:
    replies = [
        response([thought("The gold paper is cited by the seed."),
                  function_call("list_sections", {"paper_id": "p_gold"}, signature=SIG1),
                  function_call("read_section", {"paper_id": "p_gold", "section": "Results"})],
                 prompt=1000, candidates=40, cached=600, thoughts=25),
        response([text("The gain is 13.5 points.", signature=SIG2)], prompt=1500, candidates=20),
        response([function_call("submit_answer", {"answer": "C", "reasoning": "13.5"}, call_id="fc-9")],
                 prompt=1600, candidates=10, cached=1500),
    ]

    async def scenario(srv: GeminiServer) -> list[Any]:
        b = GoogleBackend("gemini-3-pro-preview", base_url=srv.base_url, api_key=FAKE_KEY,
                          sampling={"top_k": 64, "reasoning_effort": "medium", "temperature": 1.0})
        conv = b.start(ctx())
        r1, r2, r3 = await three_turns(conv, ["SECTIONS\nTurn: 1", "RESULTS\nTurn: 1"], "NUDGE")
        conv.add_assistant(r3)
        conv.add_tool_results([(r3.tool_calls[0], "Answer submitted: C")])
        await b.aclose()
        return [r1, r2, r3, conv.transcript(), b]

    with GeminiServer(replies) as srv:
        r1, r2, r3, transcript, backend = run(scenario(srv))
        reqs, refused = srv.requests, srv.refused
    assert refused == []
    assert [r.path for r in reqs] == ["/v1beta/models/gemini-3-pro-preview:generateContent"] * 3
    assert reqs[0].headers["x-goog-api-key"] == FAKE_KEY

    # parsing: thoughts as [thinking] text, parallel calls in order, usage as docs/backends.md describes
    assert r1.text == "[thinking] The gold paper is cited by the seed."
    assert [(c.name, c.args) for c in r1.tool_calls] == [
        ("list_sections", {"paper_id": "p_gold"}), ("read_section", {"paper_id": "p_gold", "section": "Results"})]
    assert (r1.prompt_tokens, r1.completion_tokens, r1.cache_read_tokens) == (400, 65, 600)
    assert (r2.text, r2.prompt_tokens, r2.completion_tokens, r2.cache_read_tokens) == (
        "The gain is 13.5 points.", 1500, 20, 0)
    assert r3.tool_calls[0].id == "fc-9" and (r3.prompt_tokens, r3.cache_read_tokens) == (100, 1500)

    # request 1: system instruction, tools in Schema form, generation config
    b0 = reqs[0].body
    assert b0["systemInstruction"]["parts"] == [{"text": "SYS"}]
    assert b0["contents"] == [{"role": "user", "parts": [{"text": "QUESTION"}]}]
    decls = b0["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in decls] == list(prompts.TOOL_COSTS)
    assert decls[2]["parameters"]["properties"]["top_k"]["type"] == "INTEGER"
    gen = b0["generationConfig"]
    assert (gen["topK"], gen["temperature"], gen["maxOutputTokens"]) == (64, 1.0, 16384)
    assert gen["thinkingConfig"] == {"include_thoughts": True, "thinking_level": "MEDIUM"}
    assert "toolConfig" not in b0  # no function-calling mode is forced

    # request 2: the model turn verbatim (signature on its part), ONE user turn of responses in
    # call order, then the advisory as its own user turn
    c = reqs[1].body["contents"]
    assert c[1] == {"role": "model", "parts": [
        {"text": "The gold paper is cited by the seed.", "thought": True},
        {"functionCall": {"name": "list_sections", "args": {"paper_id": "p_gold"}}, "thoughtSignature": SIG1},
        {"functionCall": {"name": "read_section", "args": {"paper_id": "p_gold", "section": "Results"}}}]}
    assert c[2] == {"role": "user", "parts": [
        {"functionResponse": {"name": "list_sections", "response": {"output": "SECTIONS\nTurn: 1"}}},
        {"functionResponse": {"name": "read_section", "response": {"output": "RESULTS\nTurn: 1"}}}]}
    assert c[3] == {"role": "user", "parts": [
        {"text": "Budget exhausted. You MUST call submit_answer now with your best guess."}]}
    # request 3: a text part's signature goes back too
    assert reqs[2].body["contents"][4] == {"role": "model", "parts": [
        {"text": "The gain is 13.5 points.", "thoughtSignature": SIG2}]}

    assert [(t["role"], t["name"]) for t in transcript] == [
        ("system", None), ("user", None), ("assistant", None), ("tool", "list_sections"), ("tool", "read_section"),
        ("user", None), ("assistant", None), ("user", None), ("assistant", None), ("tool", "submit_answer")]
    assert FAKE_KEY not in repr(backend) and FAKE_KEY not in json.dumps(backend.config())


def test_server_refuses_a_lost_signature_as_the_api_does() -> None:
    """A conversation that drops the signature (as the OpenAI-compatible endpoint does) gets 400."""
    replies = [response([function_call("get_paper_info", {"paper_id": "p_seed"}, signature=SIG1)]),
               response([text("unused")])]

    def strip_signature(raw: Any) -> Any:
        stripped = raw.model_copy(deep=True)
        stripped.parts[0].thought_signature = None
        return stripped

    async def scenario(srv: GeminiServer) -> None:
        b = GoogleBackend("gemini-3-flash-preview", base_url=srv.base_url, api_key=FAKE_KEY)
        err = await refused_resend(b, strip_signature, "INFO")
        assert str(err).startswith("ClientError: HTTP 400 INVALID_ARGUMENT: Function call is missing a "
                                   "thought_signature")

    with GeminiServer(replies) as srv:
        run(scenario(srv))
        assert srv.refused == [MISSING_SIGNATURE] and len(srv.replies) == 1


@pytest.mark.parametrize("status,name,transient", [
    (429, "RESOURCE_EXHAUSTED", True), (503, "UNAVAILABLE", True), (500, "INTERNAL", True),
    (504, "DEADLINE_EXCEEDED", True), (400, "INVALID_ARGUMENT", False), (403, "PERMISSION_DENIED", False),
    (404, "NOT_FOUND", False),
])
def test_status_classification(status: int, name: str, transient: bool) -> None:
    with GeminiServer([error(status, name, "quota for generate rate 500", retry_delay="7s")]) as srv:
        b = GoogleBackend("gemini-2.5-flash", base_url=srv.base_url, api_key=FAKE_KEY)
        with pytest.raises(BackendError) as info:
            run(b.start(ctx()).complete(), b)
        assert len(srv.requests) == 1  # the SDK does not retry
    assert isinstance(info.value, TransientBackendError) is transient
    assert str(info.value).startswith(f"{'Server' if status >= 500 else 'Client'}Error: HTTP {status} {name}: ")
    assert info.value.__cause__ is None and info.value.__suppress_context__
    if transient:
        assert info.value.retry_after == 7.0  # type: ignore[attr-defined]
        assert info.value.rate_limited is (status == 429)  # type: ignore[attr-defined]


def test_connection_refused_and_timeout_are_transient() -> None:
    with GeminiServer() as srv:
        dead = srv.base_url
    b = GoogleBackend("gemini-2.5-pro", base_url=dead, api_key=FAKE_KEY)
    with pytest.raises(TransientBackendError, match="^ConnectError"):
        run(b.start(ctx()).complete(), b)
    from servers.scripted_http import Reply

    with GeminiServer([Reply(200, response([text("late")]).body, delay_s=2.0)]) as srv:
        b = GoogleBackend("gemini-2.5-pro", base_url=srv.base_url, api_key=FAKE_KEY, timeout_s=0.2)
        with pytest.raises(TransientBackendError, match="Timeout"):
            run(b.start(ctx()).complete(), b)


def test_keys_and_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(AgentHopError, match="GOOGLE_API_KEY"):
        GoogleBackend("gemini-3-pro-preview")
    monkeypatch.setenv("GEMINI_API_KEY", "gm-key-1234")
    assert GoogleBackend("gemini-3-pro-preview")._api_key == "gm-key-1234"
    monkeypatch.setenv("GOOGLE_API_KEY", "gg-key-5678")
    assert GoogleBackend("gemini-3-pro-preview")._api_key == "gg-key-5678"
    with GeminiServer() as srv:
        srv.push(error(400, "INVALID_ARGUMENT", f"API key {FAKE_KEY} not valid for {srv.base_url}"))
        b = GoogleBackend("gemini-3-pro-preview", base_url=srv.base_url, api_key=FAKE_KEY)
        with pytest.raises(BackendError) as info:
            run(b.start(ctx()).complete(), b)
        # an explicit base URL never receives the environment's key
        b2 = GoogleBackend("gemini-3-pro-preview", base_url=srv.base_url)
        srv.push(response([text("hi")]))
        run(b2.start(ctx()).complete(), b2)
        assert srv.requests[-1].headers["x-goog-api-key"] == "EMPTY"
    msg = str(info.value)
    assert FAKE_KEY not in msg and f"127.0.0.1:{srv.port}" not in msg and "[redacted]" in msg


def test_trajectory_through_the_loop() -> None:
    replies = [
        response([function_call("list_sections", {"paper_id": "p_gold"}, signature=SIG1),
                  function_call("read_section", {"paper_id": "p_gold", "section": "Results"})],
                 prompt=1000, candidates=30, thoughts=10),
        error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted", retry_delay="3s"),
        error(503, "UNAVAILABLE", "The model is overloaded."),
        error(400, "INVALID_ARGUMENT", "Request contains an invalid argument."),
        response([thought("74.5 - 61.0 = 13.5"), function_call("submit_answer", {"answer": "C", "reasoning": "13.5"},
                                                                signature=SIG2)],
                 prompt=1700, candidates=20, cached=1400, thoughts=15),
    ]
    served = run_served(GeminiServer(replies),
                        lambda url: GoogleBackend("gemini-3-pro-preview", base_url=url, api_key=FAKE_KEY))
    # the 429's RetryInfo delay is waited as asked
    r = check_error_recovery(served, hinted_wait=3.0)
    assert [(x["turn"], x["role"], x["prompt_tokens"], x["completion_tokens"], x["cache_read_tokens"])
            for x in r.turns] == [(0, "assistant", 1000, 40, 0), (1, "error", 0, 0, 0),
                                  (2, "assistant", 300, 35, 1400)]
    assert [(c["turn"], c["tool"], c["status"]) for c in r.tool_calls] == [
        (0, "list_sections", "ok"), (0, "read_section", "ok"), (2, "submit_answer", "ok")]
    assert r.turns[2]["content_chars"] == len("[thinking] 74.5 - 61.0 = 13.5")
    # the signature went back on its part
    reqs = served.requests
    assert reqs[4].body["contents"][1]["parts"][0]["thoughtSignature"] == SIG1
    responses = reqs[4].body["contents"][2]["parts"]
    assert [p["functionResponse"]["name"] for p in responses] == ["list_sections", "read_section"]
    assert responses[1]["functionResponse"]["response"]["output"].endswith(
        "\nTurn: 1  |  Tokens used: 1,040  |  Budget used: 6")


def test_lone_surrogates_are_repaired_in_what_is_recorded_and_re_sent() -> None:
    replies = [response([text("bad \ud800 text", signature=SIG1),
                         function_call("think", {"reasoning": "x\udfff"}, signature=SIG2)]),
               response([text("ok")])]

    async def scenario(srv: GeminiServer) -> ModelResponse:
        b = GoogleBackend("gemini-3-pro-preview", base_url=srv.base_url, api_key=FAKE_KEY)
        conv = b.start(ctx())
        r = await conv.complete()
        conv.add_assistant(r)
        conv.add_tool_results([(r.tool_calls[0], "Noted.")])
        await conv.complete()
        await b.aclose()
        return r

    with GeminiServer(replies) as srv:
        r = run(scenario(srv))
        sent = srv.requests[1].body["contents"][1]["parts"]
        refused = srv.refused
    assert (r.text, r.tool_calls[0].args, r.repaired_chars) == ("bad \ufffd text", {"reasoning": "x\ufffd"}, 2)
    assert sent[0] == {"text": "bad \ufffd text", "thoughtSignature": SIG1}
    assert sent[1] == {"functionCall": {"name": "think", "args": {"reasoning": "x\ufffd"}}, "thoughtSignature": SIG2}
    assert refused == []


def test_sdk_environment_cannot_redirect_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9")
    with pytest.raises(AgentHopError, match="GOOGLE_GEMINI_BASE_URL is set"):
        GoogleBackend("gemini-3-pro-preview")
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL")
    # Vertex AI mode and another API version from the environment change nothing
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_GENAI_API_VERSION", "v1alpha")
    with GeminiServer([response([text("hi")])]) as srv:
        b = GoogleBackend("gemini-3-pro-preview", base_url=srv.base_url, api_key="named-key")
        run(b.start(ctx()).complete(), b)
        rec = srv.requests[0]
    assert rec.path == "/v1beta/models/gemini-3-pro-preview:generateContent"
    assert rec.headers["x-goog-api-key"] == "named-key"
