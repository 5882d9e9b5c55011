"""agenthop-report behaviours on the hand-built warehouse of scanner_fixtures.py after a scan of the shipped
scanners, a labels file and a dbt build: the numbers the marts give, links to item pages that exist, the
adjustment named in the caption; one render in headless Chromium, offline."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import scanner_fixtures as fx
from click.testing import CliRunner
from conftest import run_dbt_build

from agenthop.ingest.scanners.cli import main as scan_main
from agenthop.reports.cli import main as report_main


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("behaviours")
    db = fx.scanned(work)
    proc = run_dbt_build(db, work)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return db


def _render(db: Path, out: Path, *extra: str) -> str:
    r = CliRunner().invoke(report_main, ["behaviours", "--db", str(db), "--out", str(out), *extra])
    assert r.exit_code == 0, r.output
    return out.read_text()


def test_behaviours_page_numbers_links_and_caption(warehouse: Path, tmp_path: Path) -> None:
    html = _render(warehouse, tmp_path / "b.html")
    for name in ("repeated_call", "retry_after_error", "answer_without_tool_call", "limit_reached", "give_up_or_hedge",
                 "unknown_tool_call"):
        assert f">{name}</h2>" in html
    # give_up_or_hedge in r1: 1 of 3 final attempts (33.3%), corrected with Se 0.5, Sp 1 to 66.7%;
    # kappa 0.4 against ann over 3 attempts (scanner_marts test: worked by hand)
    assert re.search(r"<td class=\"num\">3</td><td class=\"num\">1</td><td class=\"num\">33\.3</td>\s*"
                     r"<td class=\"num\">66\.7 \[", html)
    assert "0.40 [" in html
    # six scanners x two runs with a primary metric; Fisher tests exist where both groups are non-empty
    assert "Adjusted p: Holm (family-wise error) over the 6 Fisher tests on this page" in html
    # r1 and r2 share s1 and s2; discordant there: answer_without_tool_call (s2 in r1), limit_reached (s2 in r2),
    # give_up_or_hedge and repeated_call (s1 in r1): four McNemar tests, each 1 against 0 (p = 1)
    assert "Adjusted p: Holm (family-wise error) over the 4 McNemar tests of every scanner" in html
    assert html.count("Paired prevalence between runs") == 4
    assert "Benjamini–Hochberg" in _render(warehouse, tmp_path / "bh.html", "--adjust", "bh")
    links = re.findall(r'<a href="(b_files/items/[^"]+)"', html)
    assert links and all((tmp_path / link.split("#")[0]).is_file() for link in links)


def test_behaviours_page_without_scanner_results_says_how_to_scan(tmp_path: Path) -> None:
    db = fx.build(tmp_path / "w.duckdb", with_scanner_tables=False)
    assert run_dbt_build(db, tmp_path).returncode == 0
    r = CliRunner().invoke(report_main, ["behaviours", "--db", str(db), "--out", str(tmp_path / "b.html")])
    assert r.exit_code == 0 and "holds no scanner results" in r.output
    assert "agenthop-scan --scanners shipped:common" in (tmp_path / "b.html").read_text()


def test_behaviours_page_refuses_marts_older_than_a_scan(warehouse: Path, tmp_path: Path) -> None:
    import shutil

    db = tmp_path / "w.duckdb"
    shutil.copyfile(warehouse, db)
    f = tmp_path / "s.yml"
    f.write_text("scanners:\n  - {name: again, version: 1, kind: pattern, repeat: 2}\n")
    assert CliRunner().invoke(scan_main, ["--scanners", str(f), "--db", str(db)]).exit_code == 0
    r = CliRunner().invoke(report_main, ["behaviours", "--db", str(db), "--out", str(tmp_path / "b.html")])
    assert r.exit_code == 2 and "marts are stale: run dbt build" in r.output, r.output


@pytest.mark.browser
def test_behaviours_page_renders_offline(warehouse: Path, tmp_path: Path) -> None:
    from test_report_browser import _browser_binary

    exe = _browser_binary()
    if exe is None:
        pytest.skip("no chromium binary")
    from playwright.sync_api import sync_playwright

    out = tmp_path / "b.html"
    _render(warehouse, out)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1024, "height": 900})
        errors: list[str] = []
        blocked: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else (
            blocked.append(r.request.url), r.abort()))
        page.goto(out.resolve().as_uri())
        page.screenshot(path=str(tmp_path / "behaviours.png"), full_page=True)
        assert not errors and not blocked
        # no table wider than the page: the widest (prevalence with the flagged items) fits 1,024 px
        assert page.evaluate("document.documentElement.scrollWidth") <= 1024
        assert page.locator("h2").count() == 7  # six scanners and the definitions appendix
        browser.close()
