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
