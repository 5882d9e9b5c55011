"""Anthropic Messages API backend (Claude) through the official ``anthropic`` SDK.

``AsyncAnthropic`` with SDK-internal retries disabled (``max_retries=0``); non-streaming
``messages.create``. Conversation format (the reference harness, "Anthropic"):

- ``system`` as one text block; tools as ``{name, description, input_schema}``;
- each assistant turn is re-sent as the raw response blocks (thinking blocks keep their
  signatures; tool_use blocks their ids);
- the results of one turn form ONE user message of ``tool_result`` blocks; nudges and advisories
  that follow a user message are appended to it as text blocks (never two consecutive user
  messages, unlike the reference);
- prompt caching as the reference: an ephemeral ``cache_control`` on the system block and on the
  last tool definition, plus one moving breakpoint on the last tool_result of the latest turn that
  included a tool of ``ctx.cache_after_tools`` (the benchmark's choice; AgentHop: its section reads)
  (earlier moving breakpoints are removed, so at most 3 are in use);
- extended thinking when ``reasoning_effort`` is set: ``thinking={type: enabled, budget_tokens}``
  with low 4096 / medium 8192 / high 16384 (or a number), temperature forced to 1.0, and
  ``max_tokens`` always above the budget, which the reference harness did not ensure
  (docs/backends.md#deliberate-differences-from-the-reference-harness);
- native search (``ctx.native_search``): the server tool ``{type: web_search_20250305, name:
  web_search}`` after the function tools; the API runs the searches and returns ``server_tool_use``
  / ``web_search_tool_result`` blocks (and text blocks with ``citations``), which are re-sent as
  returned; every search becomes a provider call (``native_search.anthropic_calls``). A response
  that stops with ``pause_turn`` (a long server-tool turn) is continued at once, by re-sending the
  paused content as the assistant turn, up to ``MAX_PAUSE_CONTINUATIONS`` times: the loop sees one
  response (the blocks of every part, the tokens summed).

The SDK has no keyword arguments for temperature/top_p/top_k, so set values go in the request
body through ``extra_body``.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic

from ..errors import AgentHopError
from .base import BackendError, ModelResponse, SampleContext, ToolCall
from .calling import call_and_parse, token_count
from .llm_common import DEFAULT_BASE_URLS, DEFAULT_MAX_TOKENS, row
from .native_search import ANTHROPIC_TOOL, anthropic_calls
from .retry import classify
from .sdk_backend import SdkBackend

THINKING_BUDGETS = {"low": 4096, "medium": 8192, "high": 16384}
#: minimum thinking budget the API accepts
MIN_THINKING_BUDGET = 1024
#: output tokens kept for the visible answer/tool calls on top of the thinking budget when the
#: user set no max_tokens
ANSWER_RESERVE_TOKENS = 4096
EPHEMERAL = {"type": "ephemeral"}
#: ``pause_turn`` continuations of one turn before the paused response is taken as it is
MAX_PAUSE_CONTINUATIONS = 4


def thinking_budget(effort: str) -> int:
    """Budget tokens for a reasoning_effort name or a numeric string (the reference harness)."""
    key = effort.strip().lower()
    if key in THINKING_BUDGETS:
        return THINKING_BUDGETS[key]
    if key.isdigit() and int(key) >= MIN_THINKING_BUDGET:
        return int(key)
    raise AgentHopError(
        f"anthropic backend: reasoning_effort {effort!r} is not low/medium/high or a token budget >= "
        f"{MIN_THINKING_BUDGET}"
    )


def classify_anthropic(exc: BaseException, secrets: tuple[str, ...]) -> BackendError:
    """An ``anthropic`` SDK exception as the loop's error."""
    return classify(exc, status_error=anthropic.APIStatusError, connection_error=anthropic.APIConnectionError,
                    always_transient=(anthropic.InternalServerError, anthropic.APITimeoutError),
                    rate_limit=(anthropic.RateLimitError,), secrets=secrets)


