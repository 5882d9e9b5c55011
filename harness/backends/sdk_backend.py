"""The part every real-LLM backend (openai, anthropic, google, responses) shares: its constructor
arguments, the settings resolved from them, and the SDK client bound to the running event loop.

A subclass names itself (``name``), its provider's default key variable (``key_env``) and builds
its SDK client (``_make_client``); settings it derives from the sampling go in ``_prepare``, which
the constructor calls last, so that a bad setting fails when the backend is built.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

from .llm_common import LoopBoundClient, clean_sampling, resolve_endpoint
from .retry import secrets_of

C = TypeVar("C")


class SdkBackend(ABC, Generic[C]):
    """model, validated ``sampling``, ``timeout_s``, the key and base URL (never shown) and the client."""

    #: the backend's name (``--backend``, panel ``backend:``)
    name: ClassVar[str]
    #: the provider's default key variable, read only for the provider's own endpoint
    key_env: ClassVar[str]

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        sampling: dict[str, Any] | None = None,
        timeout_s: float = 600.0,
    ) -> None:
        self.model = model
        self.sampling = clean_sampling(sampling, self.name)
        self.timeout_s = float(timeout_s)
        self._api_key, self._base_url = resolve_endpoint(self.name, model, api_key, base_url,
                                                         self.default_key_env())
        self._secrets = secrets_of(self._api_key, self._base_url)
        self._client: LoopBoundClient[C] = LoopBoundClient(self._make_client)
        self._prepare()

    def default_key_env(self) -> str:
        """The variable the key is read from when none is given (``key_env``)."""
        return self.key_env

    def _prepare(self) -> None:
        """Settings derived from ``sampling`` (none here); raise AgentHopError for a bad one."""

    @abstractmethod
    def _make_client(self) -> C:
        """A new SDK client for ``_api_key`` and ``_base_url`` (or the provider's own endpoint)."""

    def __repr__(self) -> str:  # never shows the key or the endpoint
        return f"{type(self).__name__}(model={self.model!r}, sampling={self.sampling!r})"

    def secrets(self) -> tuple[str, ...]:
        """Strings that must not be written: the key and the base URL (the runner's writer redacts them)."""
        return self._secrets

    async def aclose(self) -> None:
        """Close the SDK client's pooled connections (call at the end of a run, on its event loop)."""
        await self._client.aclose()
