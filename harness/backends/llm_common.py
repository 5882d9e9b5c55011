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

#: per-call output limit when the sampling settings name none (the reference harness)
DEFAULT_MAX_TOKENS = 16_384
SAMPLING_KEYS = ("temperature", "top_p", "top_k", "max_tokens", "reasoning_effort")
#: api key sent to a custom base URL when none is configured (vLLM/sglang accept any key)
LOCAL_PLACEHOLDER_KEY = "EMPTY"


def resolve_endpoint(backend: str, model: str, api_key: str | None, base_url: str | None,
                     key_env: str, base_env: str) -> tuple[str, str | None]:
    """(api key, base URL) for a backend.

    The environment key (``key_env``) pairs only with the environment base URL (``base_env``) or the
    provider's own endpoint: it is never forwarded to an explicitly given base URL, which could hand
    it to a third party. A base URL without any key gets the placeholder a local server expects.
    """
    key = api_key or None
    if key is None and not base_url:
        key = os.environ.get(key_env) or None
    url = base_url or os.environ.get(base_env) or None
    if key is None:
        if url is None:
            raise AgentHopError(
                f"{backend} backend (model {model!r}): no API key; set {key_env} (or the provider's key "
                "variable) in the environment, or give a --base-url for a local server"
            )
        key = LOCAL_PLACEHOLDER_KEY
    return key, url

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


def parse_arguments(raw: str | None) -> dict[str, Any]:
    """Tool-call arguments as a dict; malformed or non-object JSON gives ``{"_raw": text}``."""
    if raw is None or raw.strip() == "":
        return {}
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, ValueError):
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}


def row(role: str, content: str | None, name: str | None = None, tool_call_id: str | None = None) -> dict[str, Any]:
    """One transcript row (the ``messages`` table's columns role, name, tool_call_id, content)."""
    return {"role": role, "name": name, "tool_call_id": tool_call_id, "content": content}


def merge_reasoning(reasoning: str | None, answer: str | None) -> str:
    """The recorded text of a turn, as the reference merges it (§3.4 step 2)."""
    answer = answer or ""
    if not reasoning:
        return answer
    if not answer:
        return reasoning
    return f"[thinking] {reasoning}\n[answer] {answer}"
