"""Arrow schemas: the single source of truth for file formats and raw warehouse tables.

The submodules load on first use (``agenthop.schemas.trajectory``), so importing ``schemas.names``
does not load pyarrow.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["agenthop", "catalogue", "evolution", "metrics", "names", "scanners", "trajectory"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(name)
