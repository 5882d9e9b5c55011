"""OpenAI-compatible chat-completions backend (OpenAI, DeepSeek, Together, xAI, vLLM, sglang).

Uses the official ``openai`` SDK (``AsyncOpenAI``, non-streaming ``chat.completions.create``)
with SDK-internal retries disabled (``max_retries=0``): the loop's retry policy is the only one.

Conversation format (the reference harness, "OpenAI chat"): system + user message; tools as
``{type: function, function: {name, description, parameters}}``; no ``tool_choice`` and no
``parallel_tool_calls``. Each assistant turn is re-sent as ``{role: assistant, content,
tool_calls, reasoning_content?}`` and each result as one ``role: tool`` message.

Deliberate differences from the reference (docs/backends.md):
- the visible content re-sent on a nudge turn is the model's answer text only; the reasoning
  goes back in ``reasoning_content``, never as ``[thinking] ...`` visible text (the reference re-sent
  it that way). The merged text is still what the turn records;
- gpt-5* and o-series models get ``max_completion_tokens`` (the reference: gpt-5* only);
- errors are classified by SDK exception type and HTTP status, not by message substrings;
- tool calls without an id get a synthetic id that the re-sent assistant message declares;
- no text-tool fallback: calls must come as structured ``tool_calls``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import openai

from .base import BackendError, ModelResponse, SampleContext, ToolCall
from .calling import call_and_parse, token_count
from .llm_common import DEFAULT_BASE_URLS, DEFAULT_MAX_TOKENS, merge_reasoning, parse_arguments, row
from .retry import classify
from .sdk_backend import SdkBackend

#: models that reject ``max_tokens`` and need ``max_completion_tokens`` (gpt-5*, o1/o3/o4...)
_COMPLETION_TOKENS_MODEL = re.compile(r"^(gpt-5|o[1-9])(?![0-9a-z])", re.IGNORECASE)


def uses_max_completion_tokens(model: str) -> bool:
    """True for gpt-5* and o-series models (a provider prefix such as ``openai/`` is ignored)."""
    return bool(_COMPLETION_TOKENS_MODEL.match(model.rsplit("/", 1)[-1]))


def cached_prompt_tokens(usage: Any) -> int:
    """Cached input tokens of a chat-completions ``usage``, counted as the reference does:
    ``prompt_tokens_details.cached_tokens``, and DeepSeek's ``prompt_cache_hit_tokens`` whenever that
    is missing OR zero (a DeepSeek reply with ``cached_tokens: 0`` and ``prompt_cache_hit_tokens: N``
    counts N cached)."""
    if usage is None:
        return 0
    details = getattr(usage, "prompt_tokens_details", None)
    cached = token_count(getattr(details, "cached_tokens", None), "usage.prompt_tokens_details.cached_tokens")
    if cached == 0:
        cached = token_count((getattr(usage, "model_extra", None) or {}).get("prompt_cache_hit_tokens"),
                             "usage.prompt_cache_hit_tokens")
    return cached


def classify_openai(exc: BaseException, secrets: tuple[str, ...]) -> BackendError:
    """An ``openai`` SDK exception as the loop's error (chat completions and the Responses API)."""
    return classify(exc, status_error=openai.APIStatusError, connection_error=openai.APIConnectionError,
                    always_transient=(openai.InternalServerError, openai.APITimeoutError),
                    rate_limit=(openai.RateLimitError,), secrets=secrets)


class OpenAIBackend(SdkBackend[openai.AsyncOpenAI]):
    name = "openai"
    key_env = "OPENAI_API_KEY"

    def config(self) -> dict[str, Any]:
        """What may be written into a run's config_json (no key, no base URL)."""
        return {"backend": self.name, "model": self.model, "sampling": dict(self.sampling),
                "timeout_s": self.timeout_s, "sdk_max_retries": 0}

    def _make_client(self) -> openai.AsyncOpenAI:
        # endpoint always explicit (the SDK never reads OPENAI_BASE_URL); a third-party endpoint gets
        # neither the OpenAI organization nor the project header from OPENAI_ORG_ID / OPENAI_PROJECT_ID
        headers = None if self._base_url is None else {"OpenAI-Organization": openai.Omit(),
                                                       "OpenAI-Project": openai.Omit()}
        return openai.AsyncOpenAI(
            api_key=self._api_key, base_url=self._base_url or DEFAULT_BASE_URLS[self.name], max_retries=0,
            timeout=self.timeout_s, default_headers=headers,  # type: ignore[arg-type]
        )

    def request_params(self) -> dict[str, Any]:
        """Sampling keyword arguments of ``chat.completions.create`` for this model."""
        s = self.sampling
        params: dict[str, Any] = {}
        for key in ("temperature", "top_p", "reasoning_effort"):
            if key in s:
                params[key] = s[key]
        limit_key = "max_completion_tokens" if uses_max_completion_tokens(self.model) else "max_tokens"
        params[limit_key] = s.get("max_tokens", DEFAULT_MAX_TOKENS)
        if "top_k" in s:  # not part of the OpenAI API; vLLM/sglang/Together read it from the body
            params["extra_body"] = {"top_k": s["top_k"]}
        return params

    def start(self, ctx: SampleContext) -> OpenAIConversation:
        if ctx.native_search:  # no search tool of its own (harness/backends/native_search.py)
            from .native_search import unsupported

            raise unsupported(self.name)
        return OpenAIConversation(self, ctx)


