"""Gemini through the official ``google-genai`` SDK (native generateContent API).

``genai.Client(api_key, http_options=HttpOptions(base_url?, api_version="v1beta", timeout))``, async
``client.aio.models.generate_content``; the SDK does not retry without ``retry_options`` (none are
given), so the loop's retry policy is the only one. Conversation format (docs/backends.md, "Gemini"):

- ``system_instruction`` plus one user Content; automatic function calling disabled; tools as
  FunctionDeclarations whose ``parameters`` use Gemini's Schema form (upper-case type names,
  ``default`` removed, as the reference sends them);
- each model turn is re-sent as the Content the API returned, part for part, so every
  ``thought_signature`` goes back on exactly the part it came with (Gemini 3 refuses a tool
  conversation whose function calls lost their signature);
- the results of one turn form ONE user Content of ``function_response`` parts, one per call, in
  call order, each ``{output: result + footer}`` under the call's name (and its id, when the API gave
  one); nudges and advisories are separate user Contents;
- thinking: ``reasoning_effort`` becomes ``thinking_level`` for Gemini 3 (minimal/low/medium/high)
  and ``thinking_budget`` for Gemini 2.5 (low 1024 / medium 8192 / high 24576 or a number);
  thinking models get ``include_thoughts`` so that thought summaries are recorded as ``[thinking]``
  text (they are re-sent inside the model Content, as the API returned them);
- usage from ``usage_metadata`` (docs/backends.md): prompt = ``prompt_token_count`` - cached +
  ``tool_use_prompt_token_count`` (the search results Google Search grounding put before the model),
  completion = ``candidates_token_count`` + ``thoughts_token_count``, cache read =
  ``cached_content_token_count``;
- native search (``ctx.native_search``): a ``Tool(google_search=GoogleSearch())`` (Google Search
  grounding) besides the function declarations; the queries of the candidate's
  ``grounding_metadata`` become provider calls (``native_search.gemini_calls``); grounding is not part
  of the Content, so nothing of it is re-sent;
- errors by HTTP status (``errors.APIError.code``): 429 RESOURCE_EXHAUSTED (its RetryInfo
  ``retryDelay`` becomes the error's ``retry_after``, which the loop waits, capped), 408 and 5xx
  (503 UNAVAILABLE) are transient, as are connection failures and timeouts; other statuses are an
  error turn.
"""

from __future__ import annotations

import json
import re
from typing import Any

from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from ..errors import AgentHopError
from .base import BackendError, ModelResponse, SampleContext, ToolCall, TransientBackendError
from .calling import call_and_parse, token_count
from .llm_common import DEFAULT_BASE_URLS, DEFAULT_MAX_TOKENS, repair_value, row
from .native_search import gemini_calls
from .retry import MAX_ERROR_TEXT, capped_delay, is_transient_status, parse_duration, redact
from .sdk_backend import SdkBackend

try:  # the HTTP library google-genai is built on (httpx2 in 3.x)
    import httpx2 as _http
except ImportError:  # pragma: no cover - older SDKs use httpx
    import httpx as _http  # type: ignore[no-redef]

#: key variables, in the order they are looked up (the SDK's own order)
KEY_ENVS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
THINKING_LEVELS = ("minimal", "low", "medium", "high")
THINKING_BUDGETS = {"low": 1024, "medium": 8192, "high": 24576}
API_VERSION = "v1beta"
_GEMINI3 = re.compile(r"^(models/)?gemini-3", re.IGNORECASE)
_GEMINI25 = re.compile(r"^(models/)?gemini-2\.5", re.IGNORECASE)
#: JSON-schema keys Gemini's Schema form accepts (others are dropped, ``default`` among them)
_SCHEMA_KEYS = ("type", "description", "enum", "items", "properties", "required", "nullable", "format",
                "minimum", "maximum")


