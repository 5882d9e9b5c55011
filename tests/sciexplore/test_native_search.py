"""Searches reported by the providers' own search tools, read from the official SDKs' response objects."""

from __future__ import annotations

from anthropic.types import Message
from google.genai import types as gtypes
from openai.types.responses import Response

from agenthop.harness.benchmarks.sciexplore.native_search import (
    anthropic_searches, gemini_searches, openai_responses_searches,
)


def _fields(records):
    return [(r.tool, r.query, r.target, r.status, r.error_type, r.args.get("sources")) for r in records]


def test_openai_responses_web_search_calls() -> None:
    resp = Response.model_validate({
        "id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-x", "parallel_tool_calls": True,
        "tool_choice": "auto", "tools": [{"type": "web_search"}], "status": "completed",
        "output": [
            {"type": "web_search_call", "id": "ws_1", "status": "completed",
             "action": {"type": "search", "query": "kinase inhibitor IC50",
                        "sources": [{"type": "url", "url": "https://a.example/1"}]}},
            {"type": "web_search_call", "id": "ws_2", "status": "completed",
             "action": {"type": "search", "queries": ["q one", "q two"]}},
            {"type": "web_search_call", "id": "ws_3", "status": "completed",
             "action": {"type": "open_page", "url": "https://a.example/1"}},
            {"type": "web_search_call", "id": "ws_4", "status": "failed",
             "action": {"type": "find_in_page", "url": "https://a.example/1", "pattern": "IC50"}},
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "Final answer: X", "annotations": []}]},
        ]})
    assert _fields(openai_responses_searches(resp.output)) == [
        ("web_search", "kinase inhibitor IC50", None, "ok", None, ["https://a.example/1"]),
        ("web_search", "q one", None, "ok", None, None),
        ("web_search", "q two", None, "ok", None, None),
        ("open_page", None, "https://a.example/1", "ok", None, None),
        ("find_in_page", None, "https://a.example/1", "tool_error", "failed", None),
    ]
    assert [r.is_search for r in openai_responses_searches(resp.output)] == [True, True, True, False, False]


def test_anthropic_server_tool_use_blocks() -> None:
    msg = Message.model_validate({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5, "server_tool_use": {"web_search_requests": 2, "web_fetch_requests": 0}},
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "soil carbon flux"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
             "content": [{"type": "web_search_result", "title": "T", "url": "https://b.example/2",
                          "encrypted_content": "e", "page_age": None}]},
            {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search", "input": {"query": "again"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2",
             "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
            {"type": "text", "text": "Final answer: Y"},
        ]})
    assert _fields(anthropic_searches(msg.content)) == [
        ("web_search", "soil carbon flux", None, "ok", None, ["https://b.example/2"]),
        ("web_search", "again", None, "tool_error", "max_uses_exceeded", None),
    ]


def test_gemini_grounding_queries() -> None:
    resp = gtypes.GenerateContentResponse.model_validate({"candidates": [{
        "content": {"role": "model", "parts": [{"text": "Final answer: Z"}]},
        "grounding_metadata": {"web_search_queries": ["exoplanet transit survey", "TESS 2019"],
                               "grounding_chunks": [{"web": {"uri": "https://c.example/3", "title": "C"}}]}}]})
    assert _fields(gemini_searches(resp.candidates[0])) == [
        ("web_search", "exoplanet transit survey", None, "ok", None, ["https://c.example/3"]),
        ("web_search", "TESS 2019", None, "ok", None, None),
    ]
    assert gemini_searches(gtypes.Candidate()) == []
