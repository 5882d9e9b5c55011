"""dbt-duckdb plugin: keep Python's garbage collector off dbt's parsed project while the nodes run.

By the time dbt opens its first DuckDB connection (when dbt-duckdb initialises the profile's plugins)
it has parsed the project into millions of Python objects that live until the process ends: the
manifest, the macros' compiled Jinja, the graph. Python's cycle collector keeps walking all of them,
at every full collection while the nodes run and once more when the interpreter shuts down, and
finds nothing to free: about a tenth of a first build's CPU time (docs/ingest.md#the-first-build).
The plugin moves every object alive at that moment out of the collector's view (``gc.freeze``),
and again at exit, so the final collection has nothing left to walk. Memory is still freed by
reference counting; only cycles among those frozen objects would stay until the process ends, which
dbt's process does right after the build. The profile (profiles.yml) loads it with the guard.
"""

from __future__ import annotations

import atexit
import gc
from typing import Any

from dbt.adapters.duckdb.plugins import BasePlugin

_installed = False


def freeze_parsed_objects() -> bool:
    """Freeze every object alive now, and register a freeze at interpreter exit (once per process).
    Returns True when this call installed it, False when an earlier call had."""
    global _installed
    gc.freeze()
    if _installed:
        return False
    atexit.register(gc.freeze)
    _installed = True
    return True


class Plugin(BasePlugin):
    def initialize(self, plugin_config: dict[str, Any]) -> None:
        freeze_parsed_objects()