def google_key_env() -> str:
    """The key variable in use: GOOGLE_API_KEY when set, else GEMINI_API_KEY when set, else
    GOOGLE_API_KEY (named in the error)."""
    import os

    for env in KEY_ENVS:
        if os.environ.get(env):
            return env
    return KEY_ENVS[0]


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's JSON schema in Gemini's Schema form: upper-case type names, no ``default``."""
    out: dict[str, Any] = {}
    for key in _SCHEMA_KEYS:
        if key not in schema:
            continue
        value = schema[key]
        if key == "type":
            value = str(value).upper()
        elif key == "properties":
            value = {name: gemini_schema(sub) for name, sub in value.items()}
        elif key == "items":
            value = gemini_schema(value)
        out[key] = value
    return out


def thinking_config(model: str, effort: str | None) -> types.ThinkingConfig | None:
    """ThinkingConfig for ``model`` (None for a model that does not think and no effort)."""
    thinking_model = bool(_GEMINI3.match(model) or _GEMINI25.match(model))
    if effort is None:
        return types.ThinkingConfig(include_thoughts=True) if thinking_model else None
    key = effort.strip().lower()
    if _GEMINI25.match(model):
        if key in THINKING_BUDGETS:
            return types.ThinkingConfig(include_thoughts=True, thinking_budget=THINKING_BUDGETS[key])
        if key.lstrip("-").isdigit():
            return types.ThinkingConfig(include_thoughts=True, thinking_budget=int(key))
        raise AgentHopError(f"google backend: reasoning_effort {effort!r} for {model} is not low/medium/high "
                            "or a thinking budget in tokens")
    if key not in THINKING_LEVELS:
        raise AgentHopError(f"google backend: reasoning_effort {effort!r} for {model} is not one of "
                            f"{', '.join(THINKING_LEVELS)}")
    return types.ThinkingConfig(include_thoughts=True, thinking_level=key)  # type: ignore[arg-type]


def retry_delay_s(details: Any) -> float | None:
    """RetryInfo ``retryDelay`` ("2s", "1.5s") of a Google error body, in seconds."""
    err = details.get("error", details) if isinstance(details, dict) else None
    items = err.get("details") if isinstance(err, dict) else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and str(item.get("@type", "")).endswith("google.rpc.RetryInfo"):
            delay = parse_duration(item.get("retryDelay"))
            if delay is not None:
                return delay
    return None


def classify_google(exc: BaseException, secrets: tuple[str, ...]) -> BackendError:
    """Map a google-genai / HTTP exception onto the loop's two errors, by status code only."""
    name = type(exc).__name__
    if isinstance(exc, genai_errors.APIError):
        status = int(exc.code or 0)
        text = f"{name}: HTTP {status} {exc.status or ''}: {exc.message or ''}".replace("  ", " ")
        msg = redact(text[:MAX_ERROR_TEXT], secrets)
        if is_transient_status(status):
            return TransientBackendError(msg, retry_after=capped_delay(retry_delay_s(exc.details)),
                                         rate_limited=status == 429)
        return BackendError(msg)
    if isinstance(exc, _http.TransportError):  # connection refused/reset, timeouts
        return TransientBackendError(redact(f"{name}: {exc}"[:MAX_ERROR_TEXT], secrets))
    return BackendError(redact(f"{name}: {exc}"[:MAX_ERROR_TEXT], secrets))


class _AsyncClient:
    """The SDK client with the ``close()`` LoopBoundClient calls (its async close is aio.aclose)."""

    def __init__(self, client: genai.Client) -> None:
        self.client = client

    async def close(self) -> None:
        await self.client.aio.aclose()


class GoogleBackend(SdkBackend[_AsyncClient]):
    name = "google"
    key_env = KEY_ENVS[0]

    def default_key_env(self) -> str:
        """GOOGLE_API_KEY or GEMINI_API_KEY, whichever is set now (``google_key_env``)."""
        return google_key_env()

    def _prepare(self) -> None:
        self._thinking = thinking_config(self.model, self.sampling.get("reasoning_effort"))

    def config(self) -> dict[str, Any]:
        """What may be written into a run's config_json (no key, no base URL)."""
        return {"backend": self.name, "model": self.model, "sampling": dict(self.sampling),
                "thinking": self._thinking.model_dump(mode="json", exclude_none=True) if self._thinking else None,
                "timeout_s": self.timeout_s, "sdk_max_retries": 0}

    def _make_client(self) -> _AsyncClient:
        # endpoint, API version and the Gemini API (not Vertex AI) are explicit, so that none of the
        # SDK's environment variables (GOOGLE_GEMINI_BASE_URL, GOOGLE_GENAI_USE_VERTEXAI,
        # GOOGLE_GENAI_API_VERSION) can send the request or the key elsewhere
        # an explicit httpx transport: with aiohttp installed (inspect-ai brings it) the SDK would switch
        # to aiohttp, whose exceptions the classifier below does not know
        options = types.HttpOptions(base_url=self._base_url or DEFAULT_BASE_URLS[self.name],
                                    api_version=API_VERSION, timeout=int(self.timeout_s * 1000),
                                    async_client_args={"transport": _http.AsyncHTTPTransport()})
        return _AsyncClient(genai.Client(vertexai=False, api_key=self._api_key, http_options=options))

    def generation_config(self, system: str, tools: list[types.Tool]) -> types.GenerateContentConfig:
        s = self.sampling
        kwargs: dict[str, Any] = {
            "system_instruction": system,
            "max_output_tokens": s.get("max_tokens", DEFAULT_MAX_TOKENS),
            "automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True),
        }
        for key in ("temperature", "top_p", "top_k"):
            if key in s:
                kwargs[key] = s[key]
        if tools:
            kwargs["tools"] = tools
        if self._thinking is not None:
            kwargs["thinking_config"] = self._thinking
        return types.GenerateContentConfig(**kwargs)

    def start(self, ctx: SampleContext) -> GoogleConversation:
        return GoogleConversation(self, ctx)


