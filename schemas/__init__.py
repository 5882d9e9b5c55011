"""Arrow schemas: the single source of truth for file formats and raw warehouse tables."""

from . import benchmark, trajectory

__all__ = ["benchmark", "trajectory"]
