"""Simulated agents (docs/simulated_agents.md): a seeded policy that plays the agent's side of the real loop.

``SimBackend(params, model_name, seed, agent=...).start(ctx)`` returns a conversation that the loop
drives exactly like a real backend: ``complete()`` returns tool calls chosen by the benchmark's
simulated agent (its registry entry's ``simulated_agent``: AgentHop's is
:class:`~agenthop.harness.benchmarks.agenthop.policies.agent.SimAgent`), the loop executes them and
hands the results (with footers), nudges and advisories back through ``add_tool_results`` /
``add_user``, and the agent reacts to them. The agent plans turns (``plan_turn()``), observes results
(``observe``, ``observe_user``) and counts its turns (``turn``); ``params`` carry ``verbosity``,
``empty_response_rate`` and ``text_only_rate``.

Tokens: ``prompt_tokens`` is the re-sent context, ~chars/4 of the system prompt, the first user
message, the tool schemas and everything received or emitted so far (tool results, nudges, the
visible ~30% of earlier completions); ``completion_tokens`` comes from ``verbosity`` (uniform in
[0.5, 1.5] x verbosity, plus ~18 per call). No cache tokens.

Determinism: the random stream of an attempt is seeded from a stable hash (BLAKE2b, not Python's
salted ``hash()``) of (backend seed, ctx.seed, model name, sample id, attempt), so the same
configuration reproduces the same trajectories in any process, and a retried attempt differs.

Rare failure modes (per ``PolicyParams``): an empty response (the loop ends the attempt with
``error`` and retries the sample), a text-only turn (the loop nudges), an invalid section name
(``section_not_found``) and wrong-paper reads.

Everything a simulated model produces is labelled ``backend = 'sim'`` by the runner (``name``).
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from collections.abc import Callable

from agenthop.schemas.trajectory import DEFAULT_BENCHMARK

from .base import ModelResponse, SampleContext, ToolCall

#: ``agent(params, ctx, rng)``: a simulated agent for one attempt
AgentFactory = Callable[[Any, SampleContext, random.Random], Any]

#: share of completion tokens that stays in the re-sent history (visible text and call arguments;
#: hidden reasoning is not re-sent)
VISIBLE_SHARE = 0.3
#: completion tokens per emitted call (name and JSON arguments)
TOKENS_PER_CALL = 18

_TEXT_ONLY = "Let me consider which of the cited papers is most likely to hold the evidence."


def stable_seed(*parts: object) -> int:
    """A 64-bit seed from the parts' text, identical in every process and Python version."""
    text = "\x1f".join(str(x) for x in parts).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


def _schema_chars(ctx: SampleContext) -> int:
    return sum(len(t.name) + len(t.description) + 120 * len(t.parameters.get("properties", ()))
               for t in ctx.tools)


class SimConversation:
    """One attempt of one sample, seen from the simulated agent's side."""

    __slots__ = ("agent", "rng", "params", "base_chars", "hist_chars", "log", "n_ids")

    def __init__(self, params: Any, ctx: SampleContext, rng: random.Random, agent: AgentFactory) -> None:
        self.params = params
        self.rng = rng
        self.agent = agent(params, ctx, rng)
        self.base_chars = len(ctx.system_prompt) + len(ctx.user_prompt) + _schema_chars(ctx)
        self.hist_chars = 0
        self.n_ids = 0
        # transcript entries hold references only (no copies, no formatting until transcript())
        self.log: list[tuple[str, Any, Any, Any]] = [
            ("system", None, None, ctx.system_prompt),
            ("user", None, None, ctx.user_prompt),
        ]

    async def complete(self) -> ModelResponse:
        return self.step()

    def step(self) -> ModelResponse:
        """The next model response (synchronous; ``complete`` awaits nothing else)."""
        p = self.params
        rng = self.rng
        prompt_tokens = (self.base_chars + self.hist_chars) >> 2
        completion = int(p.verbosity * (0.5 + rng.random())) + 1
        u = rng.random()
        if u < p.empty_response_rate:
            self.agent.turn += 1
            return ModelResponse("", [], prompt_tokens, completion >> 3)
        if u < p.empty_response_rate + p.text_only_rate:
            self.agent.turn += 1
            return ModelResponse(_TEXT_ONLY, [], prompt_tokens, completion)
        actions = self.agent.plan_turn()
        if isinstance(actions, str):  # the agent's reply without a call (its final text)
            return ModelResponse(actions, [], prompt_tokens, completion + len(actions) // 4)
        n = self.n_ids
        calls = [ToolCall(f"sim_{n + i}", name, args) for i, (name, args) in enumerate(actions)]
        self.n_ids = n + len(calls)
        return ModelResponse("", calls, prompt_tokens, completion + TOKENS_PER_CALL * len(calls))

    def add_assistant(self, response: ModelResponse) -> None:
        self.hist_chars += len(response.text) + int(response.completion_tokens * (4 * VISIBLE_SHARE))
        self.log.append(("assistant", None, None, response))

    def add_tool_results(self, results: list[tuple[ToolCall, str]]) -> None:
        observe = self.agent.observe
        log = self.log
        n = 0
        for call, text in results:
            n += len(text)
            observe(call.name, call.args, text)
            log.append(("tool", call.name, call.id, text))
        self.hist_chars += n

    def add_user(self, text: str) -> None:
        self.hist_chars += len(text)
        self.agent.observe_user(text)
        self.log.append(("user", None, None, text))

    def transcript(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for role, name, call_id, content in self.log:
            if isinstance(content, ModelResponse):
                parts = [content.text] if content.text else []
                parts.extend(
                    f"[tool_call {c.id}] {c.name} {json.dumps(c.args, ensure_ascii=False)}"
                    for c in content.tool_calls
                )
                content = "\n".join(parts)
            out.append({"role": role, "name": name, "tool_call_id": call_id, "content": content})
        return out


class SimBackend:
    """A simulated model: one policy, one name (never a real model's), one seed."""

    name = "sim"

    def __init__(self, params: Any, model_name: str, seed: int = 0, *, agent: AgentFactory | None = None,
                 benchmark: str = DEFAULT_BENCHMARK) -> None:
        """``agent`` defaults to the simulated agent of ``benchmark`` (its registry entry)."""
        if agent is None:
            from .. import benchmarks

            agent = benchmarks.get(benchmark).simulated_agent
            if agent is None:
                raise TypeError(f"benchmark {benchmark!r} has no simulated agent")
        for attr in ("verbosity", "empty_response_rate", "text_only_rate"):
            if not hasattr(params, attr):
                raise TypeError(f"params must be a simulated policy's parameters, got {type(params).__name__}")
        self.params = params
        self.model_name = model_name
        self.seed = seed
        self.agent = agent

    def start(self, ctx: SampleContext) -> SimConversation:
        if ctx.native_search:  # no search tool of its own (harness/backends/native_search.py)
            from .native_search import unsupported

            raise unsupported("sim")
        rng = random.Random(stable_seed(self.seed, ctx.seed, self.model_name, ctx.item.id, ctx.attempt))
        return SimConversation(self.params, ctx, rng, self.agent)


__all__ = ["SimBackend", "SimConversation", "stable_seed"]
