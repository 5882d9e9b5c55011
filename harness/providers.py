"""Which provider serves a model id, and the reference's sampling preset for it (docs/backends.md).

``detect_provider(model_id)``: the reference's prefix table (docs/backends.md, first case-insensitive
match): backend, key variable and default endpoint. ``sampling_preset(model_id)``: the reference's
recommended sampling (docs/backends.md, longest case-insensitive prefix). Both are used by
``agenthop-harness run --model ID``: detection when ``--backend`` is not given (explicit flags always
win), the preset for every real-backend ``--model`` (the command line has no sampling flags).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Provider:
    backend: str
    key_env: str
    #: None: the SDK's own endpoint for the backend
    base_url: str | None
    label: str

    @property
    def host(self) -> str:
        return endpoint_host(self.backend, self.base_url)


DEEPSEEK_URL = "https://api.deepseek.com/v1"
TOGETHER_URL = "https://api.together.xyz/v1"
XAI_URL = "https://api.x.ai/v1"
GEMINI_OPENAI_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"

#: (prefixes, provider), tried in order; the first prefix match wins (docs/backends.md)
PROVIDER_PREFIXES: tuple[tuple[tuple[str, ...], Provider], ...] = (
    (("codex-", "gpt-5.3-codex", "gpt-5.1-codex", "gpt-5-codex"),
     Provider("responses", "OPENAI_API_KEY", None, "OpenAI (Responses API)")),
    (("gpt-5.4", "gpt-5.3", "gpt-5.2", "gpt-5.1", "gpt-5-"),
     Provider("responses", "OPENAI_API_KEY", None, "OpenAI (Responses API)")),
    (("gpt-", "o1-", "o3-", "o4-"), Provider("openai", "OPENAI_API_KEY", None, "OpenAI")),
    (("deepseek-",), Provider("openai", "DEEPSEEK_API_KEY", DEEPSEEK_URL, "DeepSeek")),
    (("claude-",), Provider("anthropic", "ANTHROPIC_API_KEY", None, "Anthropic")),
    (("gemini-3", "gemini-2.5"), Provider("google", "GOOGLE_API_KEY", None, "Google Gemini API")),
    (("gemini-",), Provider("openai", "GOOGLE_API_KEY", GEMINI_OPENAI_URL, "Google (OpenAI-compatible)")),
    (("zai-org/", "moonshotai/", "minimaxai/"), Provider("openai", "TOGETHER_API_KEY", TOGETHER_URL, "Together")),
    (("grok-",), Provider("openai", "XAI_API_KEY", XAI_URL, "xAI")),
)

#: the SDKs' own endpoints, for display (the backends pass the same ones explicitly)
SDK_ENDPOINTS = {"openai": "api.openai.com", "responses": "api.openai.com", "anthropic": "api.anthropic.com",
                 "google": "generativelanguage.googleapis.com"}


def public_endpoint(base_url: str | None) -> bool:
    """True for the providers' own public API hosts (which always need a real key)."""
    if not base_url:
        return False
    host = urlsplit(base_url).hostname or ""
    known = set(SDK_ENDPOINTS.values()) | {urlsplit(p.base_url).hostname for _, p in PROVIDER_PREFIXES if p.base_url}
    return host.lower() in known


def detect_provider(model_id: str) -> Provider | None:
    """The provider of ``model_id`` by the reference's prefix table, or None when no prefix matches."""
    low = model_id.lower()
    for prefixes, provider in PROVIDER_PREFIXES:
        if any(low.startswith(p) for p in prefixes):
            return provider
    return None


def endpoint_host(backend: str, base_url: str | None) -> str:
    """Host (and port) a backend's requests go to: of ``base_url``, else of the SDK's endpoint."""
    if base_url:
        return urlsplit(base_url).netloc.rsplit("@", 1)[-1] or base_url
    return SDK_ENDPOINTS.get(backend, "-")


