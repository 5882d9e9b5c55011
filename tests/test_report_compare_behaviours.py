"""The behaviours section of the shared compare page, on the hand-built warehouse of scanner_fixtures.py (its runs
under a benchmark of no registered page of its own) after a scan of the shipped scanners, a labels file and a dbt
build: the numbers equal the marts and the hand-worked values, the paired difference is oriented A − B, flagged
items link to item pages that exist, the section is left out without scanner results, and the site links the
behaviours page when there are some."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import duckdb
import pytest
import scanner_fixtures as fx
from bs4 import BeautifulSoup
from click.testing import CliRunner
from conftest import run_dbt_build

from agenthop.ingest.scanners.cli import main as scan_main
from agenthop.reports.core.compare_behaviours import pooled_paired
from agenthop.reports.cli import main as report_main


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("compare_behaviours")
    db = fx.scanned(work, benchmark="toy")
    proc = run_dbt_build(db, work)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return db


def _compare(db: Path, out: Path, runs: str) -> BeautifulSoup:
    r = CliRunner().invoke(report_main, ["compare", "--runs", runs, "--db", str(db), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return BeautifulSoup(out.read_text(), "html.parser")


def _cells(table) -> list[list[str]]:  # type: ignore[no-untyped-def]
    return [[c.get_text(" ", strip=True) for c in tr.find_all("td")] for tr in table.find("tbody").find_all("tr")]


def _scanner(soup: BeautifulSoup, name: str):  # type: ignore[no-untyped-def]
    """The elements of scanner `name`'s part of the section, up to the next scanner."""
    out = []
    for el in soup.find("h3", id=re.compile(f"behaviour.*{name}")).find_next_siblings():
        if el.name in ("h3", "h2"):
            break
        out.append(el)
    return out


def test_compare_section_equals_the_marts_and_links_items(warehouse: Path, tmp_path: Path) -> None:
    soup = _compare(warehouse, tmp_path / "c.html", "r1,r2")
    assert soup.find("h2", id="behaviours") and soup.select_one('nav a[href="#behaviours"]')
    part = _scanner(soup, "give_up_or_hedge")
    prevalence = next(el for el in part if el.select_one("table.behaviour-prevalence")).find("table")
    # r1: s1 flagged of 3 final attempts; labels give Se 1/2 (s1 yes; r2/s1 yes, not flagged), Sp 1 (s2):
    # Rogan-Gladen (1/3 + 1 - 1) / (1/2 + 1 - 1) = 2/3
    rows = _cells(prevalence)
    assert rows[0][:6] == ["A", "m1 SIMULATED", "3", "1", "33.3", rows[0][5]] and rows[0][5].startswith("66.7 [")
    assert rows[0][6] == "s1" and rows[1][2:5] == ["2", "0", "0.0"] and rows[1][6] == "none"
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        lo, hi = con.execute("SELECT corrected_lo, corrected_hi FROM scanner_prevalence "
                             "WHERE run_id = 'r1' AND scanner = 'give_up_or_hedge'").fetchone()  # type: ignore[misc]
        fisher = con.execute("SELECT fisher_p FROM behaviour_outcomes WHERE run_id = 'r1' AND scanner = "
                             "'give_up_or_hedge' AND metric = 'score'").fetchone()[0]  # type: ignore[index]
        paired = con.execute("SELECT n_shared, a_only, b_only, difference, mcnemar_p FROM behaviour_paired "
                             "WHERE scanner = 'limit_reached' AND run_a = 'r1' AND run_b = 'r2'").fetchone()
    finally:
        con.close()
    assert rows[0][5] == f"66.7 [{100 * lo:.1f}, {100 * hi:.1f}]"
    # association with the shown metric: in r1 the flagged s1 scored 1, s2 and s3 0: Fisher p = 1/3
    outcomes = _cells(next(el for el in part if el.select_one("table.behaviour-outcomes")).find("table"))
    assert outcomes[0][2:8] == ["1", "2", "1.000", "0.000", "+1.000", "0.333"] and fisher == pytest.approx(1 / 3)
    # limit_reached: s2 hit the budget in r2 only (s3 is r1's alone): over the 2 shared items, A − B = −50 pp
    line = next(el for el in _scanner(soup, "limit_reached") if "behaviour-paired" in el.get("class", []))
    text = line.get_text(" ", strip=True)
    assert paired == (2, 0, 1, -0.5, 1.0)
    assert "over the 2 items both sides classified" in text and "difference -50.0 pp" in text
    assert "(0 flagged in A only, 1 in B only)" in text and "exact McNemar p = 1.00" in text
    assert "over the 6 paired tests" in soup.get_text(" ")
    links = [a["href"] for a in prevalence.find_all("a")]
    assert links and all((tmp_path / link.split("#")[0]).is_file() for link in links)
    assert (tmp_path / "c_files" / "items" / "s1.html").is_file()


def test_compare_section_is_oriented_a_minus_b(warehouse: Path, tmp_path: Path) -> None:
    soup = _compare(warehouse, tmp_path / "c.html", "r2,r1")
    line = next(el for el in _scanner(soup, "limit_reached") if "behaviour-paired" in el.get("class", []))
    text = line.get_text(" ", strip=True)
    assert "prevalence A 50.0%, B 0.0%, difference +50.0 pp" in text and "(1 flagged in A only, 0 in B only)" in text
    assert _cells(soup.select_one("table.behaviour-prevalence"))[0][:2] == ["A", "m2 SIMULATED"]