class GoogleConversation:
    def __init__(self, backend: GoogleBackend, ctx: SampleContext) -> None:
        self._backend = backend
        self._calls = 0
        declarations = [types.FunctionDeclaration(name=t.name, description=t.description,
                                                  parameters=gemini_schema(t.parameters))  # type: ignore[arg-type]
                        for t in ctx.tools]
        tools = [types.Tool(function_declarations=declarations)] if declarations else []
        if ctx.native_search:
            tools.append(types.Tool(google_search=types.GoogleSearch()))
        self.config = backend.generation_config(ctx.system_prompt, tools)
        self.contents: list[types.Content] = [types.Content(role="user", parts=[types.Part(text=ctx.user_prompt)])]
        self._transcript: list[dict[str, Any]] = [row("system", ctx.system_prompt), row("user", ctx.user_prompt)]

    async def complete(self) -> ModelResponse:
        b = self._backend
        self._calls += 1
        resp = await call_and_parse(
            lambda: b._client.get().client.aio.models.generate_content(model=b.model, contents=list(self.contents),
                                                                       config=self.config),
            self._parse, sdk_errors=(genai_errors.APIError, _http.HTTPError), classify_error=classify_google,
            what="malformed Gemini response", secrets=b._secrets)
        if resp.repaired_chars and isinstance(resp.raw, types.Content):
            # lone surrogates repaired in the Content that is re-sent too (signatures are bytes, untouched)
            fixed, _ = repair_value(resp.raw.model_dump(exclude_none=True))
            resp.raw = types.Content.model_validate(fixed)
        return resp

    def _parse(self, response: Any) -> ModelResponse:
        candidates = getattr(response, "candidates", None) or []
        content = candidates[0].content if candidates else None
        if content is None:
            reason = getattr(getattr(response, "prompt_feedback", None), "block_reason", None)
            raise BackendError(f"malformed Gemini response: no candidate content"
                               f"{f' (prompt blocked: {reason})' if reason else ''}")
        thoughts: list[str] = []
        answer: list[str] = []
        calls: list[ToolCall] = []
        for part in content.parts or []:
            fc = part.function_call
            if fc is not None:
                args: Any = dict(fc.args) if isinstance(fc.args, dict) else (fc.args if fc.args is not None else {})
                calls.append(ToolCall(id=fc.id or f"genai_{self._calls - 1}_{len(calls)}", name=fc.name or "",
                                      args=args))
            elif part.text:
                (thoughts if part.thought else answer).append(part.text)
        usage = getattr(response, "usage_metadata", None)
        def count(name: str) -> int:
            return token_count(getattr(usage, name, None), f"usage_metadata.{name}")

        prompt = count("prompt_token_count")
        cached = min(count("cached_content_token_count"), prompt)
        tool_prompt = count("tool_use_prompt_token_count")
        completion = count("candidates_token_count") + count("thoughts_token_count")
        text = "\n".join([f"[thinking] {t}" for t in thoughts] + answer)
        if content.role is None:
            content = content.model_copy(update={"role": "model"})
        return ModelResponse(text=text, tool_calls=calls, prompt_tokens=prompt - cached + tool_prompt,
                             completion_tokens=completion, cache_read_tokens=cached, raw=content,
                             provider_calls=gemini_calls(candidates[0]))

    def add_assistant(self, response: ModelResponse) -> None:
        if isinstance(response.raw, types.Content):
            content = response.raw  # verbatim: every thought_signature stays on its part
        else:  # a response built elsewhere: rebuild from the neutral fields
            parts = ([types.Part(text=response.text)] if response.text else []) + [
                types.Part(function_call=types.FunctionCall(name=c.name, args=c.args if isinstance(c.args, dict)
                                                            else {"_raw": json.dumps(c.args)}))
                for c in response.tool_calls]
            content = types.Content(role="model", parts=parts)
        self.contents.append(content)
        self._transcript.append(row("assistant", response.text))

    def add_tool_results(self, results: list[tuple[ToolCall, str]]) -> None:
        if not results:
            return
        parts = [types.Part(function_response=types.FunctionResponse(
            id=None if call.id.startswith("genai_") else call.id, name=call.name, response={"output": text}))
            for call, text in results]
        self.contents.append(types.Content(role="user", parts=parts))
        for call, text in results:
            self._transcript.append(row("tool", text, name=call.name, tool_call_id=call.id))

    def add_user(self, text: str) -> None:
        self.contents.append(types.Content(role="user", parts=[types.Part(text=text)]))
        self._transcript.append(row("user", text))

    def transcript(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._transcript]


__all__ = ["GoogleBackend", "gemini_schema", "google_key_env", "retry_delay_s", "thinking_config"]
