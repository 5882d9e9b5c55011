"""Estimated USD of model calls while a run goes, from the warehouse's price table (docs/running.md).

The table is the dbt seed ``dbt_support/seeds/model_prices.csv`` (read here, never copied): a model's
price is the row with the smallest ``price_order`` whose ``prefix`` its provider model id starts with
(case-sensitive), as the ``model_cost`` mart prices finished runs. Rates are USD per 1M tokens; cache
reads and writes are priced at the input rate times their multipliers.

:class:`CostGuard` implements ``--max-cost-usd``: before a worker takes a new sample it reserves the
sample's cost (:meth:`CostGuard.reserve`), and the sample starts only when what this invocation has
spent, plus the reservations of the samples in flight, plus its own stays within the cap
(harness/reservations.py). The estimate is the price table's, so it is as good as that table.

With ``strict`` (``--strict-cost-cap``) every sample in flight reserves its ceiling, the most its
attempts can cost under the per-sample token cap at the model's dearest rate, for the whole time it
runs, whatever the samples before it cost; no sample starts alone past the cap. Samples dearer than
the ones before them can then no longer carry the spend past the cap.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import AgentHopError
from .reservations import Reservations, estimate

SEED = Path("dbt_support") / "seeds" / "model_prices.csv"


@dataclass(frozen=True)
class Price:
    prefix: str
    input_per_m: float
    output_per_m: float
    cache_read_mult: float
    cache_write_mult: float

    def max_usd(self, tokens: int) -> float:
        """The most ``tokens`` counted by the token cap (prompt + completion + cache writes) can cost."""
        return tokens * max(self.input_per_m, self.output_per_m, self.input_per_m * self.cache_write_mult) / 1e6

    def usd(self, prompt: int, completion: int, cache_read: int = 0, cache_creation: int = 0) -> float:
        """Cost of the given tokens (prompt = regular, non-cached input)."""
        return (prompt * self.input_per_m + cache_read * self.input_per_m * self.cache_read_mult
                + cache_creation * self.input_per_m * self.cache_write_mult
                + completion * self.output_per_m) / 1e6


def price_table_path() -> Path:
    """The seed CSV in a source checkout (repository root) or an installed wheel (agenthop/dbt_project/)."""
    root = Path(__file__).resolve().parents[1]
    for cand in (root / SEED, root / "dbt_project" / SEED):
        if cand.is_file():
            return cand
    raise AgentHopError(f"cannot find the price table {SEED} (looked under {root})")


@lru_cache(maxsize=4)
def load_prices(path: str | None = None) -> tuple[Price, ...]:
    """The price rows in ``price_order``."""
    p = Path(path) if path else price_table_path()
    try:
        with open(p, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        keyed = sorted(rows, key=lambda r: int(r["price_order"]))
        return tuple(Price(r["prefix"], float(r["input_per_m"]), float(r["output_per_m"]),
                           float(r["cache_read_mult"] or 0), float(r["cache_write_mult"] or 0)) for r in keyed)
    except (OSError, KeyError, ValueError) as exc:
        raise AgentHopError(f"{p}: unreadable price table ({exc})") from None


def price_for(model_id: str, prices: Sequence[Price] | None = None) -> Price | None:
    for price in prices if prices is not None else load_prices():
        if model_id.startswith(price.prefix):
            return price
    return None


def attempts_usd(price: Price | None, attempts: Iterable[Any]) -> float:
    """Estimated cost of a sample's attempts (their trajectory rows' token totals)."""
    if price is None:
        return 0.0
    total = 0.0
    for a in attempts:
        t = a.trajectory
        total += price.usd(int(t.get("total_prompt_tokens") or 0), int(t.get("total_completion_tokens") or 0),
                           int(t.get("cache_read_tokens") or 0), int(t.get("cache_creation_tokens") or 0))
    return total


def model_price(model: Any) -> Price | None:
    """The price of a real-backend model spec (None for sim and for models the table does not list)."""
    if getattr(model, "backend", "sim") == "sim":
        return None
    return price_for(model.provider_model)


class CostGuard:
    """``--max-cost-usd`` over every run of one invocation (see the module docstring).

    Each sample in flight holds a reservation (harness/reservations.py): the cost of the per-sample
    token cap at the model's price until that model has finished a sample in this invocation, then a
    high quantile of its samples' costs.
    """

    def __init__(self, cap_usd: float, strict: bool = False) -> None:
        self.cap_usd = float(cap_usd)
        self.strict = strict
        self.budget = Reservations(self.cap_usd)
        self._seen: dict[str, list[float]] = {}  # model -> USD of each finished sample
        self._unpriced_warned: set[str] = set()
        self._ceiling_warned: set[str] = set()
        self.refused = False

    @property
    def spent_usd(self) -> float:
        return self.budget.spent

    def reservation(self, model: Any, token_cap: int, attempts: int = 1) -> tuple[float, bool]:
        """(USD one more sample of ``model`` reserves, whether that is the provisional ceiling).

        Strict: the ceiling of all ``attempts`` the loop may make, never provisional (a sample the
        cap cannot pay for in full does not start)."""
        price = model_price(model)
        if price is None:
            return 0.0, False
        if self.strict:
            return price.max_usd(token_cap) * max(1, attempts), False
        return estimate(self._seen.get(model.name, []), price.max_usd(token_cap))

    async def reserve(self, model: Any, token_cap: int, attempts: int = 1) -> int | None:
        """A ticket for one more sample of ``model`` once the cap can pay for it (None: the cap is
        reached; ``refused`` is then set)."""
        name = model.name
        if model_price(model) is None and model.backend != "sim" and name not in self._unpriced_warned:
            self._unpriced_warned.add(name)
            print(f"model {name!r}: {model.provider_model!r} is not in the price table; --max-cost-usd does not "
                  "count its samples", file=sys.stderr, flush=True)
        ticket = await self.budget.reserve(lambda: self.reservation(model, token_cap, attempts))
        if ticket is None:
            self.refused = True
            ceiling, _ = self.reservation(model, token_cap, attempts)
            if self.strict and name not in self._ceiling_warned:
                self._ceiling_warned.add(name)
                print(f"model {name!r}: --strict-cost-cap: one more sample may cost up to ${ceiling:.4f} "
                      f"({max(1, attempts)} attempt(s) of {token_cap:,} tokens at the dearest rate), more than "
                      f"the ${max(0.0, self.cap_usd - self.spent_usd):.4f} left of --max-cost-usd",
                      file=sys.stderr, flush=True)
        return ticket

    def spent(self, model: Any, attempts: Sequence[Any], ticket: int | None = None) -> float:
        """Record a finished sample of ``model`` (holding ``ticket``); returns its estimated cost."""
        usd = attempts_usd(model_price(model), attempts)
        self._seen.setdefault(model.name, []).append(usd)
        self.budget.settle(ticket, usd)
        return usd

    def dropped(self, ticket: int | None) -> None:
        """The sample of ``ticket`` was not finished (cancelled) or never started."""
        self.budget.release(ticket)


def price_or_none(model: Any) -> Price | None:
    """The price-table row of a real-backend model, for the progress line (None: unknown, sim, or no
    price table)."""
    if getattr(model, "backend", "sim") == "sim":
        return None
    try:
        return model_price(model)
    except AgentHopError:
        return None


def cost_guard_for(max_cost_usd: float, strict: bool = False) -> CostGuard | None:
    """The cost guard of ``--max-cost-usd`` (None when off); ``strict``: ``--strict-cost-cap``."""
    return CostGuard(max_cost_usd, strict) if max_cost_usd else None
