"""What the pages of issue 41 fixed, checked in headless Chromium at 1,024 and 1,440 px (the harness of
tests/test_report_browser.py): the reruns page lays its unstable items out as a compact grid, all of them
linked; the leaderboard scatter labels every point it has room for and names the rest, no text overlapping;
the paper report's Table 2 marks its simulated models and fits the page even with a long real model id;
none of these pages scrolls sideways. Screenshots go to test-artifacts/."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from agenthop.reports.cli import main
from tests.report_fixtures import _materialise
from tests.test_report_browser import ARTIFACTS, OVERLAPS_JS, _open, browser, demo  # noqa: F401  (fixtures)
from tests.test_report_paper import paper_wh  # noqa: F401  (fixture)

pytestmark = pytest.mark.browser

WIDTHS = (1024, 1440)
LONG_NAME = "gemini-2.0-flash-thinking-exp-01-21"  # a real model id's length: 35 characters


def _no_sideways_scroll(page, what: str, width: int) -> None:  # type: ignore[no-untyped-def]
    scroll = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert scroll[0] <= scroll[1], f"{what} at {width}px scrolls sideways: {scroll}"


@pytest.mark.parametrize("width", WIDTHS)
def test_reruns_lists_every_unstable_item_in_a_compact_grid(browser, demo: dict, width: int) -> None:  # noqa: F811
    page, errors, blocked, _ = _open(browser, demo["paths"]["reruns"], width)
    try:
        _no_sideways_scroll(page, "reruns", width)
        n = int(page.evaluate("""() => document.evaluate("//h2[starts-with(., 'Unstable items')]", document, null,
            XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue.textContent.match(/\\((\\d+)\\)/)[1]"""))
        grid = page.evaluate("""() => Array.from(document.querySelectorAll('ul.item-grid li')).map(li => {
            const r = li.getBoundingClientRect(), a = li.querySelector('a');
            return {left: Math.round(r.left), right: r.right, id: a.textContent, href: a.getAttribute('href'),
                    clipped: li.scrollWidth > li.clientWidth + 1}; })""")
        table_rows = page.locator("details.unstable-table table tbody tr").count()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"polish-reruns-{width}.png"), full_page=True)
    finally:
        page.close()
    assert not errors and not blocked, (errors, blocked)
    assert n >= 4 and len(grid) == n == table_rows  # every unstable item in the grid, and in the folded table
    assert len({g["id"] for g in grid}) == n and all(g["href"].endswith(".html") for g in grid)
    columns = len({g["left"] for g in grid})
    assert columns >= (4 if width == 1024 else 6) or columns == n, f"{columns} columns at {width}px"
    assert not [g["id"] for g in grid if g["clipped"]]


@pytest.mark.parametrize("width", WIDTHS)
def test_leaderboard_scatter_labels_apart_and_names_the_rest(browser, demo: dict, width: int) -> None:  # noqa: F811
    page, errors, blocked, _ = _open(browser, demo["paths"]["leaderboard"], width)
    try:
        _no_sideways_scroll(page, "leaderboard", width)
        chart = page.locator("div.chart:not(.frontier-chart)").first  # the accuracy-recall scatter
        labels = chart.evaluate("c => Array.from(c.querySelectorAll('g.mark-text.role-mark text')).map(t => t.textContent)")
        points = chart.evaluate("c => c.querySelectorAll('g.mark-symbol.role-mark path').length")
        subtitle = chart.evaluate("c => Array.from(c.querySelectorAll('g.role-title-subtitle text')).map(t => t.textContent).join(' ')")
        overlaps = page.evaluate(OVERLAPS_JS)
        chart.screenshot(path=str(ARTIFACTS / f"polish-leaderboard-scatter-{width}.png"))
    finally:
        page.close()
    assert not errors and not blocked, (errors, blocked)
    assert not overlaps["problems"], overlaps["problems"]
    assert points >= 4 and len(labels) == len(set(labels))
    named = [name for name in labels] + [p for p in subtitle.split(": ", 1)[-1].split(", ") if p and subtitle]
    assert len(named) == points, (labels, subtitle, points)  # every point: labelled, or named above the plot


@pytest.fixture(scope="module")
def long_name_paper(paper_wh, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """The paper report of the 19-model panel with one model renamed to a long real-style id (in a copy)."""
    work = tmp_path_factory.mktemp("paper-long-name")
    db = work / "w.duckdb"
    shutil.copyfile(paper_wh.db, db)
    con = duckdb.connect(str(db))
    old = con.execute("SELECT min(model) FROM model_summary WHERE model LIKE 'sim-cf-%-swift'").fetchone()[0]
    for name, kind in con.execute("SELECT table_name, table_type FROM information_schema.tables "
                                  "WHERE table_schema = 'main'").fetchall():
        cols = [c for (c,) in con.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = "
                                          "'main' AND table_name = ? AND data_type = 'VARCHAR'", [name]).fetchall()]
        hit = [c for c in cols if con.execute(f'SELECT count(*) FROM main."{name}" WHERE "{c}" = ?', [old]).fetchone()[0]]
        if hit:
            _materialise(con, name, kind)
            for c in hit:
                con.execute(f'UPDATE main."{name}" SET "{c}" = ? WHERE "{c}" = ?', [LONG_NAME, old])
    con.close()
    out = work / "paper"
    res = CliRunner().invoke(main, ["paper", "--db", str(db), "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out / "index.html"


@pytest.mark.parametrize("width", WIDTHS)
def test_paper_table2_marks_simulated_models_and_fits_with_a_long_model_id(browser, long_name_paper: Path,  # noqa: F811
                                                                          width: int) -> None:
    page, errors, blocked, _ = _open(browser, long_name_paper, width)
    try:
        _no_sideways_scroll(page, "paper", width)
        fit = page.evaluate("""() => { const t = document.querySelector('#table2 table.paper'), box = t.parentElement;
            return [box.scrollWidth, box.clientWidth, t.getBoundingClientRect().right, document.documentElement.clientWidth]; }""")
        rows = page.evaluate("""() => Array.from(document.querySelectorAll('#table2 tbody tr:not(.axis-row)')).map(r => ({
            name: r.cells[0].childNodes[0].textContent.trim(), badge: !!r.cells[0].querySelector('.badge.sim'),
            lines: new Set(Array.from(r.cells[0].childNodes[0].nodeType === 3 ? (() => { const g = document.createRange();
                g.selectNodeContents(r.cells[0].childNodes[0]); return g.getClientRects(); })() : []).map(x => Math.round(x.top))).size}))""")
        page.locator("#table2 table.paper").screenshot(path=str(ARTIFACTS / f"polish-paper-table2-{width}.png"))
    finally:
        page.close()
    assert not errors and not blocked, (errors, blocked)
    assert fit[0] <= fit[1] and fit[2] <= fit[3], f"Table 2 at {width}px: {fit}"
    assert len(rows) == 19 and all(r["badge"] for r in rows), rows  # the panel is simulated, every row says so
    assert any(r["name"].startswith(LONG_NAME) for r in rows)
    assert all(r["lines"] == 1 for r in rows if not r["name"].startswith(LONG_NAME)), rows  # short names: one line
