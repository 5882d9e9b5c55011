"""Arrow schemas: the single source of truth for file formats and raw warehouse tables."""

from . import agenthop, catalogue, evolution, metrics, trajectory

__all__ = ["agenthop", "catalogue", "evolution", "metrics", "trajectory"]
