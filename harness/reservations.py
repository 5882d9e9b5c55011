"""Caps that hold under concurrency (``--max-cost-usd``, ``--max-run-tokens``; docs/running.md).

Every sample in flight holds a reservation of what it may spend. A new sample starts only when what
was spent, plus what the samples in flight hold, plus its own reservation stays within the cap; a
finished sample turns its reservation into what it really spent. So however many workers run, they
never start samples the cap cannot pay for.

A reservation is an estimate: until there are figures of one's own, the ceiling (what a sample can
spend under the per-sample token cap), and with it one sample at a time may start while the cap is
not reached; then a high quantile of the samples seen. The spend stays within the cap plus one
sample's cost as long as samples cost what their reservation says.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Callable, Sequence

#: the quantile of the samples seen that a sample reserves (nearest rank: the largest of fewer than 20)
QUANTILE = 0.95


def high_quantile(values: Sequence[float], q: float = QUANTILE) -> float:
    """The nearest-rank ``q`` quantile of ``values`` (not empty)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def estimate(seen: Sequence[float], ceiling: float) -> tuple[float, bool]:
    """(what one more sample reserves, whether that is the provisional ceiling)."""
    return (high_quantile(seen), False) if seen else (ceiling, True)


class Reservations:
    """Spend under one cap, shared by the samples of every worker in one event loop."""

    def __init__(self, cap: float, spent: float = 0.0) -> None:
        self.cap = float(cap)
        self.spent = float(spent)
        self._held: dict[int, float] = {}
        self._ids = itertools.count()
        self._changed = asyncio.Event()

    @property
    def held(self) -> float:
        return sum(self._held.values())

    def try_reserve(self, amount: float, *, provisional: bool = False) -> int | None:
        """A ticket for a sample that may spend ``amount``, or None when the cap cannot pay for it. A
        ``provisional`` amount (no figures yet) may start alone while the cap is not reached."""
        fits = self.spent + self.held + amount <= self.cap
        if fits or (provisional and not self._held and self.spent < self.cap):
            ticket = next(self._ids)
            self._held[ticket] = amount
            return ticket
        return None

    async def reserve(self, amount: Callable[[], tuple[float, bool]]) -> int | None:
        """Wait until a sample of ``amount()`` (re-estimated as samples finish) fits; None when it cannot
        fit even with nothing else in flight (the cap is reached)."""
        while True:
            value, provisional = amount()
            ticket = self.try_reserve(value, provisional=provisional)
            if ticket is not None or not self._held:
                return ticket
            self._changed.clear()
            await self._changed.wait()

    def settle(self, ticket: int | None, spent: float) -> None:
        """The sample of ``ticket`` finished having spent ``spent``."""
        self._held.pop(ticket, None)  # type: ignore[arg-type]
        self.spent += spent
        self._changed.set()

    def release(self, ticket: int | None) -> None:
        """The sample of ``ticket`` did not finish (cancelled) or never started."""
        self._held.pop(ticket, None)  # type: ignore[arg-type]
        self._changed.set()
