"""Agent backends and the factory that builds one from a model spec (panel entry or CLI flags).

Imports are lazy: a simulated run never imports the provider SDKs. API keys come only from the
environment variable named by the spec's ``api_key_env`` (without one: the backend's own variable,
OPENAI_API_KEY / ANTHROPIC_API_KEY / GOOGLE_API_KEY or GEMINI_API_KEY, for the provider's own endpoint
only); they are handed to the backend object and never written anywhere.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from typing import TYPE_CHECKING

from ..errors import AgentHopError
from agenthop.schemas.names import DEFAULT_BENCHMARK

if TYPE_CHECKING:
    from ..panel import ModelSpec
    from .base import Backend


#: the real-LLM backends: name -> (module, class); a module (and its SDK) is imported only when used
SDK_BACKENDS: dict[str, tuple[str, str]] = {
    "openai": (".openai", "OpenAIBackend"),
    "anthropic": (".anthropic", "AnthropicBackend"),
    "google": (".google", "GoogleBackend"),
    "responses": (".responses", "ResponsesBackend"),
}


def backend_seed(seed: int, model: str, replicate: int) -> int:
    """Seed of a simulated backend: stable across processes, distinct per model and replicate."""
    digest = hashlib.sha256(f"backend/{seed}/{model}/{replicate}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def api_key_from_env(spec: ModelSpec) -> str | None:
    """The API key for ``spec`` (None for sim), by the key rule of docs/backends.md.

    - ``api_key_env`` named: that variable's value goes to the model's endpoint (its base URL, or the
      provider's own); unset is an error unless a base URL is given (a local server may need no key);
    - no ``api_key_env`` and a ``base_url``: the placeholder key; the provider's default variable
      (OPENAI_API_KEY / ANTHROPIC_API_KEY) is never sent to an endpoint the user typed in;
    - no ``api_key_env`` and no ``base_url``: the provider's default variable (checked by the backend).
    """
    from .llm_common import LOCAL_PLACEHOLDER_KEY

    if spec.backend == "sim":
        return None
    env = spec.api_key_env
    if env is None:
        return LOCAL_PLACEHOLDER_KEY if spec.base_url else None
    key = os.environ.get(env) or None
    if key is None and not spec.base_url:
        raise AgentHopError(
            f"model {spec.name!r} ({spec.backend}): environment variable {env} is not set; export the "
            f"API key there (or name another variable with api_key_env)"
        )
    return key or LOCAL_PLACEHOLDER_KEY


def make_backend(spec: ModelSpec, *, seed: int = 0, replicate: int = 0,
                 benchmark: str = DEFAULT_BENCHMARK, request_timeout_s: float | None = None) -> Backend:
    """Build the backend of ``spec``: ``sim`` (``benchmark``'s simulated agent), ``openai``,
    ``anthropic``, ``google`` or ``responses``; ``request_timeout_s``: the HTTP timeout of one model
    call of a real backend (None: the SDK backend's)."""
    if spec.backend == "sim":
        from .. import benchmarks
        from .sim import SimBackend

        bench = benchmarks.get(benchmark)
        if bench.simulated_policy is None or bench.simulated_agent is None:
            raise AgentHopError(f"model {spec.name!r}: benchmark {benchmark!r} has no simulated agents")
        params = bench.simulated_policy(dict(spec.sim), where=f"model {spec.name!r}: sim")
        return SimBackend(params, spec.name, backend_seed(seed, spec.name, replicate), agent=bench.simulated_agent)
    if spec.backend in SDK_BACKENDS:
        module, class_name = SDK_BACKENDS[spec.backend]
        backend_class = getattr(importlib.import_module(module, __name__), class_name)
        timeout = {} if request_timeout_s is None else {"timeout_s": request_timeout_s}
        return backend_class(spec.provider_model, base_url=spec.base_url, api_key=api_key_from_env(spec),
                             sampling=dict(spec.sampling), **timeout)
    raise AgentHopError(f"model {spec.name!r}: unknown backend {spec.backend!r} "
                        "(known: sim, openai, anthropic, google, responses)")


__all__ = ["api_key_from_env", "backend_seed", "make_backend"]
