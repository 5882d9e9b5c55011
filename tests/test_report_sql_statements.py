"""``agenthop-report sql``: one statement per call, DuckDB's own hint kept when the project's suggester finds
nothing, and intervals printed exactly (a month is a month, not 30 days)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from agenthop.reports.cli import main


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "wh.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t (alpha INTEGER, beta INTEGER)")
    con.execute("INSERT INTO t VALUES (1, 2)")
    con.close()
    return path


def _sql(db: Path, query: str, fmt: str = "table") -> tuple[int, str, str]:
    res = CliRunner().invoke(main, ["sql", "--db", str(db), "--format", fmt, query])
    return res.exit_code, res.stdout, res.stderr


def test_sql_refuses_several_statements_instead_of_printing_only_the_last(db: Path) -> None:
    """``SELECT 1/0; SELECT 2`` once printed the result of ``SELECT 2`` alone, without a word."""
    code, out, err = _sql(db, "SELECT 1/0; SELECT 2")
    assert code == 2 and out == ""
    assert "2 statements" in err and "one statement per call" in err and "Traceback" not in err
    code, out, _ = _sql(db, "SELECT alpha FROM t; SELECT beta FROM t; SELECT 3", "json")
    assert code == 2 and out == ""
    # one statement with a trailing semicolon is one statement
    code, out, _ = _sql(db, "SELECT alpha FROM t;", "json")
    assert code == 0 and json.loads(out) == [{"alpha": 1}]


def test_sql_keeps_duckdbs_hint_when_the_suggester_finds_nothing(db: Path) -> None:
    code, _, err = _sql(db, "SELECT zzzz FROM t")
    assert code == 2 and 'Referenced column "zzzz"' in err and 'Candidate bindings: "alpha"' in err
    assert len(err.strip().splitlines()) == 1
    # a near name: the project's own hint, not DuckDB's
    code, _, err = _sql(db, "SELECT alph FROM t")
    assert code == 2 and "did you mean column alpha (t)?" in err and "Candidate bindings" not in err


def test_sql_prints_interval_months_exactly(db: Path) -> None:
    """DuckDB hands Python an INTERVAL as a timedelta, a month as 30 days ("P30D"); read through Arrow,
    the months are kept, nested intervals too, and other values (HUGEINT) are unchanged."""
    query = ("SELECT INTERVAL 1 MONTH AS m, INTERVAL 14 MONTH + INTERVAL 3 DAY AS y, "
             "INTERVAL 1 MONTH - INTERVAL 3 DAY AS mixed, -INTERVAL 1 MONTH AS neg, INTERVAL 25 HOUR AS h, "
             "[INTERVAL 2 MONTH] AS l, {'a': INTERVAL 1 YEAR} AS s, MAP {'k': INTERVAL 90 MINUTE} AS mp, "
             "NULL::INTERVAL AS n, 170141183460469231731687303715884105727::HUGEINT AS big, alpha FROM t")
    code, out, _ = _sql(db, query, "json")
    assert code == 0
    assert json.loads(out) == [{"m": "P1M", "y": "P1Y2M3D", "mixed": "P1M-3D", "neg": "-P1M", "h": "PT25H",
                                "l": ["P2M"], "s": {"a": "P1Y"}, "mp": {"k": "PT1H30M"}, "n": None,
                                "big": 170141183460469231731687303715884105727, "alpha": 1}]
    code, out, _ = _sql(db, "SELECT INTERVAL 1 MONTH AS m, alpha FROM t")
    assert code == 0 and out.splitlines()[2].split(" | ")[0].strip() == "P1M" and "P30D" not in out


def test_iso_interval_by_hand() -> None:
    from agenthop.reports.values import iso_interval

    assert iso_interval(0, 0, 0) == "PT0S"
    assert iso_interval(1, 0, 0) == "P1M"
    assert iso_interval(12, 0, 0) == "P1Y"
    assert iso_interval(-13, -2, 0) == "-P1Y1M2D"
    assert iso_interval(0, 1, 7_384_500_000_000) == "P1DT2H3M4.5S"
    assert iso_interval(0, 0, -1_000_000_000) == "-PT1S"
    assert iso_interval(1, 0, -1_500_000_000) == "P1MT-1.5S"
    assert iso_interval(0, 0, 1_000) == "PT0.000001S"
