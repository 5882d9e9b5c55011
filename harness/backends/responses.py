"""OpenAI Responses API backend (GPT-5.x, Codex) through the official ``openai`` SDK.

``AsyncOpenAI(max_retries=0)``, non-streaming ``responses.create``. Stateless: every request has
``store=false`` and ``include=["reasoning.encrypted_content"]`` and carries the whole conversation
(the reference chained ``previous_response_id`` on stored responses instead):

- ``instructions`` = the system prompt; ``input`` starts with the first user message;
- tools in the flat form ``{type: function, name, description, parameters}``; no ``tool_choice``,
  no ``parallel_tool_calls``;
- after each response its output items are appended to ``input`` exactly as returned, in order,
  so every reasoning item (with its encrypted content) is re-sent right before the function calls
  it preceded (the API refuses a function call without its reasoning item);
- one ``{type: function_call_output, call_id, output}`` item per executed call; nudges and
  advisories as user messages;
- sampling: ``max_output_tokens`` (default 16,384), ``reasoning: {effort, summary}`` when
  ``reasoning_effort`` is set (summary ``auto`` unless ``reasoning_summary`` says otherwise;
  ``none`` asks for none), ``temperature``/``top_p`` when set; ``top_k`` is not part of the API and
  is not sent;
- recorded text: one ``[thinking] {summary}`` line per reasoning summary, then the answer text;
- usage: prompt = ``input_tokens`` - cached, completion = ``output_tokens`` (reasoning included),
  cache read = ``input_tokens_details.cached_tokens``;
- errors and retries exactly as the chat-completions backend (``retry.classify``);
- native search (``ctx.native_search``): the ``{type: web_search}`` tool besides the function tools
  and ``web_search_call.action.sources`` in ``include``; every ``web_search_call`` item of the output
  becomes a provider call (``native_search.responses_calls``) and is re-sent with the other items.
"""

from __future__ import annotations

import json
from typing import Any

import openai

from .base import BackendError, ModelResponse, SampleContext, ToolCall
from .calling import call_and_parse, token_count
from .llm_common import DEFAULT_BASE_URLS, DEFAULT_MAX_TOKENS, parse_arguments, row
from .native_search import RESPONSES_INCLUDE, RESPONSES_TOOL, responses_calls
from .openai import classify_openai
from .sdk_backend import SdkBackend

INCLUDE = ["reasoning.encrypted_content"]
DEFAULT_SUMMARY = "auto"


class ResponsesBackend(SdkBackend[openai.AsyncOpenAI]):
    name = "responses"
    key_env = "OPENAI_API_KEY"

    def config(self) -> dict[str, Any]:
        """What may be written into a run's config_json (no key, no base URL)."""
        return {"backend": self.name, "model": self.model, "sampling": dict(self.sampling),
                "request": self.request_params(), "store": False, "timeout_s": self.timeout_s,
                "sdk_max_retries": 0}

    def _make_client(self) -> openai.AsyncOpenAI:
        # as the chat backend: the endpoint is always explicit, and a third-party endpoint gets no
        # OpenAI organization/project headers
        headers = None if self._base_url is None else {"OpenAI-Organization": openai.Omit(),
                                                       "OpenAI-Project": openai.Omit()}
        return openai.AsyncOpenAI(api_key=self._api_key, base_url=self._base_url or DEFAULT_BASE_URLS[self.name],
                                  max_retries=0, timeout=self.timeout_s,
                                  default_headers=headers)  # type: ignore[arg-type]

    def request_params(self) -> dict[str, Any]:
        """Keyword arguments of ``responses.create`` besides model/instructions/input/tools."""
        s = self.sampling
        params: dict[str, Any] = {"store": False, "include": list(INCLUDE),
                                  "max_output_tokens": s.get("max_tokens", DEFAULT_MAX_TOKENS)}
        if "reasoning_effort" in s:
            reasoning: dict[str, Any] = {"effort": s["reasoning_effort"]}
            summary = s.get("reasoning_summary", DEFAULT_SUMMARY)
            if summary != "none":
                reasoning["summary"] = summary
            params["reasoning"] = reasoning
        for key in ("temperature", "top_p"):
            if key in s:
                params[key] = s[key]
        return params

    def start(self, ctx: SampleContext) -> ResponsesConversation:
        return ResponsesConversation(self, ctx)


