"""Writing the metric catalogue (ingest/metric_catalogue.py) on an in-memory warehouse: sources' rows merge,
the user's direction and primary metric survive a later import."""

from __future__ import annotations

import duckdb
import pytest

from agenthop.ingest import ddl
from agenthop.ingest.conform import IngestError
from agenthop.ingest.metric_catalogue import apply_settings, parse_direction, upsert_source_rows


def _row(metric: str, kind: str = "binary", primary: bool = False, bench: str = "inspect:t") -> dict:
    binary = kind == "binary"
    return {"benchmark": bench, "metric": metric, "kind": kind, "direction": "higher_is_better", "is_primary": primary,
            "label": metric, "source": "inspect", "description": None,
            "min_value": 0.0 if binary else None, "max_value": 1.0 if binary else None}


@pytest.fixture
def con():
    c = duckdb.connect()
    for stmt in ddl.ddl_statements():
        c.execute(stmt)
    yield c
    c.close()


def _catalogue(con) -> list[tuple]:
    return con.execute("SELECT metric, kind, direction, is_primary, source, min_value, max_value "
                       "FROM raw.metric_defs ORDER BY metric").fetchall()


def test_a_metric_binary_in_one_log_and_continuous_in_another_is_continuous_without_bounds(con) -> None:
    upsert_source_rows(con, [_row("g.utility", primary=True), _row("g.security")])
    upsert_source_rows(con, [_row("g.utility", "continuous", primary=True)])
    assert _catalogue(con) == [
        ("g.security", "binary", "higher_is_better", False, "inspect", 0.0, 1.0),
        ("g.utility", "continuous", "higher_is_better", True, "inspect", None, None),
    ]


def test_the_users_direction_and_primary_survive_a_later_import(con) -> None:
    upsert_source_rows(con, [_row("g.utility", primary=True), _row("g.security")])
    assert apply_settings(con, [parse_direction("security=lower")], ["security"]) == [
        "inspect:t g.security: lower_is_better", "inspect:t g.security: primary"]
    upsert_source_rows(con, [_row("g.utility", primary=True), _row("g.security"), _row("e.value", primary=False)])
    assert _catalogue(con) == [
        ("e.value", "binary", "higher_is_better", False, "inspect", 0.0, 1.0),
        ("g.security", "binary", "lower_is_better", True, "user", 0.0, 1.0),
        ("g.utility", "binary", "higher_is_better", False, "inspect", 0.0, 1.0),
    ]


def test_an_imports_primary_replaces_the_previous_imports(con) -> None:
    upsert_source_rows(con, [_row("g.utility", primary=True), _row("e.value")])
    upsert_source_rows(con, [_row("g.utility"), _row("e.value", primary=True)])
    assert [r[0] for r in _catalogue(con) if r[3]] == ["e.value"]


@pytest.mark.parametrize("text", ["security", "=lower", "security=worse"])
def test_bad_directions_are_errors(text: str) -> None:
    with pytest.raises(IngestError, match="--metric-direction"):
        parse_direction(text)
