"""Panel files: which models to run, under which conditions, how many replicates (docs/running.md).

Format::

    benchmark: agenthop              # optional: the registry name of the benchmark (default agenthop)
    defaults: {backend: sim, conditions: [full], replicates: 1}
    models:
      - name: early-committer
        backend: sim                  # sim | openai | anthropic | google | responses
        family: sim-demo              # optional
        generation: "2"               # optional: the model's generation within its family (Figure 2)
        tier: closed_frontier         # closed_frontier | open_frontier | compute_efficient, optional
        sim: {archetype: early_committer, navigation_skill: 0.8}
      - name: my-api-model
        backend: openai
        model_id: provider-model-id
        base_url: http://127.0.0.1:8000/v1
        api_key_env: OPENAI_API_KEY
        sampling: {temperature: 0.7, max_tokens: 4096}
        conditions: [full, no_search, closed_book]
        replicates: 3                 # replicate numbers 0, 1, 2
        options: {search: native}     # the benchmark's own run options (SciExplore: search)

``conditions`` are the benchmark's (AgentHop: full, no_search, closed_book; SciExplore: its paradigms
foundation, search, deep_research); ``sim:`` blocks are the benchmark's simulated policies.

Every problem is an ``AgentHopError`` naming the file, the line and the key.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..schemas.names import CONDITIONS
from .errors import AgentHopError
from agenthop.schemas.names import DEFAULT_BENCHMARK

BACKENDS: tuple[str, ...] = ("sim", "openai", "anthropic", "google", "responses")
TIERS: tuple[str, ...] = ("closed_frontier", "open_frontier", "compute_efficient")
#: key variables per backend, in lookup order: the first one that is set is used (else the first)
DEFAULT_KEY_ENVS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "responses": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
}


def default_key_env(backend: str) -> str | None:
    """The default key variable of ``backend``: the first of its variables that is set, else the first."""
    import os

    names = DEFAULT_KEY_ENVS.get(backend)
    if not names:
        return None
    return next((n for n in names if os.environ.get(n)), names[0])

#: Simulated models never carry the names of real models (docs/simulated_agents.md).
_REAL_MODEL_NAME = re.compile(
    r"^(gpt|o[1-9]|claude|gemini|gemma|deepseek|llama|meta-llama|qwen|mistral|mixtral|grok|glm|kimi|minimax"
    r"|command|phi|codex|chatgpt|sonnet|opus|haiku)([-_.:/0-9]|$)",
    re.IGNORECASE,
)
_SECRET_KEY = re.compile(r"api_?key|secret|password|authori[sz]ation|header|cookie|credential", re.IGNORECASE)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_MODEL_KEYS = (
    "name", "backend", "model_id", "base_url", "api_key_env", "sampling", "sim", "family", "tier",
    "generation", "conditions", "replicates", "rpm", "tpm", "options",
)
_DEFAULT_KEYS = tuple(k for k in _MODEL_KEYS if k not in ("name", "model_id"))
_TOP_KEYS = ("defaults", "models", "name", "description", "benchmark")


@dataclass(frozen=True)
class ModelSpec:
    """One model of a panel (or of a single ``run --model`` invocation)."""

    name: str
    backend: str = "sim"
    model_id: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    sampling: Mapping[str, Any] = field(default_factory=dict)
    sim: Mapping[str, Any] = field(default_factory=dict)
    family: str | None = None
    tier: str | None = None
    generation: str | None = None
    conditions: tuple[str, ...] = ("full",)
    replicates: int = 1
    #: the endpoint's requests / tokens per minute (harness/limiter.py); not part of the run identity
    rpm: float | None = None
    tpm: float | None = None
    #: the benchmark's own run options (``options:``), checked by its registry entry
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def provider_model(self) -> str:
        """The id sent to the provider (``model_id``, else the name)."""
        return self.model_id or self.name

    @property
    def key_env(self) -> str | None:
        """Environment variable holding the API key (None for sim)."""
        return self.api_key_env or default_key_env(self.backend)


@dataclass(frozen=True)
class RunSpec:
    """One run: a model under one condition, one replicate."""

    model: ModelSpec
    condition: str = "full"
    replicate: int = 0
    #: the benchmark the run plays (its registry name)
    benchmark: str = DEFAULT_BENCHMARK
    #: the benchmark's own run options, completed by its ``run_options`` hook (part of the run identity
    #: when not empty)
    options: Mapping[str, Any] = field(default_factory=dict)
    #: the run's caps when its benchmark sets them per condition (harness/run_plan.py); None: the
    #: command line's
    caps: Any = None
    #: the run's wall-clock cap per sample, likewise (None: the command line's)
    max_sample_seconds: float | None = None


@dataclass(frozen=True)
class Panel:
    path: str
    models: tuple[ModelSpec, ...]
    benchmark: str = DEFAULT_BENCHMARK

    def runs(self) -> list[RunSpec]:
        """Every (model, condition, replicate), models in file order."""
        return [
            RunSpec(m, c, r, benchmark=self.benchmark, options=dict(m.options))
            for m in self.models for c in m.conditions for r in range(m.replicates)
        ]


class _LineDict(dict):  # type: ignore[type-arg]
    """A YAML mapping that remembers the line of itself and of each key."""

    line: int = 0

    def __init__(self) -> None:
        super().__init__()
        self.lines: dict[Any, int] = {}


@functools.cache
def _loader() -> Any:
    """The YAML loader of panels: safe, with line numbers and duplicate keys refused (PyYAML is imported
    here, when a panel is read, not when the command line starts)."""
    import yaml

    class _Loader(yaml.SafeLoader):
        pass

    def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> _LineDict:
        loader.flatten_mapping(node)
        out = _LineDict()
        out.line = node.start_mark.line + 1
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                duplicate = key in out
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, f"unhashable key at line {line}", key_node.start_mark
                ) from None
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            out[key] = loader.construct_object(value_node, deep=True)
            out.lines[key] = line
        return out

    _Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    return _Loader


class _Ctx:
    """Builds error messages `file:line: where.key: problem`."""

    def __init__(self, path: str) -> None:
        self.path = path

    def error(self, mapping: Any, where: str, key: str | None, problem: str) -> AgentHopError:
        line = 0
        if isinstance(mapping, _LineDict):
            line = mapping.lines.get(key, mapping.line) if key is not None else mapping.line
        loc = f"{self.path}:{line}" if line else self.path
        what = ".".join(x for x in (where, key) if x)
        return AgentHopError(f"{loc}: {what}: {problem}" if what else f"{loc}: {problem}")


def load_panel(path: str | Path) -> Panel:
    """Read and validate a panel YAML file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AgentHopError(f"{p}: panel file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentHopError(f"{p}: cannot read panel file ({exc})") from None
    import yaml

    try:
        doc = yaml.load(text, Loader=_loader())  # noqa: S506 - SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{p}:{mark.line + 1}" if mark is not None else str(p)
        problem = getattr(exc, "problem", None) or str(exc)
        raise AgentHopError(f"{where}: invalid YAML: {problem}") from None
    return parse_panel(doc, str(p))


def parse_panel(doc: Any, path: str = "<panel>") -> Panel:
    """Validate an already-parsed panel document (see module docstring)."""
    ctx = _Ctx(path)
    if not isinstance(doc, dict):
        raise ctx.error(None, "", None, "a panel file must be a mapping with a 'models' list")
    for key in doc:
        if key not in _TOP_KEYS:
            raise ctx.error(doc, "", str(key), f"unknown key (allowed: {', '.join(_TOP_KEYS)})")
    benchmark = doc.get("benchmark", DEFAULT_BENCHMARK)
    from . import benchmarks

    if not isinstance(benchmark, str) or benchmark not in benchmarks.names():
        raise ctx.error(doc, "", "benchmark", f"{benchmark!r} is not a known benchmark ({', '.join(benchmarks.names())})")
    try:
        bench = benchmarks.get(benchmark)
    except AgentHopError as exc:
        raise ctx.error(doc, "", "benchmark", str(exc)) from None
    defaults = doc.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise ctx.error(doc, "", "defaults", "must be a mapping")
    for key in defaults:
        if key not in _DEFAULT_KEYS:
            raise ctx.error(defaults, "defaults", str(key), f"unknown key (allowed: {', '.join(_DEFAULT_KEYS)})")
    models = doc.get("models")
    if not isinstance(models, list) or not models:
        raise ctx.error(doc, "", "models", "must be a non-empty list of models")
    specs: list[ModelSpec] = []
    seen: dict[str, str] = {}
    for i, entry in enumerate(models):
        where = f"models[{i}]"
        if not isinstance(entry, dict):
            raise ctx.error(doc, where, None, "each model must be a mapping with at least 'name'")
        if isinstance(entry.get("name"), str):
            where = f"models[{i}] ({entry['name']})"
        spec = _parse_model(ctx, entry, defaults, where, bench)
        if spec.name in seen:
            raise ctx.error(entry, where, "name", f"duplicate model name (also {seen[spec.name]})")
        seen[spec.name] = where
        specs.append(spec)
    return Panel(path=path, models=tuple(specs), benchmark=benchmark)


def _parse_model(ctx: _Ctx, entry: dict, defaults: dict, where: str,  # type: ignore[type-arg]
                 bench: Any = None) -> ModelSpec:
    for key in entry:
        if key not in _MODEL_KEYS:
            raise ctx.error(entry, where, str(key), f"unknown key (allowed: {', '.join(_MODEL_KEYS)})")

    def get(key: str) -> tuple[Any, dict]:  # type: ignore[type-arg]
        if key in entry:
            return entry[key], entry
        return defaults.get(key), defaults

    def opt_str(key: str) -> str | None:
        value, src = get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise ctx.error(src, where, key, "must be a non-empty string")
        return value.strip()

    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ctx.error(entry, where, "name", "required, a non-empty string")
    name = name.strip()

    backend = opt_str("backend") or "sim"
    if backend not in BACKENDS:
        _, src = get("backend")
        raise ctx.error(src, where, "backend", f"{backend!r} is not one of {', '.join(BACKENDS)}")

    tier = opt_str("tier")
    if tier is not None and tier not in TIERS:
        _, src = get("tier")
        raise ctx.error(src, where, "tier", f"{tier!r} is not one of {', '.join(TIERS)}")

    conditions_raw, src = get("conditions")
    if conditions_raw is None:
        conditions: tuple[str, ...] = (bench.conditions[0],) if bench is not None else ("full",)
    else:
        if isinstance(conditions_raw, str):
            conditions_raw = [conditions_raw]
        if not isinstance(conditions_raw, list) or not conditions_raw:
            raise ctx.error(src, where, "conditions", "must be a non-empty list")
        known = tuple(bench.conditions) if bench is not None else CONDITIONS
        for c in conditions_raw:
            if c not in known:
                raise ctx.error(src, where, "conditions", f"{c!r} is not one of {', '.join(known)}")
        if len(set(conditions_raw)) != len(conditions_raw):
            raise ctx.error(src, where, "conditions", "lists a condition twice")
        conditions = tuple(conditions_raw)

    replicates, src = get("replicates")
    if replicates is None:
        replicates = 1
    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1:
        raise ctx.error(src, where, "replicates", f"must be a positive integer, got {replicates!r}")

    sampling, src = get("sampling")
    sampling = sampling or {}
    if not isinstance(sampling, dict):
        raise ctx.error(src, where, "sampling", "must be a mapping such as {temperature: 0.7, max_tokens: 4096}")
    for key in sampling:
        if _SECRET_KEY.search(str(key)):
            raise ctx.error(sampling, f"{where}.sampling", str(key),
                            "credentials and headers never go in panel files; use api_key_env")
    sim, src_sim = get("sim")
    sim = sim or {}
    if not isinstance(sim, dict):
        raise ctx.error(src_sim, where, "sim", "must be a mapping such as {archetype: balanced}")

    generation, src_gen = get("generation")
    if generation is not None:
        if isinstance(generation, bool) or not isinstance(generation, (str, int, float)) or not str(generation).strip():
            raise ctx.error(src_gen, where, "generation", "must be a non-empty string or number, e.g. 2 or \"2.5\"")
        generation = str(generation).strip()

    model_id = opt_str("model_id")
    base_url = opt_str("base_url")
    api_key_env = opt_str("api_key_env")
    if api_key_env is not None and not _ENV_NAME.match(api_key_env):
        _, src = get("api_key_env")
        raise ctx.error(src, where, "api_key_env",
                        "must be the NAME of an environment variable (keys are never written in panel files)")

    limits: dict[str, float | None] = {}
    for key in ("rpm", "tpm"):
        value, src = get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            raise ctx.error(src, where, key, f"must be a positive number (per minute), got {value!r}")
        limits[key] = float(value) if value is not None else None

    if backend == "sim":
        if looks_like_real_model(name):
            raise ctx.error(entry, where, "name",
                            f"{name!r} looks like a real model's name; simulated models must not carry one")
        if not sim:
            raise ctx.error(entry, where, "sim", "required for backend sim, e.g. {archetype: balanced}")
        for key in ("model_id", "base_url", "api_key_env", "rpm", "tpm"):
            if key in entry:
                raise ctx.error(entry, where, key, "does not apply to backend sim")
        problem = validate_sim_spec(sim, bench.name if bench is not None else DEFAULT_BENCHMARK)
        if problem:
            line = src_sim.lines.get("sim", 0) if isinstance(src_sim, _LineDict) else 0
            loc = f"{ctx.path}:{line}" if line else ctx.path
            raise AgentHopError(f"{loc}: {where}: {problem}")
    else:
        if "sim" in entry:
            raise ctx.error(entry, where, "sim", f"only applies to backend sim, not {backend}")
        problem = validate_sampling(sampling, backend)
        if problem:
            _, src = get("sampling")
            raise ctx.error(src, where, "sampling", problem)

    options, src_opt = get("options")
    options = options or {}
    if not isinstance(options, dict):
        raise ctx.error(src_opt, where, "options", "must be a mapping such as {search: native}")
    if options and (bench is None or bench.run_options is None):
        raise ctx.error(src_opt, where, "options", f"benchmark {getattr(bench, 'name', DEFAULT_BENCHMARK)!r} takes no "
                        "run options")
    if bench is not None and bench.run_options is not None:
        from .backends.native_search import refusal as native_search_refusal

        for c in conditions:
            try:
                problem = native_search_refusal(bench, backend, c, bench.run_options(c, dict(options)))
            except AgentHopError as exc:
                problem = exc
            if problem is not None:
                raise ctx.error(src_opt, where, "options", f"{c}: {problem}") from None

    return ModelSpec(
        name=name, backend=backend, model_id=model_id, base_url=base_url, api_key_env=api_key_env,
        sampling=dict(sampling), sim=dict(sim), family=opt_str("family"), tier=tier,
        generation=generation,
        conditions=conditions, replicates=replicates, options=dict(options),
        rpm=limits["rpm"] if backend != "sim" else None, tpm=limits["tpm"] if backend != "sim" else None,
    )


def validate_sim_spec(sim: Mapping[str, Any], benchmark: str = DEFAULT_BENCHMARK) -> str | None:
    """The problem with a sim spec, as the policy module reports it, or None when it is valid."""
    from . import benchmarks

    try:  # a panel's sim: blocks are policies of its benchmark's simulated agents
        policy_from_spec = benchmarks.get(benchmark).simulated_policy
    except AgentHopError:  # not installed in this build: the run reports it
        return None
    if policy_from_spec is None:
        return None
    try:
        policy_from_spec(dict(sim), where="sim")
    except AgentHopError as exc:
        return str(exc)
    except (KeyError, ValueError, TypeError) as exc:
        return f"sim: {exc.args[0] if exc.args else type(exc).__name__}"
    return None


def validate_sampling(sampling: Mapping[str, Any], backend: str) -> str | None:
    """The problem with a real backend's sampling settings, or None when they are valid."""
    try:
        from .backends.llm_common import clean_sampling
    except ImportError:
        return None
    try:
        clean_sampling(dict(sampling), backend)
    except AgentHopError as exc:
        return str(exc)
    return None


def looks_like_real_model(name: str) -> bool:
    """True for names of real model families (gpt-, claude-, llama...), which sim models may not use."""
    return bool(_REAL_MODEL_NAME.match(name))