class AnthropicBackend(SdkBackend[anthropic.AsyncAnthropic]):
    name = "anthropic"
    key_env = "ANTHROPIC_API_KEY"

    def _prepare(self) -> None:
        self._params: dict[str, Any] = self._request_params()

    def config(self) -> dict[str, Any]:
        """What may be written into a run's config_json (no key, no base URL)."""
        return {"backend": self.name, "model": self.model, "sampling": dict(self.sampling),
                "request": json.loads(json.dumps(self._params)), "timeout_s": self.timeout_s,
                "sdk_max_retries": 0}

    def _make_client(self) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(  # endpoint always explicit: ANTHROPIC_BASE_URL is never read
            api_key=self._api_key, base_url=self._base_url or DEFAULT_BASE_URLS[self.name], max_retries=0,
            timeout=self.timeout_s,
        )

    def _request_params(self) -> dict[str, Any]:
        s = self.sampling
        params: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        if "reasoning_effort" in s:
            budget = thinking_budget(s["reasoning_effort"])
            if "max_tokens" in s:
                if s["max_tokens"] <= budget:
                    raise AgentHopError(
                        f"anthropic backend: max_tokens {s['max_tokens']} must be greater than the thinking "
                        f"budget {budget} (reasoning_effort {s['reasoning_effort']!r})"
                    )
                params["max_tokens"] = s["max_tokens"]
            else:
                params["max_tokens"] = max(DEFAULT_MAX_TOKENS, budget + ANSWER_RESERVE_TOKENS)
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
            extra["temperature"] = 1.0  # required with extended thinking; top_p/top_k are not sent
        else:
            params["max_tokens"] = s.get("max_tokens", DEFAULT_MAX_TOKENS)
            for key in ("temperature", "top_p", "top_k"):
                if key in s:
                    extra[key] = s[key]
        if extra:
            params["extra_body"] = extra
        return params

    def request_params(self) -> dict[str, Any]:
        """Keyword arguments of ``messages.create`` besides model/system/tools/messages."""
        return json.loads(json.dumps(self._params))

    def start(self, ctx: SampleContext) -> AnthropicConversation:
        return AnthropicConversation(self, ctx)


def _wire_block(block: Any) -> dict[str, Any]:
    """A response content block as a request block (only the fields the API accepts back)."""
    btype = getattr(block, "type", None)
    if btype == "text":
        out: dict[str, Any] = {"type": "text", "text": block.text}
        if getattr(block, "citations", None):  # web search citations go back with their encrypted index
            out["citations"] = [c.model_dump(mode="json", exclude_none=True) for c in block.citations]
        return out
    if btype == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if btype == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    if btype == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if btype == "server_tool_use":
        return {"type": "server_tool_use", "id": block.id, "name": block.name, "input": block.input}
    if btype == "web_search_tool_result":
        content = block.content
        return {"type": "web_search_tool_result", "tool_use_id": block.tool_use_id,
                "content": [r.model_dump(mode="json", exclude_none=True) for r in content]
                if isinstance(content, list) else content.model_dump(mode="json", exclude_none=True)}
    return block.model_dump(mode="json", exclude_none=True)


