"""Loopback Anthropic Messages API server (non-streaming) with scripted replies.

Replies are built with :func:`message` from content blocks (:func:`text`, :func:`thinking`,
:func:`tool_use`, and for the web search server tool :func:`server_tool_use`,
:func:`web_search_result`, :func:`web_search_error`, :func:`cited_text`) and usage including cache
reads and writes and ``server_tool_use.web_search_requests``, and :func:`error` (an Anthropic-style
error body with a status code, e.g. 429, 500, 529 overloaded).

Like the real API with the web search tool, it checks each request before answering (a failed
check answers 400 invalid_request_error and does not use up a scripted reply):

- a ``web_search_tool_result`` block in an assistant turn follows the ``server_tool_use`` block it
  answers, and each search result (and each citation) comes back with the ``encrypted_content``
  (``encrypted_index``) it was sent with: the API decrypts them, an altered or dropped one is refused;
- it answers with server tool blocks only when the request declares the ``web_search_20250305`` tool
  (a scripted one without it is refused as a test error).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .scripted_http import Recorded, Reply, ScriptedServer


class AnthropicServer(ScriptedServer):
    prefix = ""

    def __init__(self, replies: list[Reply] | None = None,
                 responder: Callable[[Recorded], Reply] | None = None) -> None:
        super().__init__(replies, responder)
        self.refused: list[str] = []
        #: every encrypted_content / encrypted_index sent -> must come back unchanged
        self.encrypted: set[str] = set()

    def _next(self, rec: Recorded) -> Reply:
        problem = self.check(rec)
        if problem is not None:
            with self._lock:
                self.requests.append(rec)
                self.refused.append(problem)
            return error(400, "invalid_request_error", problem)
        reply = super()._next(rec)
        if reply.status == 200 and isinstance(reply.body, dict):
            body = rec.body if isinstance(rec.body, dict) else {}
            declared = any(t.get("type") == "web_search_20250305" for t in body.get("tools") or [])
            for block in reply.body.get("content") or []:
                if block.get("type") in ("server_tool_use", "web_search_tool_result") and not declared:
                    with self._lock:
                        self.refused.append("test script: server tool block answered without the web_search tool")
                for secret in _encrypted(block):
                    with self._lock:
                        self.encrypted.add(secret)
        return reply

    def check(self, rec: Recorded) -> str | None:
        body = rec.body if isinstance(rec.body, dict) else {}
        for i, msg in enumerate(body.get("messages") or []):
            if msg.get("role") != "assistant" or not isinstance(msg.get("content"), list):
                continue
            uses: set[str] = set()
            for j, block in enumerate(msg["content"]):
                btype = block.get("type")
                if btype == "server_tool_use":
                    uses.add(block.get("id"))
                elif btype == "web_search_tool_result" and block.get("tool_use_id") not in uses:
                    return (f"messages.{i}.content.{j}: web_search_tool_result block with tool_use_id "
                            f"{block.get('tool_use_id')!r} does not follow a server_tool_use block with that id")
                for secret in _encrypted(block, strict=True):
                    if secret not in self.encrypted:
                        return f"messages.{i}.content.{j}: invalid encrypted content"
        return None


def _encrypted(block: dict[str, Any], strict: bool = False) -> list[str]:
    """The encrypted strings a block carries (search results' content, citations' index); with
    ``strict`` a missing one is returned as '' (so it fails the check)."""
    out: list[str] = []
    if block.get("type") == "web_search_tool_result" and isinstance(block.get("content"), list):
        out += [r.get("encrypted_content", "") if strict else r["encrypted_content"]
                for r in block["content"] if strict or "encrypted_content" in r]
    if block.get("type") == "text":
        out += [c.get("encrypted_index", "") if strict else c["encrypted_index"]
                for c in block.get("citations") or [] if c.get("type") == "web_search_result_location"
                and (strict or "encrypted_index" in c)]
    return out


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def cited_text(value: str, url: str, title: str, encrypted_index: str) -> dict[str, Any]:
    """A text block citing one search result (``citations`` of type web_search_result_location)."""
    return {"type": "text", "text": value, "citations": [
        {"type": "web_search_result_location", "url": url, "title": title, "encrypted_index": encrypted_index,
         "cited_text": value[:150]}]}


def thinking(value: str, signature: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": signature}


def tool_use(use_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": name, "input": args}


def server_tool_use(use_id: str, query: str) -> dict[str, Any]:
    """A web search the API ran (anthropic.types.ServerToolUseBlock)."""
    return {"type": "server_tool_use", "id": use_id, "name": "web_search", "input": {"query": query}}


def web_search_result(use_id: str, results: list[tuple[str, str]]) -> dict[str, Any]:
    """Its results (anthropic.types.WebSearchToolResultBlock): (url, title) pairs, encrypted content each."""
    return {"type": "web_search_tool_result", "tool_use_id": use_id, "content": [
        {"type": "web_search_result", "url": url, "title": title, "encrypted_content": f"enc-{use_id}-{k}",
         "page_age": "April 30, 2025"} for k, (url, title) in enumerate(results)]}


def web_search_error(use_id: str, code: str) -> dict[str, Any]:
    """A failed search (error codes: max_uses_exceeded, too_many_requests, query_too_long, unavailable, ...)."""
    return {"type": "web_search_tool_result", "tool_use_id": use_id,
            "content": {"type": "web_search_tool_result_error", "error_code": code}}


def message(
    blocks: list[dict[str, Any]],
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cache_read: int | None = None,
    cache_creation: int | None = None,
    model: str = "claude-test",
    stop_reason: str | None = None,
) -> Reply:
    usage: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if cache_read is not None:
        usage["cache_read_input_tokens"] = cache_read
    if cache_creation is not None:
        usage["cache_creation_input_tokens"] = cache_creation
    searches = sum(1 for b in blocks if b["type"] == "server_tool_use" and b.get("name") == "web_search")
    if searches:
        usage["server_tool_use"] = {"web_search_requests": searches, "web_fetch_requests": 0}
    has_tool = any(b["type"] == "tool_use" for b in blocks)
    body = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason or ("tool_use" if has_tool else "end_turn"),
        "stop_sequence": None,
        "usage": usage,
    }
    return Reply(200, body)


def error(status: int, etype: str = "api_error", message: str = "scripted error") -> Reply:
    return Reply(status, {"type": "error", "error": {"type": etype, "message": message}})
