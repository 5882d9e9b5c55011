"""Environment isolation for SDK tests: no provider variables, no proxies, loopback only."""

from __future__ import annotations

import os

import pytest

FAKE_KEY = "sk-test-SECRET-123"

_PREFIXES = ("OPENAI_", "ANTHROPIC_", "GOOGLE_", "GEMINI_")
_PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def isolate(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove every OPENAI_*/ANTHROPIC_*/GOOGLE_*/GEMINI_* variable (keys, base URLs, profiles, custom headers) and
    proxies, so the SDKs can reach nothing but the loopback server they are given."""
    for name in list(os.environ):
        if name.startswith(_PREFIXES) or name in _PROXIES:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    # the anthropic SDK looks for on-disk profiles only without an explicit key; point it nowhere
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", os.devnull + "-agenthop-none")
