"""Crawling a site written by `agenthop-report site`: every page reachable from its index by local links,
the links that do not resolve, and each page in headless Chromium (console errors, sideways scroll)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from bs4 import BeautifulSoup

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


@dataclass
class Crawl:
    pages: list[Path] = field(default_factory=list)  # every HTML page reached, index first
    broken: list[str] = field(default_factory=list)  # "page -> href" that resolves to no file
    absolute: list[str] = field(default_factory=list)  # "page -> href" that is not relative
    scripts: set[Path] = field(default_factory=set)  # the script files the pages load


def crawl(index: Path) -> Crawl:
    """Follow every href and src from `index` (fragments and external schemes aside)."""
    out = Crawl()
    seen = {index.resolve()}
    todo = deque([index.resolve()])
    while todo:
        page = todo.popleft()
        out.pages.append(page)
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for tag in soup.find_all(["a", "script", "link", "img"]):
            ref = tag.get("href") or tag.get("src")
            if not ref or ref.startswith("#"):
                continue
            url = urlparse(ref)
            if url.scheme in ("http", "https", "mailto") or url.netloc:
                continue  # outside links (docs citations) are not the site's
            if url.scheme or ref.startswith("/"):
                out.absolute.append(f"{page} -> {ref}")
                continue
            target = (page.parent / unquote(url.path)).resolve()
            if not target.is_file():
                out.broken.append(f"{page} -> {ref}")
                continue
            if tag.name == "script":
                out.scripts.add(target)
            if target.suffix == ".html" and target not in seen:
                seen.add(target)
                todo.append(target)
    return out


def browse(browser, page_path: Path, width: int = 1024):  # type: ignore[no-untyped-def]
    """Open a page offline; returns (page, console and page errors, blocked requests, sideways scroll)."""
    from test_report_browser import _open

    page, errors, blocked, _ = _open(browser, page_path, width)
    scroll = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    return page, errors, blocked, scroll


def representative(pages: list[Path], root: Path) -> list[Path]:
    """Every page but item pages, plus the first item page of each folder of them (the browser's share)."""
    out, folders = [], set()
    for p in pages:
        rel = p.relative_to(root.resolve())
        if "items" in rel.parts[:-1]:
            if p.parent in folders:
                continue
            folders.add(p.parent)
        out.append(p)
    return out


def in_chromium(root: Path, pages: list[Path], prefix: str) -> None:
    """Open the site's pages (item pages: one per folder) offline at 1,024 px: no console or page error, no
    request outside file://, no sideways scroll; a screenshot of every page but item pages in test-artifacts/."""
    from playwright.sync_api import sync_playwright
    from test_report_browser import _browser_binary

    exe = _browser_binary()
    if exe is None:
        pytest.skip("!!! NO CHROMIUM BINARY FOUND: the site browser test is SKIPPED !!!")
    ARTIFACTS.mkdir(exist_ok=True)
    problems = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        try:
            for path in representative(pages, root):
                page, errors, blocked, scroll = browse(b, path, 1024)
                name = str(path.relative_to(root.resolve())).replace("/", "__")
                if errors or blocked or scroll > 0:
                    problems.append((name, errors, blocked, scroll))
                if "/items/" not in str(path):
                    page.screenshot(path=str(ARTIFACTS / f"{prefix}-{name}.png"), full_page=True)
                page.close()
        finally:
            b.close()
    assert problems == [], problems


#: Per model name in a table cell (macro name_tag): each word's line boxes (a word is whole on one line: no
#: break at a hyphen), the lines the name takes, whether its SIM badge sits on the line of its last word, and
#: whether its cell shows all of it. Measured on the text, not on the markup's classes.
NAME_TAGS_JS = """() => Array.from(document.querySelectorAll('td .name-tag')).map(tag => {
  const badge = tag.querySelector('.badge.sim'), td = tag.closest('td'), words = [];
  const walker = document.createTreeWalker(tag, NodeFilter.SHOW_TEXT,
    {acceptNode: n => badge && badge.contains(n) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const re = /\\S+/g; let m;
    while ((m = re.exec(n.textContent)) !== null) {
      const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
      const rects = Array.from(r.getClientRects());
      words.push({w: m[0], lines: new Set(rects.map(x => Math.round(x.top))).size, last: rects[rects.length - 1],
                  left: Math.min(...rects.map(x => x.left)), right: Math.max(...rects.map(x => x.right))});
    }
  }
  const last = words[words.length - 1], c = td.getBoundingClientRect();
  let badgeApart = false, badgeClipped = false;
  if (badge) {
    const b = badge.getBoundingClientRect(), mid = (b.top + b.bottom) / 2;
    badgeApart = mid < last.last.top || mid > last.last.bottom;
    badgeClipped = b.right > c.right + 0.5;
  }
  return {name: words.map(x => x.w).join(' '), sim: !!badge, broken: words.filter(x => x.lines !== 1).map(x => x.w),
          lines: new Set(words.map(x => Math.round(x.last.top))).size, badgeApart,
          clipped: badgeClipped || words.some(x => x.left < c.left - 0.5 || x.right > c.right + 0.5)};
})"""


def name_tag_problems(browser, page_path: Path, width: int) -> tuple[list[dict], list[str]]:  # type: ignore[no-untyped-def]
    """The model names (macro name_tag) of a page at `width`, and what is wrong with them: a word broken across
    lines, a name of up to 40 characters on more than one line, a SIM badge off its name's last line, a name
    or badge its cell cuts off."""
    page, errors, _, _ = browse(browser, page_path, width)
    tags = page.evaluate(NAME_TAGS_JS)
    page.close()
    problems = [f"{width}px: {e}" for e in errors]
    for t in tags:
        if t["broken"]:
            problems.append(f"{width}px: {t['name']!r} breaks inside {t['broken']}")
        if len(t["name"]) <= 40 and t["lines"] != 1:
            problems.append(f"{width}px: {t['name']!r} takes {t['lines']} lines")
        if t["badgeApart"]:
            problems.append(f"{width}px: the SIM badge of {t['name']!r} is not on the line of its last word")
        if t["clipped"]:
            problems.append(f"{width}px: {t['name']!r} is cut off by its cell")
    return tags, problems