# Sampling presets (docs/backends.md). A value of None is not sent; an empty preset sets nothing.
_PRESETS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("claude-opus-4-6", "claude-sonnet-4-6"), {"reasoning_effort": "medium"}),
    (("claude-opus-4-1", "claude-opus-4", "claude-opus-4-5", "claude-sonnet-4-5", "claude-sonnet-4"),
     {"reasoning_effort": "8192"}),
    (("claude-haiku-4-5", "claude-haiku-4"), {}),
    (("gpt-5.4", "gpt-5.3-codex", "gpt-5"), {"reasoning_effort": "medium"}),
    (("deepseek-chat", "deepseek-reasoner"), {"max_tokens": 8192}),
    (("gemini-3.1-pro", "gemini-3-pro-preview", "gemini-3-pro", "gemini-3.1-flash", "gemini-3-flash-preview",
      "gemini-3-flash"), {"top_k": 64, "reasoning_effort": "medium"}),
    (("gemini-2.5-pro", "gemini-2.5-flash"), {"top_k": 64}),
    (("zai-org/glm-5.1", "glm-5.1"), {}),
    (("minimaxai/minimax-m2.7", "minimax-m2.7"), {"top_k": 40}),
    (("moonshotai/kimi-k2.5", "kimi-k2.5"), {"temperature": 0.6}),
    (("qwen/qwen3.5-", "qwen3.5-", "qwen/qwen3.6-", "qwen3.6-"), {"top_k": 20}),
    (("qwen/qwen3-", "qwen3-"), {"temperature": 0.7, "top_p": 0.8, "top_k": 20}),
    (("google/gemma-4-", "gemma-4-", "google/gemma-3-", "gemma-3-"), {"top_k": 64}),
    (("meta-llama/llama-3.3-", "llama-3.3-"), {"temperature": 0.6, "top_p": 0.9}),
)


def sampling_preset(model_id: str) -> tuple[str, dict[str, Any]] | None:
    """(matched prefix, sampling) of the longest preset prefix of ``model_id``, or None."""
    low = model_id.lower()
    best: tuple[str, dict[str, Any]] | None = None
    for prefixes, preset in _PRESETS:
        for p in prefixes:
            if low.startswith(p) and (best is None or len(p) > len(best[0])):
                best = (p, dict(preset))
    return best


@dataclass(frozen=True)
class Detected:
    """What ``--model ID`` without ``--backend`` resolves to, and the line that tells the user."""

    backend: str
    base_url: str | None
    #: None: the backend's own default variable
    api_key_env: str | None
    note: str


def detect_for_cli(model_id: str, base_url: str | None, api_key_env: str | None) -> Detected | None:
    """Backend, endpoint and key variable of a ``--model`` given without ``--backend``.

    Explicit flags win: a given ``--base-url`` replaces the detected endpoint, and then the detected
    key variable is NOT used (a key goes only to its own provider; without ``--api-key-env`` such an
    endpoint gets the placeholder key); a given ``--api-key-env`` replaces the detected variable.
    """
    from .panel import DEFAULT_KEY_ENVS, default_key_env

    provider = detect_provider(model_id)
    if provider is None:
        return None
    url = base_url or provider.base_url
    if api_key_env is not None:
        key_env: str | None = api_key_env
    elif base_url is None and provider.key_env not in DEFAULT_KEY_ENVS.get(provider.backend, ()):
        key_env = provider.key_env  # e.g. DEEPSEEK_API_KEY, with its provider's endpoint
    else:
        key_env = None  # the backend's own default variable(s), or the placeholder for a given --base-url
    if key_env is None and base_url:
        shown_key = "no key (placeholder key for the given --base-url)"
    else:
        shown_key = f"key from {key_env or default_key_env(provider.backend)}"
    # a user-given endpoint is not echoed (run output may be kept as a log); a provider's own host is
    shown_url = "the given --base-url" if base_url else endpoint_host(provider.backend, url)
    note = (f"{model_id}: backend {provider.backend} ({provider.label}, detected from the model id), endpoint "
            f"{shown_url}, {shown_key}")
    return Detected(provider.backend, url, key_env, note)


def cli_preset(model_id: str) -> tuple[dict[str, Any], str | None]:
    """The sampling of a real ``--model ID`` run (the command line has no sampling flags): the
    reference's preset for the id, and the line that says so (None without a preset)."""
    preset = sampling_preset(model_id)
    if preset is None:
        return {}, None
    shown = ", ".join(f"{k}={v}" for k, v in preset[1].items()) or "nothing set (provider defaults)"
    return preset[1], f"{model_id}: the reference's sampling preset '{preset[0]}': {shown}"
