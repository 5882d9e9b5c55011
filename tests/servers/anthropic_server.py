"""Loopback Anthropic Messages API server (non-streaming) with scripted replies.

Replies are built with :func:`message` from content blocks (:func:`text`, :func:`thinking`,
:func:`tool_use`) and usage including cache reads and writes, and :func:`error` (an
Anthropic-style error body with a status code, e.g. 429, 500, 529 overloaded).
"""

from __future__ import annotations

from typing import Any

from .scripted_http import Reply, ScriptedServer


class AnthropicServer(ScriptedServer):
    prefix = ""


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str, signature: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": signature}


def tool_use(use_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": name, "input": args}


def message(
    blocks: list[dict[str, Any]],
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cache_read: int | None = None,
    cache_creation: int | None = None,
    model: str = "claude-test",
) -> Reply:
    usage: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if cache_read is not None:
        usage["cache_read_input_tokens"] = cache_read
    if cache_creation is not None:
        usage["cache_creation_input_tokens"] = cache_creation
    has_tool = any(b["type"] == "tool_use" for b in blocks)
    body = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": "tool_use" if has_tool else "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }
    return Reply(200, body)


def error(status: int, etype: str = "api_error", message: str = "scripted error") -> Reply:
    return Reply(status, {"type": "error", "error": {"type": etype, "message": message}})
