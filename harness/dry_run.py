"""`agenthop-harness run --dry-run`: what a run would call, without calling anything.

One line per model: backend, provider model id, endpoint host, key variable and whether it is set,
and the sampling settings. Every model whose key would be missing at run time gets its own line on
stderr, and the dry run then fails (exit 2). The key rules are the run's (docs/backends.md): a named
variable (``api_key_env``) must be set unless the base URL is a local server (a provider's public
endpoint, such as api.deepseek.com, always needs it); without one, an explicit base URL gets the
placeholder key, and the provider's own endpoint needs the backend's default variable.
Neither a key's value nor a base URL's path is printed, only the variable's name and the host.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .panel import ModelSpec, default_key_env
from .providers import endpoint_host, public_endpoint


@dataclass(frozen=True)
class KeyCheck:
    #: the variable the run reads, or None (no key needed)
    variable: str | None
    is_set: bool
    #: what the line says about the key
    shown: str
    #: the run would fail for want of this key
    missing: bool


def key_check(spec: ModelSpec) -> KeyCheck:
    if spec.backend == "sim":
        return KeyCheck(None, False, "no key (simulated)", False)
    if spec.api_key_env is not None:
        is_set = bool(os.environ.get(spec.api_key_env))
        if is_set:
            return KeyCheck(spec.api_key_env, True, f"{spec.api_key_env} (set)", False)
        if spec.base_url and not public_endpoint(spec.base_url):  # a local server may need no key
            return KeyCheck(spec.api_key_env, False, f"{spec.api_key_env} (not set: placeholder key)", False)
        return KeyCheck(spec.api_key_env, False, f"{spec.api_key_env} (NOT SET)", True)
    if spec.base_url:
        return KeyCheck(None, False, "none (placeholder key for the explicit base URL)", False)
    env = default_key_env(spec.backend)
    is_set = bool(env and os.environ.get(env))
    return KeyCheck(env, is_set, f"{env} ({'set' if is_set else 'NOT SET'})", not is_set)


def describe(spec: ModelSpec) -> str:
    """The dry-run line of one model."""
    key = key_check(spec)
    if spec.backend == "sim":
        return f"{spec.name}: backend sim, no endpoint, {key.shown}"
    sampling = ", ".join(f"{k}={v}" for k, v in spec.sampling.items()) or "provider defaults"
    return (f"{spec.name}: backend {spec.backend}, model {spec.provider_model}, endpoint "
            f"{endpoint_host(spec.backend, spec.base_url)}, key {key.shown}, sampling {sampling}")


def missing_key_line(spec: ModelSpec) -> str:
    key = key_check(spec)
    also = " (or GEMINI_API_KEY)" if spec.backend == "google" and spec.api_key_env is None else ""
    return (f"{spec.name}: {key.variable}{also} is not set; export the model's API key there before running "
            f"(or name another variable with api_key_env)")


def dry_run(models: list[ModelSpec]) -> tuple[list[str], list[str]]:
    """(one line per model, one line per model whose key is missing)."""
    lines = [describe(m) for m in models]
    missing = [missing_key_line(m) for m in models if key_check(m).missing]
    return lines, missing
