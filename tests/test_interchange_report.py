"""Imported Every Eval Ever and ATIF files on the shared pages: the published files import, their runs get
a leaderboard table of their own, and an aggregate without instances shows as reported (docs/interchange.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BuiltWarehouse, cli, dbt_env, run_dbt_build
from tests.test_report_browser import ARTIFACTS, _open, browser  # noqa: F401  (fixture)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "interchange"
DEMO = FIXTURES / "eee_published" / "data" / "demo-source" / "demo-org" / "demo-model"


def _ok(*args: str | Path, db: Path) -> str:
    proc = subprocess.run([cli(str(args[0])), *map(str, args[1:])], capture_output=True, text=True, env=dbt_env(db))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.fixture(scope="module")
def leaderboard(built_warehouse: BuiltWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("interchange-report")
    db = work / "w.duckdb"
    shutil.copyfile(built_warehouse.db, db)
    reported = work / "reported" / "data" / "leaderboard-x" / "demo-org" / "demo-model"
    reported.mkdir(parents=True)
    record = json.loads((DEMO / "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json").read_text())
    del record["detailed_evaluation_results"]
    record["evaluation_results"][0]["evaluation_name"] = "leaderboard-x"
    record["evaluation_results"][0]["score_details"]["uncertainty"] = {
        "confidence_interval": {"lower": 0.61, "upper": 0.86, "confidence_level": 0.95}, "num_samples": 200}
    (reported / "0a7e41f6-1d2b-4c3e-8f10-2b3c4d5e6f70.json").write_text(json.dumps(record))
    _ok("agenthop-ingest", "--db", db, "--eee", FIXTURES / "eee_published", "--eee", work / "reported",
        "--atif", FIXTURES / "atif_published", db=db)
    proc = run_dbt_build(db, work)
    assert proc.returncode == 0, proc.stdout[-3000:]
    out = work / "leaderboard.html"
    _ok("agenthop-report", "leaderboard", "--db", db, "--out", out, db=db)
    return out


def test_imported_files_and_reported_results_on_the_leaderboard(browser, leaderboard: Path) -> None:  # noqa: F811
    page, errors, blocked, _ = _open(browser, leaderboard, 1280)
    try:
        assert errors == [] and blocked == []
        headings = page.locator("h2").all_inner_texts()
        assert {"eee:demo-source.demo_bench", "atif:openhands", "eee:leaderboard-x"} <= set(headings)
        table = page.locator("table.reported")
        assert table.count() == 1
        row = table.locator("tbody tr").first
        assert row.locator(".badge.reported").inner_text().strip().lower() == "reported"
        cells = row.locator("td").all_inner_texts()
        assert cells[1] == "demo-source.demo_bench.accuracy" and cells[2] == "0.750" and cells[3] == "[0.610, 0.860]"
        assert cells[4] == "200"
        ARTIFACTS.mkdir(exist_ok=True)
        table.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "interchange-leaderboard.png"), full_page=True)
    finally:
        page.close()
