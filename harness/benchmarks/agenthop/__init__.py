"""AgentHop: four-option questions answered by navigating a citation graph (docs/benchmark.md).

Its registry entry is :data:`BENCHMARK` (built in ``entry.py`` on first access, so that importing
one of this folder's modules does not import all of them).
"""

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "BENCHMARK":
        from .entry import BENCHMARK

        return BENCHMARK
    raise AttributeError(name)
