"""Loopback OpenAI-compatible chat-completions server (non-streaming) with scripted replies.

Replies are built with :func:`completion` (tool calls, reasoning, usage with cached tokens in
OpenAI's ``prompt_tokens_details`` or DeepSeek's ``prompt_cache_hit_tokens`` form) and
:func:`error` (an OpenAI-style error body with a status code).
"""

from __future__ import annotations

import json
from typing import Any

from .scripted_http import Reply, ScriptedServer


class OpenAIServer(ScriptedServer):
    prefix = "/v1"


def tool_call(call_id: str, name: str, args: dict[str, Any] | str) -> dict[str, Any]:
    """A chat-completions tool call; a str ``args`` is sent verbatim (to script malformed JSON)."""
    arguments = args if isinstance(args, str) else json.dumps(args)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def completion(
    *,
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    cached_tokens: int | None = None,
    deepseek_cache_hit: int | None = None,
    reasoning_content: str | None = None,
    model: str = "test-model",
) -> Reply:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    if reasoning_content is not None:
        message["reasoning_content"] = reasoning_content
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    if deepseek_cache_hit is not None:
        usage["prompt_cache_hit_tokens"] = deepseek_cache_hit
        usage["prompt_cache_miss_tokens"] = prompt_tokens - deepseek_cache_hit
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}
        ],
        "usage": usage,
    }
    return Reply(200, body)


def error(status: int, message: str = "scripted error", etype: str = "server_error") -> Reply:
    return Reply(status, {"error": {"message": message, "type": etype, "param": None, "code": None}})
