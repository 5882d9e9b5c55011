"""dbt-duckdb plugin: refuse to open a warehouse file that does not exist yet.

DuckDB creates the database file when dbt connects, before any on-run-start hook can check it, so a
`dbt build` run before `agenthop-ingest` used to leave an empty warehouse file behind. The profile
(profiles.yml) loads this plugin; dbt-duckdb initialises plugins before it opens the connection,
so the check runs first and nothing is created. The on-run-start guard (require_raw_tables) still
catches a warehouse that exists but holds no raw tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbt.adapters.duckdb.plugins import BasePlugin


def missing_warehouse_message(path: str) -> str | None:
    """The error for a warehouse path that does not exist (None for in-memory or existing files)."""
    if not path or path == ":memory:" or path.startswith(("md:", "motherduck:")):
        return None
    target = Path(path).expanduser()
    if target.exists():
        return None
    return (f"warehouse {target.absolute()} does not exist: load a benchmark and runs with agenthop-ingest "
            "first (and point AGENTHOP_DB at that warehouse); dbt did not create it")


class Plugin(BasePlugin):
    def initialize(self, plugin_config: dict[str, Any]) -> None:
        message = missing_warehouse_message(str(getattr(self.creds, "path", "") or ""))
        if message:
            raise RuntimeError(message)
