"""Pieces shared by the real LLM backends (openai.py, anthropic.py): sampling validation, an
SDK client bound to the running event loop, tool-argument parsing and transcript rows."""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from ..errors import AgentHopError
from .base import BackendError, ModelResponse

#: per-call output limit when the sampling settings name none (the reference harness)
DEFAULT_MAX_TOKENS = 16_384
#: ``reasoning_summary`` (auto / concise / detailed / none) applies to the responses backend only
SAMPLING_KEYS = ("temperature", "top_p", "top_k", "max_tokens", "reasoning_effort", "reasoning_summary")
#: api key sent to a custom base URL when none is configured (vLLM/sglang accept any key)
LOCAL_PLACEHOLDER_KEY = "EMPTY"


#: the provider's own endpoint, used when no base URL is given (always passed to the SDK explicitly,
#: so the SDK never picks an endpoint from its environment variables)
DEFAULT_BASE_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com",
                     "responses": "https://api.openai.com/v1",
                     "google": "https://generativelanguage.googleapis.com/"}
#: SDK environment variables that would redirect requests (and the key) to another endpoint
SDK_BASE_URL_ENV = {"openai": ("OPENAI_BASE_URL",), "anthropic": ("ANTHROPIC_BASE_URL",),
                    "responses": ("OPENAI_BASE_URL",), "google": ("GOOGLE_GEMINI_BASE_URL",)}
#: SDK environment variables whose headers the SDK adds to every request (they may carry credentials)
SDK_HEADER_ENV = {"openai": ("OPENAI_CUSTOM_HEADERS",), "anthropic": ("ANTHROPIC_CUSTOM_HEADERS",),
                  "responses": ("OPENAI_CUSTOM_HEADERS",)}


def resolve_endpoint(backend: str, model: str, api_key: str | None, base_url: str | None,
                     key_env: str, base_env: str | None = None) -> tuple[str, str | None]:
    """(api key, base URL or None for the provider's own endpoint) of a backend (docs/backends.md).

    ``api_key`` is the key the caller read from a variable the user named (``--api-key-env``); without
    one, the provider's default variable ``key_env`` is used only for the provider's own endpoint. An
    explicit base URL without a key gets the placeholder a local server expects, never ``key_env``.
    The SDKs' own base-URL and custom-header variables are refused rather than followed (they would
    send the key, or credentials in headers, somewhere the command line does not show).
    """
    check_sdk_environment(backend, model, base_url)
    key = api_key or None
    if key is None and not base_url:
        key = os.environ.get(key_env) or None
        if key is None:
            raise AgentHopError(
                f"{backend} backend (model {model!r}): no API key; set {key_env} in the environment (or name "
                "another variable with --api-key-env), or give a --base-url for a local server"
            )
    return key or LOCAL_PLACEHOLDER_KEY, base_url or None


def check_sdk_environment(backend: str, model: str, base_url: str | None) -> None:
    """Refuse SDK environment variables that would silently redirect requests or add headers."""
    for var in SDK_BASE_URL_ENV.get(backend, ()):
        if os.environ.get(var) and not base_url:
            raise AgentHopError(
                f"{backend} backend (model {model!r}): {var} is set, but the harness does not follow the SDK's "
                f"endpoint variable; pass the endpoint with --base-url (base_url: in a panel) and its key "
                f"variable with --api-key-env, or unset {var}"
            )
    for var in SDK_HEADER_ENV.get(backend, ()):
        if os.environ.get(var) and base_url:
            raise AgentHopError(
                f"{backend} backend (model {model!r}): {var} is set; its headers would be sent to the explicit "
                f"base URL; unset {var}"
            )


T = TypeVar("T")


