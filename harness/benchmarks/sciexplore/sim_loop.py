"""The SIMULATED SciExplore systems as agents of the harness's loop (docs/sciexplore.md#simulated-search-agents).

The archetypes of ``sim_agents`` are policies written as steps (each tool call, then the final text).
Here they play the agent's side of the real loop through the simulated backend
(harness/backends/sim.py): every turn the agent asks for its policy's next tool call, the loop runs it
with the episode's tools, and the text the loop returns (not the tools' own objects) is read back into
hits and sent to the policy; when the policy is done its final text is the turn's reply, which the
episode takes as the answer. A rejected call (the paradigm's tool-call cap) reads as an empty result.

A panel's ``sim:`` block names an archetype by its model name (``mnemo-guess``, ``skim-search``,
``hunch-check``, ``delve-dr``) or behaviour (``foundation_guesser``, ...), optionally overriding
``recall`` and ``slip``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from agenthop.harness.backends.base import SampleContext
from agenthop.harness.errors import AgentHopError

from .sim_agents import ARCHETYPES, Archetype, Session, policy_steps
from .search_tools import OPEN_PAGE, CallRecord, ToolResult, parse_hits

#: archetype name (model name and behaviour, ``-`` or ``_``) -> its archetype
POLICIES: dict[str, Archetype] = {}
for _a in ARCHETYPES:
    for _name in (_a.model, _a.behaviour):
        POLICIES[_name] = _a
        POLICIES[_name.replace("-", "_")] = _a
        POLICIES[_name.replace("_", "-")] = _a


@dataclass(frozen=True, slots=True)
class SimParams:
    """A simulated system: its archetype plus what the simulated backend reads."""

    archetype: Archetype
    #: completion tokens per turn (the backend's scale)
    verbosity: int = 120
    #: the backend's rare failure modes: an empty reply or a text-only turn (a text-only turn is the
    #: answer in SciExplore, so both stay 0 unless a test asks for them)
    empty_response_rate: float = 0.0
    text_only_rate: float = 0.0


_FIELDS = ("recall", "slip")
_PARAMS = ("verbosity", "empty_response_rate", "text_only_rate")


def policy_from_spec(spec: Mapping[str, Any] | None, *, where: str = "sim") -> SimParams:
    """A panel's ``sim:`` mapping -> :class:`SimParams` (errors name ``where``)."""
    spec = dict(spec or {})
    name = spec.pop("archetype", None)
    if not isinstance(name, str) or name not in POLICIES:
        known = ", ".join(a.model for a in ARCHETYPES)
        raise AgentHopError(f"{where}.archetype: unknown SciExplore archetype {name!r}; known: {known}")
    arch = POLICIES[name]
    unknown = sorted(k for k in spec if k not in _FIELDS + _PARAMS)
    if unknown:
        raise AgentHopError(f"{where}: unknown parameter(s) {', '.join(map(str, unknown))}; known: archetype, "
                            f"{', '.join(_FIELDS + _PARAMS)}")
    for k, v in spec.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or (k != "verbosity" and v > 1):
            raise AgentHopError(f"{where}.{k}: must be a number{' in [0, 1]' if k != 'verbosity' else ' >= 0'}, "
                                f"got {v!r}")
    arch = replace(arch, **{k: float(spec[k]) for k in _FIELDS if k in spec})
    return SimParams(arch, **{k: (int(spec[k]) if k == "verbosity" else float(spec[k])) for k in _PARAMS if k in spec})


class SimSearcher:
    """One attempt of one task by a simulated system, driven by the loop (``plan_turn`` / ``observe``)."""

    def __init__(self, params: SimParams, ctx: SampleContext, rng: random.Random) -> None:
        self.turn = 0
        self._session = Session(max_calls=10**9)  # the loop enforces the paradigm's caps
        self._steps = policy_steps(params.archetype, ctx.item, self._session, rng)
        self._reply: ToolResult | None = None
        self._started = False
        self._final: str | None = None

    def plan_turn(self) -> list[tuple[str, dict[str, Any]]] | str:
        """The next tool call (one per turn), or the final text once the policy is done."""
        self.turn += 1
        if self._final is not None:
            return self._final
        try:
            if not self._started:
                self._started = True
                call = next(self._steps)
            else:
                reply, self._reply = self._reply, None
                call = self._steps.send(reply or _empty())
        except StopIteration as done:
            self._final = str(done.value or "")
            return self._final
        name, args = call
        return [(name, dict(args))]

    def observe(self, tool: str, args: Any, text: str) -> None:
        hits = () if tool == OPEN_PAGE else parse_hits(text)
        query = args.get("query") if isinstance(args, dict) else None
        target = args.get("id") if isinstance(args, dict) and tool == OPEN_PAGE else None
        self._reply = ToolResult(text, CallRecord(tool, args if isinstance(args, dict) else {}, "ok", len(text),
                                                  query=query, target=target), hits)

    def observe_user(self, text: str) -> None:
        return None


def _empty() -> ToolResult:
    return ToolResult("", CallRecord("", {}, "ok", 0))