class ResponsesConversation:
    def __init__(self, backend: ResponsesBackend, ctx: SampleContext) -> None:
        self._backend = backend
        self.instructions = ctx.system_prompt
        self.tools: list[dict[str, Any]] = [
            {"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters}
            for t in ctx.tools
        ]
        self.native_search = ctx.native_search
        if ctx.native_search:
            self.tools.append(dict(RESPONSES_TOOL))
        self.input: list[dict[str, Any]] = [{"role": "user", "content": ctx.user_prompt}]
        self._transcript: list[dict[str, Any]] = [row("system", ctx.system_prompt), row("user", ctx.user_prompt)]

    async def complete(self) -> ModelResponse:
        b = self._backend
        kwargs: dict[str, Any] = {"model": b.model, "instructions": self.instructions, "input": list(self.input),
                                  **b.request_params()}
        if self.native_search:
            kwargs["include"] = [*kwargs["include"], RESPONSES_INCLUDE]
        if self.tools:
            kwargs["tools"] = self.tools
        return await call_and_parse(lambda: b._client.get().responses.create(**kwargs), self._parse,
                                    sdk_errors=(openai.OpenAIError,), classify_error=classify_openai,
                                    what="malformed response", secrets=b._secrets)

    def _parse(self, response: Any) -> ModelResponse:
        output = getattr(response, "output", None)
        if output is None:
            raise BackendError("malformed response: no output")
        thoughts: list[str] = []
        answer: list[str] = []
        calls: list[ToolCall] = []
        items: list[dict[str, Any]] = []
        for item in output:
            items.append(item.model_dump(mode="json", exclude_none=True))
            itype = getattr(item, "type", None)
            if itype == "reasoning":
                thoughts.extend(s.text for s in item.summary or [] if getattr(s, "text", None))
            elif itype == "function_call":
                calls.append(ToolCall(id=item.call_id, name=item.name, args=parse_arguments(item.arguments)))
            elif itype == "message":
                answer.extend(c.text for c in item.content or [] if getattr(c, "type", None) == "output_text")
        usage = getattr(response, "usage", None)
        prompt = token_count(getattr(usage, "input_tokens", None), "usage.input_tokens")
        details = getattr(usage, "input_tokens_details", None)
        cached = min(token_count(getattr(details, "cached_tokens", None), "usage.input_tokens_details.cached_tokens"),
                     prompt)
        return ModelResponse(
            text="\n".join([f"[thinking] {t}" for t in thoughts] + answer),
            tool_calls=calls,
            prompt_tokens=prompt - cached,
            completion_tokens=token_count(getattr(usage, "output_tokens", None), "usage.output_tokens"),
            cache_read_tokens=cached,
            raw=items,
            provider_calls=responses_calls(items),
        )

    def add_assistant(self, response: ModelResponse) -> None:
        if isinstance(response.raw, list):
            items = [dict(i) for i in response.raw]  # as returned: reasoning items stay before their calls
        else:  # a response built elsewhere: rebuild from the neutral fields
            items = ([{"type": "message", "role": "assistant", "content": response.text}] if response.text else []) + [
                {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": json.dumps(c.args)}
                for c in response.tool_calls]
        self.input.extend(items)
        self._transcript.append(row("assistant", response.text))

    def add_tool_results(self, results: list[tuple[ToolCall, str]]) -> None:
        for call, text in results:
            self.input.append({"type": "function_call_output", "call_id": call.id, "output": text})
            self._transcript.append(row("tool", text, name=call.name, tool_call_id=call.id))

    def add_user(self, text: str) -> None:
        self.input.append({"role": "user", "content": text})
        self._transcript.append(row("user", text))

    def transcript(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._transcript]
