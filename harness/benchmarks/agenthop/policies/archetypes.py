"""Named behaviour families of AgentHop agents (docs/simulated_agents.md) as policy parameter sets.

``policy_from_spec({"archetype": "verifier", "synthesis_skill": 0.9})`` is how panel files pick a
policy: an archetype name plus overrides of individual :class:`PolicyParams` fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ....errors import AgentHopError
from .params import PARAM_NAMES, PolicyParams

ARCHETYPES: dict[str, PolicyParams] = {
    # Parallel calls, little deliberation, submits as soon as the gold read is in.
    "early_committer": PolicyParams(
        navigation_skill=0.78, parallel_calls=2.4, deliberation=0.04, submit_after_gold=0.88,
        extra_reads_after_gold=0.08, synthesis_skill=0.8, parametric_prior=0.4, verbosity=350,
        search_propensity=0.3, metadata_loop=0.04, read_greed=0.04, wrong_paper_rate=0.1, patience=14,
    ),
    # Thinks after reads and before answering; rarely submits without a think first.
    "verifier": PolicyParams(
        navigation_skill=0.8, parallel_calls=1.0, deliberation=0.9, submit_after_gold=0.03,
        extra_reads_after_gold=0.12, synthesis_skill=0.88, parametric_prior=0.4, verbosity=700,
        search_propensity=0.2, metadata_loop=0.04, read_greed=0.04, wrong_paper_rate=0.08, patience=16,
    ),
    # Keeps reading after the gold read, ignores its budget, long reasoning: runs into the token cap.
    "over_searcher": PolicyParams(
        navigation_skill=0.75, parallel_calls=1.0, deliberation=0.45, submit_after_gold=0.02,
        extra_reads_after_gold=0.93, synthesis_skill=0.78, parametric_prior=0.35, verbosity=3600,
        search_propensity=0.35, metadata_loop=0.08, read_greed=0.5, wrong_paper_rate=0.12, patience=30,
    ),
    # Middle of the road on every habit.
    "balanced": PolicyParams(
        navigation_skill=0.72, parallel_calls=1.25, deliberation=0.35, submit_after_gold=0.5,
        extra_reads_after_gold=0.25, synthesis_skill=0.78, parametric_prior=0.35, verbosity=600,
        search_propensity=0.25, metadata_loop=0.08, read_greed=0.12, wrong_paper_rate=0.12, patience=16,
    ),
    # get_paper_info -> get_references loops over hub papers, never reads, then guesses.
    "metadata_looper": PolicyParams(
        navigation_skill=0.3, parallel_calls=1.0, deliberation=0.1, submit_after_gold=0.5,
        extra_reads_after_gold=0.0, synthesis_skill=0.55, parametric_prior=0.3, verbosity=250,
        search_propensity=0.08, metadata_loop=1.0, read_greed=0.0, wrong_paper_rate=0.0, patience=17,
    ),
    # read -> read -> read on the longest sections of whatever paper it is on: token overflow.
    "greedy_reader": PolicyParams(
        navigation_skill=0.45, parallel_calls=1.0, deliberation=0.05, submit_after_gold=0.3,
        extra_reads_after_gold=0.7, synthesis_skill=0.55, parametric_prior=0.3, verbosity=3000,
        search_propensity=0.05, metadata_loop=0.04, read_greed=0.92, wrong_paper_rate=0.35, patience=26,
    ),
}


def archetype(name: str) -> PolicyParams:
    try:
        return ARCHETYPES[name]
    except KeyError:
        raise AgentHopError(
            f"unknown sim archetype {name!r}; known: {', '.join(sorted(ARCHETYPES))}"
        ) from None


def policy_from_spec(spec: Mapping[str, Any] | None, *, where: str = "sim") -> PolicyParams:
    """Build a policy from a panel's ``sim:`` mapping: ``archetype`` (default ``balanced``) plus
    overrides of PolicyParams fields. ``where`` names the place in the panel file for errors."""
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        raise AgentHopError(f"{where}: expected a mapping with 'archetype' and parameter overrides, got {spec!r}")
    name = spec.get("archetype", "balanced")
    if not isinstance(name, str):
        raise AgentHopError(f"{where}.archetype: expected a name, got {name!r}")
    base = ARCHETYPES.get(name)
    if base is None:
        raise AgentHopError(
            f"{where}.archetype: unknown archetype {name!r}; known: {', '.join(sorted(ARCHETYPES))}"
        )
    overrides = {k: v for k, v in spec.items() if k != "archetype"}
    unknown = sorted(k for k in overrides if k not in PARAM_NAMES)
    if unknown:
        raise AgentHopError(
            f"{where}: unknown policy parameter(s) {', '.join(map(str, unknown))}; "
            f"known: archetype, {', '.join(PARAM_NAMES)}"
        )
    # YAML may give 0/1 for a probability or 2 for parallel_calls; keep ints where ints are expected
    clean: dict[str, Any] = {}
    for k, v in overrides.items():
        if k in ("verbosity", "patience") and isinstance(v, float) and v.is_integer():
            v = int(v)
        clean[k] = v
    try:
        return replace(base, **clean)
    except AgentHopError as exc:
        raise AgentHopError(f"{where}: {exc}") from None
