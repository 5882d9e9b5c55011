"""The shared report pages (compare, reruns, item) on a benchmark other than AgentHop, in headless
Chromium at 1,024 and 1,280 px: the pages of tests/test_report_core_other_benchmark.py (toyqa, runs r0
and r1) render offline without sideways scroll or overlapping chart text, two definition links in one
caption say which is which, the scorer table puts "mean" and "n" under each run, item headers count in
English (1 turn, 0 calls), and a histogram of whole numbers (turns) and a chart of item counts have
whole-number ticks.

Needs Chromium and playwright like tests/test_report_browser.py; skips loudly without them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report_fixtures import run
from tests.test_core_other_benchmark import registered, warehouse  # noqa: F401  (fixtures)
from tests.test_report_browser import ARTIFACTS, OVERLAPS_JS, _open, browser  # noqa: F401  (fixture)
from tests.test_report_core_other_benchmark import pages, sections  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

WIDTHS = (1024, 1280)


@pytest.fixture(scope="module")
def core_pages(pages: dict[str, Path], warehouse: Path, sections) -> dict[str, Path]:  # noqa: F811
    """The test module's three pages and the item page of t3 (r1 ended it in 1 turn with no call)."""
    out = pages["item"].parent / "item-t3.html"
    code, _, err = run("item", "t3", "--runs", "r0,r1", "--db", str(warehouse), "--out", str(out))
    assert code == 0, err
    return {**pages, "item-t3": out}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", ["compare", "reruns", "item", "item-t3"])
def test_core_page_renders_offline(browser, core_pages: dict[str, Path], kind: str, width: int) -> None:  # noqa: F811
    page, errors, blocked, _ = _open(browser, core_pages[kind], width)
    try:
        scroll = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert scroll[0] <= scroll[1], f"{kind} at {width}px scrolls sideways: {scroll}"
        text = page.evaluate(OVERLAPS_JS)
        assert not text["problems"] and not text["small"], (kind, width, text)
        body = page.inner_text("body")
        for raw in (" None ", " nan ", " True ", " False ", "undefined"):
            assert raw not in f" {body} ".replace("\n", " "), f"{kind} at {width}px shows {raw.strip()!r}"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"core-{kind}-{width}.png"), full_page=True)
    finally:
        page.close()
    assert not errors and not blocked, (kind, errors, blocked)


def test_two_definition_links_in_one_caption_are_told_apart(browser, core_pages: dict[str, Path]) -> None:  # noqa: F811
    page, errors, _, _ = _open(browser, core_pages["compare"], 1280)
    try:
        same = page.evaluate("""() => Array.from(document.querySelectorAll('p')).map(p =>
            Array.from(p.querySelectorAll('a.def')).map(a => a.textContent.trim())).filter(t =>
            t.length > 1 && new Set(t).size < t.length).map(t => t.join(' | '))""")
        n_pairs = page.evaluate("""() => Array.from(document.querySelectorAll('p')).filter(p =>
            p.querySelectorAll('a.def').length > 1).length""")
    finally:
        page.close()
    assert n_pairs >= 3  # outcomes, transitions, resources
    assert same == [], f"captions whose definition links read alike: {same}"
    assert not errors


def test_scorer_table_puts_mean_and_n_under_each_run(browser, core_pages: dict[str, Path]) -> None:  # noqa: F811
    page, errors, _, _ = _open(browser, core_pages["compare"], 1024)
    try:
        heads = page.evaluate("""() => {
            const h = document.getElementById('scorers');  // the first table after the heading (tables may be wrapped)
            const table = Array.from(document.querySelectorAll('table')).find(t =>
                h.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING);
            return Array.from(table.querySelectorAll('thead tr')).map(tr =>
                Array.from(tr.children).map(th => [th.innerText.replace(/\\s+/g, ' ').trim(), th.colSpan]));
        }""")
    finally:
        page.close()
    assert not errors
    top = heads[0]
    runs = [h for h in top if h[0].startswith("toy-model")]
    assert len(runs) == 2 and all(span == 2 and not text.endswith("mean") for text, span in runs), heads
    assert [h[0] for h in heads[1]] == ["mean", "n", "mean", "n"], heads


def test_item_header_counts_in_english(browser, core_pages: dict[str, Path]) -> None:  # noqa: F811
    page, errors, _, _ = _open(browser, core_pages["item-t3"], 1024)
    try:
        text = page.inner_text("body")
    finally:
        page.close()
    assert not errors
    assert "1 turn · 0 calls" in text  # r1 on t3: one turn, no call
    assert "1 turns" not in text and "1 calls" not in text


TICKS_JS = """([title, axis]) => {
    for (const svg of document.querySelectorAll('div.chart svg')) {
        const t = svg.querySelector('.role-title-text');
        if (!t || t.textContent.trim() !== title) continue;
        return Array.from(svg.querySelectorAll('.role-axis')).filter(a =>
            (a.getAttribute('aria-label') || '').startsWith(axis)).flatMap(a =>
            Array.from(a.querySelectorAll('.role-axis-label text')).map(x => x.textContent));
    }
    return null;
}"""


@pytest.mark.parametrize(("kind", "title", "axis"), [
    ("compare", "Distribution of turns", "X-axis"),  # turns 1 to 3 in bins of one
    ("reruns", "Per-item consistency (full)", "Y-axis"),  # one item in each of 0, 1 and 2 of 2
])
def test_whole_number_axes_have_whole_number_ticks(browser, core_pages: dict[str, Path], kind: str, title: str,  # noqa: F811
                                                   axis: str) -> None:
    page, errors, _, _ = _open(browser, core_pages[kind], 1280)
    try:
        ticks = page.evaluate(TICKS_JS, [title, axis])
    finally:
        page.close()
    assert not errors
    assert ticks, f"no {axis} tick labels found on {title!r}"
    assert all(t.replace(",", "").isdigit() for t in ticks), f"{title}: fractional ticks {ticks}"
    assert len(set(ticks)) == len(ticks), f"{title}: a tick label repeats: {ticks}"


def test_a_registered_table_heads_its_text_columns_on_the_left(browser, core_pages: dict[str, Path]) -> None:  # noqa: F811
    """The toyqa Question section (registry.table_section): "question" heads text, so it sits left like it."""
    page, errors, _, _ = _open(browser, core_pages["item-t3"], 1024)
    try:
        cols = page.evaluate("""() => {
            const h = Array.from(document.querySelectorAll('h2, h3')).find(e => e.textContent.trim() === 'Question');
            const table = Array.from(document.querySelectorAll('table')).find(t =>
                h.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING);
            const heads = Array.from(table.querySelectorAll('thead th'));
            const cells = Array.from(table.querySelector('tbody tr').children);
            return heads.map((th, i) => [th.textContent.trim(), getComputedStyle(th).textAlign,
                                         getComputedStyle(cells[i]).textAlign]);
        }""")
    finally:
        page.close()
    assert not errors
    assert [c[0] for c in cols] == ["item", "question"]
    norm = {"start": "left", "end": "right"}
    assert all(norm.get(h, h) == norm.get(c, c) for _, h, c in cols), f"header and cells aligned apart: {cols}"