class AnthropicConversation:
    def __init__(self, backend: AnthropicBackend, ctx: SampleContext) -> None:
        self._backend = backend
        self.system: list[dict[str, Any]] = [{"type": "text", "text": ctx.system_prompt, "cache_control": EPHEMERAL}]
        self.cache_after_tools = ctx.cache_after_tools
        self.tools: list[dict[str, Any]] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in ctx.tools
        ]
        if ctx.native_search:
            self.tools.append(dict(ANTHROPIC_TOOL))
        if self.tools:
            self.tools[-1]["cache_control"] = EPHEMERAL
        self.messages: list[dict[str, Any]] = [
            {"role": "user", "content": [{"type": "text", "text": ctx.user_prompt}]}
        ]
        self._transcript: list[dict[str, Any]] = [row("system", ctx.system_prompt), row("user", ctx.user_prompt)]

    async def complete(self) -> ModelResponse:
        resp = await self._call(self.messages)
        for _ in range(MAX_PAUSE_CONTINUATIONS):
            if self._stop_reason != "pause_turn" or not isinstance(resp.raw, list):
                break
            # the API paused a long server-tool turn: send the paused content back to let it go on
            more = await self._call([*self.messages, {"role": "assistant", "content": list(resp.raw)}])
            resp = _joined(resp, more)
        return resp

    async def _call(self, messages: list[dict[str, Any]]) -> ModelResponse:
        b = self._backend
        params = dict(b._params)
        # system, messages and tools go in the body as they are (``extra_body`` is merged over the SDK's
        # JSON), skipping the SDK's recursive transform of the growing history; the wire request is the same
        body: dict[str, Any] = {**params.pop("extra_body", {}), "system": self.system,
                                "messages": list(messages)}
        if self.tools:
            body["tools"] = self.tools
        kwargs: dict[str, Any] = {"model": b.model, "messages": [], **params, "extra_body": body}
        return await call_and_parse(lambda: b._client.get().messages.create(**kwargs), self._parse,
                                    sdk_errors=(anthropic.AnthropicError,), classify_error=classify_anthropic,
                                    what="malformed message", secrets=b._secrets)

    def _parse(self, response: Any) -> ModelResponse:
        blocks = getattr(response, "content", None)
        if blocks is None:
            raise BackendError("malformed message: no content")
        self._stop_reason = getattr(response, "stop_reason", None)
        parts: list[str] = []
        calls: list[ToolCall] = []
        wire: list[dict[str, Any]] = []
        for block in blocks:
            wire.append(_wire_block(block))
            btype = getattr(block, "type", None)
            if btype == "thinking":
                parts.append(f"[thinking] {block.thinking}")
            elif btype == "text":
                parts.append(block.text)
            elif btype == "tool_use":
                # a non-object input reaches the tool as it is (the reference's error text)
                calls.append(ToolCall(id=block.id, name=block.name, args=block.input))
        usage = getattr(response, "usage", None)
        return ModelResponse(
            text="\n".join(p for p in parts if p),
            tool_calls=calls,
            prompt_tokens=token_count(getattr(usage, "input_tokens", None), "usage.input_tokens"),
            completion_tokens=token_count(getattr(usage, "output_tokens", None), "usage.output_tokens"),
            cache_read_tokens=token_count(getattr(usage, "cache_read_input_tokens", None), "usage.cache_read_input_tokens"),
            cache_creation_tokens=token_count(getattr(usage, "cache_creation_input_tokens", None), "usage.cache_creation_input_tokens"),
            raw=wire,
            provider_calls=anthropic_calls(wire),
        )

    _stop_reason: str | None = None

    def add_assistant(self, response: ModelResponse) -> None:
        if isinstance(response.raw, list):
            content = [dict(b) for b in response.raw]
        else:  # a response built elsewhere: rebuild from the neutral fields
            content = ([{"type": "text", "text": response.text}] if response.text else []) + [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.args} for c in response.tool_calls]
        self.messages.append({"role": "assistant", "content": content})
        self._transcript.append(row("assistant", response.text))

    def add_tool_results(self, results: list[tuple[ToolCall, str]]) -> None:
        if not results:
            return
        blocks: list[dict[str, Any]] = [
            {"type": "tool_result", "tool_use_id": call.id, "content": text} for call, text in results
        ]
        if any(call.name in self.cache_after_tools for call, _ in results):
            self._drop_dynamic_breakpoints()
            blocks[-1]["cache_control"] = EPHEMERAL
        self.messages.append({"role": "user", "content": blocks})
        for call, text in results:
            self._transcript.append(row("tool", text, name=call.name, tool_call_id=call.id))

    def _drop_dynamic_breakpoints(self) -> None:
        for msg in self.messages:
            if msg["role"] != "user" or not isinstance(msg["content"], list):
                continue
            for block in msg["content"]:
                if block.get("type") == "tool_result":
                    block.pop("cache_control", None)

    def add_user(self, text: str) -> None:
        block = {"type": "text", "text": text}
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == "user":
            last["content"].append(block)
        else:
            self.messages.append({"role": "user", "content": [block]})
        self._transcript.append(row("user", text))

    def transcript(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._transcript]


def _joined(first: ModelResponse, more: ModelResponse) -> ModelResponse:
    """A paused response and its continuation as one turn: the blocks in order, the tokens summed, the
    provider calls read again from all blocks (a search may be answered in the continuation)."""
    raw = [*first.raw, *more.raw] if isinstance(first.raw, list) and isinstance(more.raw, list) else more.raw
    return ModelResponse(
        text="\n".join(t for t in (first.text, more.text) if t),
        tool_calls=[*first.tool_calls, *more.tool_calls],
        prompt_tokens=first.prompt_tokens + more.prompt_tokens,
        completion_tokens=first.completion_tokens + more.completion_tokens,
        cache_read_tokens=first.cache_read_tokens + more.cache_read_tokens,
        cache_creation_tokens=first.cache_creation_tokens + more.cache_creation_tokens,
        raw=raw,
        repaired_chars=first.repaired_chars + more.repaired_chars,
        provider_calls=anthropic_calls(raw) if isinstance(raw, list) else more.provider_calls,
    )