def clean_sampling(sampling: Mapping[str, Any] | None, backend: str) -> dict[str, Any]:
    """Validated sampling settings without unset (None) entries.

    Unknown keys and wrongly typed values are user errors naming the key, so that a typo in a
    panel file (``temprature``) does not silently run with provider defaults.
    """
    out: dict[str, Any] = {}
    for key, value in (sampling or {}).items():
        if key not in SAMPLING_KEYS:
            raise AgentHopError(
                f"{backend} backend: unknown sampling parameter {key!r} (known: {', '.join(SAMPLING_KEYS)})"
            )
        if value is None:
            continue
        if key in ("temperature", "top_p"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise AgentHopError(f"{backend} backend: sampling {key} must be a number, got {value!r}")
            value = float(value)
        elif key in ("top_k", "max_tokens"):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise AgentHopError(f"{backend} backend: sampling {key} must be a positive integer, got {value!r}")
        elif key == "reasoning_summary":
            if backend != "responses":
                raise AgentHopError(f"{backend} backend: sampling reasoning_summary applies only to the responses "
                                    "backend")
            if value not in ("auto", "concise", "detailed", "none"):
                raise AgentHopError(f"{backend} backend: sampling reasoning_summary must be auto, concise, "
                                    f"detailed or none, got {value!r}")
        elif key == "reasoning_effort":
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise AgentHopError(f"{backend} backend: sampling reasoning_effort must be a string, got {value!r}")
            value = str(value)
        out[key] = value
    return out


class LoopBoundClient(Generic[T]):
    """One SDK client per running event loop.

    An async HTTP client's connection pool belongs to the loop it was first used on; a backend
    object may outlive one ``asyncio.run`` (tests, a CLI running panels one after another), so
    the client is rebuilt when the running loop changes. Building a client costs ~25 ms of CPU,
    too much to repeat for every call. ``aclose()`` releases the pooled connections at the end of
    a run.
    """

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._loop: weakref.ReferenceType[asyncio.AbstractEventLoop] | None = None
        self._client: T | None = None

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is None or self._loop() is not loop:
            self._client = self._factory()
            self._loop = weakref.ref(loop)
        return self._client

    async def aclose(self) -> None:
        """Close the client of the running loop (a client of a finished loop is just dropped)."""
        client, loop = self._client, self._loop() if self._loop is not None else None
        self._client = None
        self._loop = None
        if client is not None and loop is asyncio.get_running_loop():
            await client.close()  # type: ignore[attr-defined]


REPLACEMENT_CHAR = "\ufffd"


def repair_text(text: str) -> tuple[str, int]:
    """``text`` with every lone surrogate (U+D800-U+DFFF, which JSON's ``"\\ud800"`` escapes decode to
    and UTF-8 cannot encode) replaced by U+FFFD, and how many were replaced."""
    try:
        text.encode("utf-8")
        return text, 0
    except UnicodeEncodeError:
        pass
    n = 0
    out = []
    for ch in text:
        if "\ud800" <= ch <= "\udfff":
            out.append(REPLACEMENT_CHAR)
            n += 1
        else:
            out.append(ch)
    return "".join(out), n


def repair_value(value: Any) -> tuple[Any, int]:
    """A JSON-like value (str / list / tuple / dict, keys too) with lone surrogates repaired, and the count."""
    if isinstance(value, str):
        return repair_text(value)
    if isinstance(value, dict):
        total = 0
        out: dict[Any, Any] = {}
        for k, v in value.items():
            k2, a = repair_value(k)
            v2, b = repair_value(v)
            out[k2] = v2
            total += a + b
        return (out, total) if total else (value, 0)
    if isinstance(value, (list, tuple)):
        items = [repair_value(v) for v in value]
        total = sum(n for _, n in items)
        if not total:
            return value, 0
        return type(value)(v for v, _ in items), total
    return value, 0


def repair_response(resp: ModelResponse) -> ModelResponse:
    """Repair lone surrogates in a parsed response before it is re-sent or written (docs/backends.md).

    ``repaired_chars`` counts the characters replaced in what is recorded (text, tool names, ids and
    arguments, the provider calls' arguments); the provider-native payload that is re-sent is repaired the same way.
    """
    text, n = repair_text(resp.text or "")
    resp.text = text
    for call in resp.tool_calls:
        call.id, a = repair_text(call.id)
        call.name, b = repair_text(call.name)
        call.args, c = repair_value(call.args)
        n += a + b + c
    for pcall in resp.provider_calls:  # searches the provider reported (queries, source URLs)
        pcall.args, d = repair_value(pcall.args)
        n += d
    if n or resp.raw is not None:
        resp.raw, _ = repair_value(resp.raw)
    resp.repaired_chars += n
    return resp


def undecodable(exc: BaseException, secrets: tuple[str, ...]) -> BackendError:
    """The error of a call whose answer could not be read (not JSON, cut short, an SDK failure)."""
    from .retry import MAX_ERROR_TEXT, redact

    return BackendError(redact(f"undecodable response: {type(exc).__name__}: {exc}"[:MAX_ERROR_TEXT], secrets))


def parse_arguments(raw: str | None) -> Any:
    """Tool-call arguments as the JSON value they encode (normally a dict); malformed JSON gives
    ``{"_raw": text}``. Valid JSON that is not an object (``["id"]``) is returned as it is, so the
    tool reports the reference's error text for it."""
    if raw is None or raw.strip() == "":
        return {}
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, ValueError):
        return {"_raw": raw}


def row(role: str, content: str | None, name: str | None = None, tool_call_id: str | None = None) -> dict[str, Any]:
    """One transcript row (the ``messages`` table's columns role, name, tool_call_id, content)."""
    return {"role": role, "name": name, "tool_call_id": tool_call_id, "content": content}


def merge_reasoning(reasoning: str | None, answer: str | None) -> str:
    """The recorded text of a turn: the reasoning and the answer merged the way the reference harness
    merges them."""
    answer = answer or ""
    if not reasoning:
        return answer
    if not answer:
        return reasoning
    return f"[thinking] {reasoning}\n[answer] {answer}"
