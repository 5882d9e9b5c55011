"""The dbt-duckdb plugin that keeps Python's garbage collector off dbt's parsed project (ingest/dbt_gc.py)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from dbt.adapters.duckdb.plugins import BasePlugin

from agenthop.ingest import dbt_gc

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh_plugin_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Callable[[], object]]]:
    """A process in which the plugin has not run yet; the exit hooks it registers are collected, not run."""
    registered: list[Callable[[], object]] = []
    monkeypatch.setattr(dbt_gc, "_installed", False)
    monkeypatch.setattr(dbt_gc.atexit, "register", registered.append)
    try:
        yield registered
    finally:
        gc.unfreeze()


def test_profile_loads_the_plugin() -> None:
    plugins = yaml.safe_load((REPO / "profiles.yml").read_text())["agenthop"]["outputs"]["local"]["plugins"]
    assert {"module": "agenthop.ingest.dbt_gc"} in plugins
    assert {"module": "agenthop.ingest.dbt_guard"} in plugins  # the guard stays


def test_freeze_moves_live_objects_out_of_the_collector_and_again_at_exit(
        fresh_plugin_state: list[Callable[[], object]]) -> None:
    gc.unfreeze()
    kept = [[i] for i in range(1000)]  # objects alive when dbt opens its connection
    assert dbt_gc.freeze_parsed_objects() is True
    assert gc.get_freeze_count() >= len(kept)
    assert fresh_plugin_state == [gc.freeze]  # the final collection has nothing left to walk
    # a second environment (dbt closes and reopens connections) freezes again, registers nothing more
    assert dbt_gc.freeze_parsed_objects() is False
    assert fresh_plugin_state == [gc.freeze]


def test_dbt_duckdb_creates_the_plugin(fresh_plugin_state: list[Callable[[], object]]) -> None:
    gc.unfreeze()
    plugin = BasePlugin.create("agenthop.ingest.dbt_gc")
    assert isinstance(plugin, dbt_gc.Plugin)
    assert gc.get_freeze_count() > 0
    assert fresh_plugin_state == [gc.freeze]
