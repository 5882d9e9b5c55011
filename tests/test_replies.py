"""What the loop keeps of a reply and what it sends back (harness/replies.py, docs/harness.md#hostile-replies):
the pure rules on hand-built replies, and the loop's use of them on the AgentHop sample of test_loop_rules."""

from __future__ import annotations

from agenthop.harness.backends.base import ModelResponse, ProviderCall, ToolCall
from agenthop.harness.backends.scripted import call, reply, say
from agenthop.harness.replies import MAX_RESENT_CHARS, reply_problem, resent_reply, resent_text
from agenthop.schemas.limits import MAX_TEXT_BYTES, bytes_over_cap
from test_loop_rules import run


def _resp(text: str = "", calls: list[ToolCall] | None = None, **kw) -> ModelResponse:
    return ModelResponse(text, calls or [], 1, 1, raw={"native": True}, **kw)


def test_bytes_over_cap_counts_utf8_bytes() -> None:
    assert bytes_over_cap("x" * MAX_TEXT_BYTES) == 0
    assert bytes_over_cap("x" * (MAX_TEXT_BYTES + 1)) == MAX_TEXT_BYTES + 1
    n = MAX_TEXT_BYTES // 2 + 1  # fewer characters than the cap, more bytes (two per "é")
    assert bytes_over_cap("é" * n) == 2 * n
    assert bytes_over_cap("é" * (n - 1)) == 0


def test_reply_problem_names_what_ingest_would_refuse() -> None:
    assert reply_problem(_resp("ok", [ToolCall("c", "lookup", {"q": "x" * 1000})])) is None
    assert reply_problem(_resp("x" * MAX_TEXT_BYTES)) is None
    assert "the reply's text has 5,242,881 bytes, above the 5 MiB" in reply_problem(_resp("x" * (MAX_TEXT_BYTES + 1)))
    assert "tool call 1 of the reply has an empty name" in reply_problem(
        _resp("", [ToolCall("a", "lookup", {}), ToolCall("b", " \t", {})]))
    big = {"q": "y" * MAX_TEXT_BYTES}  # its JSON is longer than the cap
    assert "tool call 0 ('lookup') of the reply has arguments of 5,242,889 bytes" in reply_problem(
        _resp("", [ToolCall("a", "lookup", big)]))
    assert "has a name of" in reply_problem(_resp("", [ToolCall("a", "n" * (MAX_TEXT_BYTES + 1), {})]))
    assert "arguments of" in reply_problem(_resp("", provider_calls=[ProviderCall("search", big)]))


def test_resent_text_cuts_with_a_note() -> None:
    assert resent_text("abc", 3) == "abc"
    assert resent_text("abcdef", 3) == "abc… (3 characters more)"
    assert resent_text("x" * 1_234_567) == "x" * MAX_RESENT_CHARS + "… (1,134,567 characters more)"


def test_resent_reply_keeps_a_short_reply_and_cuts_a_long_one() -> None:
    short = _resp("hello", [ToolCall("a", "lookup", {"q": "x"})])
    assert resent_reply(short) is short
    long_arg = "q" * (MAX_RESENT_CHARS + 5)
    resp = _resp("t" * (MAX_RESENT_CHARS + 1), [ToolCall("a", "lookup", {"q": long_arg, "k": 3}),
                                                 ToolCall("b", "lookup", {"q": "x"})])
    sent = resent_reply(resp)
    assert sent.text == "t" * MAX_RESENT_CHARS + "… (1 characters more)"
    assert sent.tool_calls[0].args == {"q": "q" * MAX_RESENT_CHARS + "… (5 characters more)", "k": 3}
    assert sent.tool_calls[1].args == {"q": "x"} and [c.id for c in sent.tool_calls] == ["a", "b"]
    assert sent.raw is None and sent.prompt_tokens == 1  # rebuilt from text and calls by the backend
    assert resp.tool_calls[0].args["q"] == long_arg  # the reply itself (what is stored) is untouched
    many = _resp("", [ToolCall("a", "lookup", {f"k{i}": "v" * MAX_RESENT_CHARS for i in range(5)})])
    (c,) = resent_reply(many).tool_calls
    assert list(c.args) == ["_raw"] and len(c.args["_raw"]) < MAX_RESENT_CHARS + 50


def test_the_loop_records_an_unstorable_reply_as_an_error_turn() -> None:
    results, backend, sleeps = run([
        reply(call(""), prompt=50, completion=5),
        say("x" * (MAX_TEXT_BYTES + 1), prompt=60, completion=6),
        reply(call("submit_answer", answer="B", reasoning="r")),
    ])
    (r,) = results
    assert [t["role"] for t in r.turns] == ["error", "error", "assistant"]
    assert "empty name" in r.turns[0]["error_text"] and "5,242,881 bytes" in r.turns[1]["error_text"]
    assert [(t["prompt_tokens"], t["completion_tokens"], t["cumulative_tokens"]) for t in r.turns[:2]] == \
        [(50, 5, 55), (60, 6, 121)]
    t = r.trajectory
    assert (t["terminated_by"], t["is_correct"], t["api_error_count"], t["total_prompt_tokens"]) == ("answer", True, 2, 210)
    assert [c["tool"] for c in r.tool_calls] == ["submit_answer"]
    assert sleeps.waits == []  # a bad reply is asked again at once (the endpoint is not failing)
    conv = backend.conversations[0]
    assert conv.calls_seen == [2, 2, 2]  # neither bad reply was sent back


def test_the_loop_sends_back_long_results_cut() -> None:
    results, backend, _ = run([
        reply(call("think", thought="z" * (MAX_RESENT_CHARS + 10))),
        reply(call("submit_answer", answer="B", reasoning="r")),
    ])
    (r,) = results
    assert r.trajectory["terminated_by"] == "answer"
    assert len(r.tool_calls[0]["args_json"]) > MAX_RESENT_CHARS  # stored whole
    sent = [m for m in backend.conversations[0].messages if m["role"] == "assistant"][0]
    assert sent["tool_calls"][0][2] == {"thought": "z" * MAX_RESENT_CHARS + "… (10 characters more)"}
