"""AgentHop's folded pages (the shared compare and item pages with AgentHop's sections,
tests/test_report_agenthop_folded.py) in headless Chromium at 1,024 and 1,440 px, network blocked: no
console error, no sideways scroll of the page, no overlapping chart text; screenshots in test-artifacts/.
The pooled compare (verifier's two replicates against balanced) is shown too.

Needs Chromium and playwright like tests/test_report_browser.py; skips loudly without them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report_fixtures import run
from tests.test_report_agenthop_folded import db, pages  # noqa: F401  (fixtures)
from tests.test_report_browser import ARTIFACTS, OVERLAPS_JS, _open, browser  # noqa: F401  (fixture)

pytestmark = pytest.mark.browser

WIDTHS = (1024, 1440)


@pytest.fixture(scope="module")
def folded(pages: dict[str, Path], db: Path) -> dict[str, Path]:  # noqa: F811
    out = pages["compare"].parent / "pooled.html"
    code, _, err = run("compare", "--models", "verifier,balanced", "--db", str(db), "--out", str(out))
    assert code == 0, err
    return {"compare": pages["compare"], "item": pages["item"], "pooled": out}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", ["compare", "pooled", "item"])
def test_folded_agenthop_page_renders_offline(browser, folded: dict[str, Path], kind: str, width: int) -> None:  # noqa: F811
    page, errors, blocked, _ = _open(browser, folded[kind], width)
    try:
        scroll = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert scroll[0] <= scroll[1], f"{kind} at {width}px scrolls sideways: {scroll}"
        text = page.evaluate(OVERLAPS_JS)
        assert not text["problems"], (kind, width, text["problems"])
        # the page above its definitions appendix (whose prose may say "undefined" of a rate)
        body = page.evaluate("""() => { const d = document.getElementById('definitions');
            const r = document.createRange(); r.setStartBefore(document.body.firstChild);
            if (d) r.setEndBefore(d); else r.setEndAfter(document.body.lastChild);
            return r.toString(); }""")
        for raw in (" None ", " nan ", " True ", " False ", "undefined"):
            assert raw not in f" {body} ".replace("\n", " "), f"{kind} at {width}px shows {raw.strip()!r}"
        n_charts = page.evaluate("document.querySelectorAll('div.chart svg, div.chart canvas').length")
        assert n_charts >= (1 if kind == "item" else 10), (kind, n_charts)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"folded-agenthop-{kind}-{width}.png"), full_page=True)
    finally:
        page.close()
    assert not errors and not blocked, (kind, errors, blocked)
