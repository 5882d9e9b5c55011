"""Names the layers share, in a module without pyarrow: the command line imports them at start-up, before
it knows whether the command needs Arrow (``schemas/trajectory.py`` re-exports them)."""

from __future__ import annotations

#: ``runs.benchmark`` of run files written before the column existed (all of them AgentHop runs).
DEFAULT_BENCHMARK = "agenthop"

#: Allowed values of ``runs.condition`` (docs/harness.md#deliberate-differences).
CONDITIONS: tuple[str, ...] = ("full", "no_search", "closed_book")