def test_compare_without_scanner_results_has_no_section(warehouse: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copyfile(warehouse, db)
    con = duckdb.connect(str(db))
    con.execute("DELETE FROM scanner_prevalence")
    con.close()
    html = (tmp_path / "c.html")
    soup = _compare(db, html, "r1,r2")
    assert soup.find(id="behaviours") is None and soup.select_one('nav a[href="#behaviours"]') is None
    r = CliRunner().invoke(report_main, ["site", "--db", str(db), "--out", str(tmp_path / "site"), "--quiet"])
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "site" / "behaviours.html").exists()
    index = BeautifulSoup((tmp_path / "site" / "index.html").read_text(), "html.parser")
    assert index.select_one('a[href="behaviours.html"]') is None


def test_site_links_the_behaviours_page_and_compare_has_the_section(warehouse: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    r = CliRunner().invoke(report_main, ["site", "--db", str(warehouse), "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    index = BeautifulSoup((out / "index.html").read_text(), "html.parser")
    assert index.select_one('a[href="behaviours.html"]') is not None
    assert "give_up_or_hedge" in (out / "behaviours.html").read_text()
    compares = list((out / "compare").rglob("*--*.html"))
    assert compares and all('id="behaviours"' in p.read_text() for p in compares)


def test_pooled_paired_difference_by_hand() -> None:
    # A pools a1 and a2, B is b1. x: a1 flags, a2 not (A 0.5), b1 not (B 0); y: all flag (1 vs 1);
    # z: A only, left out. n 2, prevalence A 0.75, B 0.5, A − B 0.25; the differences (0.5, 0): every sign
    # vector gives |mean| 0.25, so the sign-flip p is 1
    found = [{"run_id": r, "sample_id": s, "found": f} for r, s, f in (
        ("a1", "x", True), ("a2", "x", False), ("b1", "x", False), ("a1", "y", True), ("a2", "y", True),
        ("b1", "y", True), ("a1", "z", True))]
    t = pooled_paired(found, ["a1", "a2"], ["b1"])
    assert (t["n_shared"], t["prevalence_a"], t["prevalence_b"], t["difference"]) == (2, 0.75, 0.5, 0.25)
    assert t["test"] == "sign-flip permutation" and t["p"] == pytest.approx(1.0)


def _with_second_epoch(db: Path) -> None:
    """Add run r3: model m1's second replicate, a copy of r1's rows."""
    con = duckdb.connect(str(db))
    try:
        fx.insert(con, "runs", [{"run_id": "r3", "model": "m1", "backend": "sim", "condition": "full", "benchmark": "toy",
                                 "config_json": "{}", "replicate": 1}])
        fx.insert(con, "ingest_log", [{"load_id": 9, "kind": "runs", "source": "r3", "run_id": "r3",
                                       "content_sha256": "h3", "action": "inserted", "row_counts": "{}"}])
        for table in ("trajectories", "tool_calls", "turns", "messages"):
            con.execute(f"INSERT INTO raw.{table} SELECT * REPLACE ('r3' AS run_id) FROM raw.{table} WHERE run_id = 'r1'")
    finally:
        con.close()


def test_pooled_compare_section_uses_the_sign_flip_test(tmp_path: Path) -> None:
    db = fx.build(tmp_path / "w.duckdb", benchmark="toy")
    _with_second_epoch(db)
    assert CliRunner().invoke(scan_main, ["--scanners", "shipped:common", "--db", str(db)]).exit_code == 0
    assert run_dbt_build(db, tmp_path).returncode == 0
    out = tmp_path / "c.html"
    r = CliRunner().invoke(report_main, ["compare", "--models", "m1,m2", "--db", str(db), "--out", str(out)])
    assert r.exit_code == 0, r.output
    soup = BeautifulSoup(out.read_text(), "html.parser")
    rows = _cells(next(el for el in _scanner(soup, "limit_reached") if el.select_one("table.behaviour-prevalence")))
    assert [row[0] for row in rows] == ["A", "A", "B"]  # both runs of m1, then m2
    # limit_reached: A (r1, r3 alike) flags s3 only, B flags s2; over the shared s1 and s2 the per-item
    # differences are 0 and -1: A − B = -50 pp, and the sign-flip p of one non-zero difference is 1
    line = next(el for el in _scanner(soup, "limit_reached") if "behaviour-paired" in el.get("class", []))
    text = line.get_text(" ", strip=True)
    assert "over the 2 items both sides classified" in text and "prevalence A 0.0%, B 50.0%, difference -50.0 pp" in text
    assert "sign-flip permutation p = 1.00" in text and "flagged in A only" not in text


@pytest.mark.browser
def test_compare_section_renders_offline(warehouse: Path, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright
    from site_crawl import browse
    from test_report_browser import _browser_binary

    exe = _browser_binary()
    if exe is None:
        pytest.skip("no chromium binary")
    out = tmp_path / "c.html"
    _compare(warehouse, out, "r1,r2")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        page, errors, blocked, scroll = browse(browser, out.resolve(), 1024)
        section = page.locator("#behaviours")
        section.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "compare_behaviours.png"))
        assert not errors and not blocked and scroll <= 0  # the section's tables fit the page
        assert section.is_visible() and page.locator("#behaviours ~ h3[id*=behaviour-]").count() == 6  # six scanners
        page.locator("table.behaviour-prevalence a").first.click()  # a flagged item's page opens
        page.wait_for_load_state()
        assert "/items/" in page.url
        browser.close()