class OpenAIConversation:
    def __init__(self, backend: OpenAIBackend, ctx: SampleContext) -> None:
        self._backend = backend
        self._calls = 0
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": ctx.system_prompt},
            {"role": "user", "content": ctx.user_prompt},
        ]
        self.tools: list[dict[str, Any]] = [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in ctx.tools
        ]
        self._transcript: list[dict[str, Any]] = [row("system", ctx.system_prompt), row("user", ctx.user_prompt)]

    async def complete(self) -> ModelResponse:
        b = self._backend
        kwargs: dict[str, Any] = {"model": b.model, **b.request_params()}
        # messages and tools go in the body as they are (``extra_body`` is merged over the SDK's JSON):
        # the SDK's recursive TypedDict transform of a growing history costs ~17 ms of CPU per call and
        # changes nothing for plain JSON; the request on the wire is the same
        body: dict[str, Any] = {**kwargs.pop("extra_body", {}), "messages": list(self.messages)}
        if self.tools:
            body["tools"] = self.tools
        kwargs["messages"] = []
        kwargs["extra_body"] = body
        self._calls += 1
        return await call_and_parse(lambda: b._client.get().chat.completions.create(**kwargs), self._parse,
                                    sdk_errors=(openai.OpenAIError,), classify_error=classify_openai,
                                    what="malformed chat completion", secrets=b._secrets)

    def _parse(self, response: Any) -> ModelResponse:
        choices = getattr(response, "choices", None)
        if not choices:
            raise BackendError("malformed chat completion: no choices")
        message = choices[0].message
        if message is None:
            raise BackendError("malformed chat completion: choice without a message")
        extra = getattr(message, "model_extra", None) or {}
        reasoning = extra.get("reasoning_content") or extra.get("reasoning") or None
        if reasoning is not None and not isinstance(reasoning, str):
            reasoning = json.dumps(reasoning)
        content = message.content if isinstance(message.content, str) else None

        calls: list[ToolCall] = []
        wire_calls: list[dict[str, Any]] = []
        for i, tc in enumerate(message.tool_calls or []):
            fn = getattr(tc, "function", None)
            if fn is None:  # custom (non-function) tool calls: we never declare such tools
                continue
            call_id = tc.id or f"call_{self._calls - 1}_{i}"
            raw_args = fn.arguments if isinstance(fn.arguments, str) else json.dumps(fn.arguments)
            args = parse_arguments(raw_args)
            # malformed arguments are re-sent as valid JSON so strict servers accept the history
            wire_args = json.dumps(args) if args == {"_raw": raw_args} else raw_args
            calls.append(ToolCall(id=call_id, name=fn.name or "", args=args))
            wire_calls.append({"id": call_id, "type": "function", "function": {"name": fn.name or "",
                                                                               "arguments": wire_args}})

        usage = getattr(response, "usage", None)
        prompt = token_count(getattr(usage, "prompt_tokens", None), "usage.prompt_tokens")
        completion = token_count(getattr(usage, "completion_tokens", None), "usage.completion_tokens")
        cached = min(cached_prompt_tokens(usage), prompt)

        return ModelResponse(
            text=merge_reasoning(reasoning, content),
            tool_calls=calls,
            prompt_tokens=prompt - cached,
            completion_tokens=completion,
            cache_read_tokens=cached,
            cache_creation_tokens=0,
            raw={"content": content, "reasoning_content": reasoning, "tool_calls": wire_calls},
        )

    def add_assistant(self, response: ModelResponse) -> None:
        raw = response.raw if isinstance(response.raw, dict) else None
        if raw is None:  # a response built elsewhere: rebuild from the neutral fields
            raw = {"content": response.text, "reasoning_content": None, "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.args)}}
                for c in response.tool_calls]}
        msg: dict[str, Any] = {"role": "assistant", "content": raw["content"] if raw["tool_calls"] else
                               (raw["content"] or "")}
        if raw["tool_calls"]:
            msg["tool_calls"] = raw["tool_calls"]
        if raw.get("reasoning_content"):
            msg["reasoning_content"] = raw["reasoning_content"]
        self.messages.append(msg)
        self._transcript.append(row("assistant", response.text))

    def add_tool_results(self, results: list[tuple[ToolCall, str]]) -> None:
        for call, text in results:
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
            self._transcript.append(row("tool", text, name=call.name, tool_call_id=call.id))

    def add_user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})
        self._transcript.append(row("user", text))

    def transcript(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._transcript]
