"""Run identity: ``run_id = <model-slug>__<condition>__r<replicate>__<hash8>`` (docs/running.md).

``hash8`` is the first 8 hex digits of the SHA-256 of a canonical JSON of everything that changes
what a run measures: caps, benchmark hash, backend kind, provider model id, sampling parameters,
simulated-policy parameters, condition, replicate and seed. The same configuration therefore
resumes into the same directory, and any other configuration (an ablation condition, other caps,
another benchmark) gets a directory of its own. Never part of the identity: API keys, base URLs,
worker counts, ``--limit``, flush intervals, whether messages are recorded.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

from .errors import AgentHopError
from .panel import ModelSpec, RunSpec


@dataclass(frozen=True)
class RunCaps:
    budget: int = 30
    max_turns: int = 20
    max_total_tokens: int = 200_000


def model_slug(name: str) -> str:
    """File-system-safe, lower-case slug of a model name (at most 60 characters)."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._")
    slug = re.sub(r"-{2,}", "-", slug)[:60].strip("-._")
    return slug or "model"


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return _jsonable(asdict(value))
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def resolved_sim_params(spec: ModelSpec, benchmark: str | None = None) -> Any:
    """The policy parameters a sim spec resolves to (archetype defaults merged), JSON-ready."""
    if spec.backend != "sim":
        return None
    from agenthop.schemas.trajectory import DEFAULT_BENCHMARK

    from . import benchmarks

    try:  # the run's benchmark's simulated agents (as the panel validated them)
        policy_from_spec = benchmarks.get(benchmark or DEFAULT_BENCHMARK).simulated_policy
    except AgentHopError:
        policy_from_spec = None
    if policy_from_spec is None:
        return _jsonable(dict(spec.sim))
    return _jsonable(policy_from_spec(dict(spec.sim)))


def identity_payload(run: RunSpec, caps: RunCaps, benchmark_sha256: str, seed: int) -> dict[str, Any]:
    """``caps``: the command line's, unless the run carries its own (``run.caps``: a benchmark's
    per-condition caps); the benchmark's run options join the payload only when there are any."""
    m = run.model
    caps = run.caps if run.caps is not None else caps
    out = {
        "model": m.name,
        "backend": m.backend,
        "model_id": m.provider_model if m.backend != "sim" else None,
        "condition": run.condition,
        "replicate": run.replicate,
        "caps": asdict(caps),
        "benchmark_sha256": benchmark_sha256,
        "sampling": _jsonable(dict(m.sampling)),
        "sim": resolved_sim_params(m, run.benchmark),
        "seed": seed,
    }
    if run.options:
        out["options"] = _jsonable(dict(run.options))
    return out


def run_id_for(run: RunSpec, caps: RunCaps, benchmark_sha256: str, seed: int = 0) -> str:
    payload = identity_payload(run, caps, benchmark_sha256, seed)
    canon = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    hash8 = hashlib.sha256(canon.encode()).hexdigest()[:8]
    return f"{model_slug(run.model.name)}__{run.condition}__r{run.replicate}__{hash8}"


def config_json(run: RunSpec, caps: RunCaps, benchmark_sha256: str, seed: int, extra: dict[str, Any]) -> str:
    """The ``runs.config_json`` column: identity plus non-identity settings; never keys or credentials."""
    m = run.model
    cfg = identity_payload(run, caps, benchmark_sha256, seed)
    cfg["sim_spec"] = _jsonable(dict(m.sim)) if m.backend == "sim" else None
    # The endpoint is never written (docs/backends.md: no key or base URL in any output); only whether one was set.
    cfg["custom_base_url"] = bool(m.base_url)
    # the NAME of the variable whose key was sent (none: an explicit base URL without one gets a placeholder)
    cfg["api_key_env"] = m.api_key_env or (None if m.base_url else m.key_env)
    cfg.update(_jsonable(extra))
    return json.dumps(cfg, sort_keys=True)
