"""Ask one model many independent prompts through the harness's backends, resumably.

Shared by the LLM judges and the LLM scanners (`agenthop-judge`, `agenthop-scan`): each prompt is one
call with the caller's system prompt and no tools; every reply is appended to a JSONL cache file
(``{"key", "reply"}``) as it arrives and flushed, so an interrupted caller (even by SIGKILL) asks only
what the cache lacks the next time. Transient errors (rate limit, 5xx, timeout) are retried; any other
error fails that prompt alone. With a cost cap (:class:`CostCap`) no call starts once the estimated
spend plus the calls in flight would pass it.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .backends import make_backend
from .backends.base import BackendError, SampleContext, TransientBackendError
from .cost import Price, price_for
from .panel import ModelSpec
from .reservations import Reservations, estimate

#: calls retried after a transient error (rate limit, 5xx, timeout)
RETRIES = 4
#: characters per token assumed when a call's cost is reserved before it is made (few tokenizers do worse)
CHARS_PER_TOKEN = 2
#: completion tokens reserved per call before its reply is known
RESERVED_COMPLETION_TOKENS = 1024


@dataclass(slots=True)
class CostCap:
    """``--max-cost-usd`` over the calls of one invocation, priced by the warehouse's price table."""

    cap_usd: float
    price: Price | None
    budget: Reservations = field(init=False)
    seen: list[float] = field(default_factory=list)
    refused: int = 0

    def __post_init__(self) -> None:
        self.budget = Reservations(self.cap_usd)

    @classmethod
    def for_model(cls, cap_usd: float, spec: ModelSpec) -> CostCap:
        price = price_for(spec.provider_model)
        if price is None:
            print(f"model {spec.provider_model!r} is not in the price table; --max-cost-usd does not count its "
                  "calls", file=sys.stderr, flush=True)
        return cls(cap_usd, price)

    @property
    def spent_usd(self) -> float:
        return self.budget.spent

    def ceiling(self, prompt: str) -> float:
        if self.price is None:
            return 0.0
        return self.price.usd(len(prompt) // CHARS_PER_TOKEN + 1, RESERVED_COMPLETION_TOKENS)


@dataclass(slots=True)
class Asked:
    replies: dict[str, str] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    #: prompts not asked because the cost cap was reached
    over_cap: int = 0


async def _ask(spec: ModelSpec, system_prompt: str, prompts: dict[str, str], cache_path: Path, concurrency: int,
               on_done: Callable[[], None], cap: CostCap | None, condition: str) -> Asked:
    backend = make_backend(spec)
    sem = asyncio.Semaphore(concurrency)
    out = Asked()
    with cache_path.open("a", encoding="utf-8") as fh:
        async def one(key: str, prompt: str) -> None:
            async with sem:
                ticket = None
                if cap is not None:
                    ceiling = cap.ceiling(prompt)
                    ticket = await cap.budget.reserve(lambda: estimate(cap.seen, ceiling))
                    if ticket is None:
                        out.over_cap += 1
                        return
                ctx = SampleContext(item=None, system_prompt=system_prompt, user_prompt=prompt,  # type: ignore[arg-type]
                                    tools=[], condition=condition)
                for attempt in range(RETRIES + 1):
                    try:
                        resp = await backend.start(ctx).complete()
                        break
                    except BackendError as exc:
                        if not isinstance(exc, TransientBackendError) or attempt == RETRIES:
                            out.failed.append(f"{type(exc).__name__}: {exc}"[:300])
                            if cap is not None:
                                cap.budget.release(ticket)
                            return
                        await asyncio.sleep(min(2 ** attempt, 10) * 0.1)
                if cap is not None:
                    usd = 0.0 if cap.price is None else cap.price.usd(
                        resp.prompt_tokens, resp.completion_tokens, resp.cache_read_tokens, resp.cache_creation_tokens)
                    cap.seen.append(usd)
                    cap.budget.settle(ticket, usd)
                out.replies[key] = resp.text
                fh.write(json.dumps({"key": key, "reply": resp.text}, ensure_ascii=False) + "\n")
                fh.flush()  # resumable: every answered prompt survives an interruption
                on_done()

        await asyncio.gather(*(one(k, p) for k, p in prompts.items()))
    aclose = getattr(backend, "aclose", None)
    if aclose is not None:
        await aclose()
    return out


def ask_all(spec: ModelSpec, system_prompt: str, prompts: dict[str, str], cache_path: Path, *, concurrency: int = 4,
            on_done: Callable[[], None] = lambda: None, cap: CostCap | None = None, condition: str = "ask") -> Asked:
    """Ask every prompt of ``prompts`` (cache key -> prompt) once, appending each reply to ``cache_path``."""
    return asyncio.run(_ask(spec, system_prompt, prompts, cache_path, concurrency, on_done, cap, condition))
