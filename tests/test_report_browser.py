"""Every report renders offline in headless Chromium: each chart becomes an SVG with marks, no errors.

Needs Debian's `chromium-headless-shell` (apt-get install chromium-headless-shell) and playwright; the
test skips LOUDLY without them. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from agenthop.reports.cli import main

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"
CANDIDATES = ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium", "chromium-headless-shell", "chromium")


def _browser_binary() -> str | None:
    for c in CANDIDATES:
        path = c if c.startswith("/") and Path(c).exists() else shutil.which(c)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def browser():
    exe = _browser_binary()
    if exe is None:
        msg = ("!!! NO CHROMIUM BINARY FOUND: the report browser tests are SKIPPED. Install it with "
               "`apt-get install chromium-headless-shell` to check that reports render offline. !!!")
        warnings.warn(msg, stacklevel=1)
        print("\n" + msg)
        pytest.skip(msg)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - playwright is a test dependency
        msg = "!!! playwright is not installed: the report browser tests are SKIPPED (pip install playwright) !!!"
        warnings.warn(msg, stacklevel=1)
        pytest.skip(msg)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def reports(built_warehouse, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    db = built_warehouse.db
    out = tmp_path_factory.mktemp("reports")
    con = duckdb.connect(str(db), read_only=True)
    runs = [r[0] for r in con.execute(
        "SELECT run_id FROM model_summary WHERE model IN ('verifier', 'balanced') AND condition = 'full' "
        "ORDER BY model, replicate").fetchall()]
    sample = con.execute("SELECT min(sample_id) FROM fct_trajectory").fetchone()[0]
    con.close()
    commands = {
        "compare": ["compare", "--models", "verifier,metadata-looper"],
        "leaderboard": ["leaderboard"],
        "reruns": ["reruns", "--model", "verifier"],
        "item": ["item", sample, "--runs", ",".join(runs)],
    }
    paths = {}
    for kind, args in commands.items():
        path = out / f"{kind}.html"
        res = CliRunner().invoke(main, [*args, "--db", str(db), "--out", str(path)])
        assert res.exit_code == 0, (kind, res.stderr)
        paths[kind] = path
    return paths


@pytest.mark.parametrize("kind", ["compare", "leaderboard", "reruns", "item"])
def test_report_renders_offline(browser, reports: dict[str, Path], kind: str) -> None:
    path = reports[kind]
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    blocked: list[str] = []
    page.on("console", lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))

    def route(r) -> None:
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.goto(path.resolve().as_uri())
    n_charts = page.locator("div.chart").count()
    assert n_charts >= 1, f"{kind}: no chart containers"
    page.wait_for_selector(".vega-embed svg", state="attached", timeout=20_000)
    page.wait_for_function(f"document.querySelectorAll('div.chart svg').length >= {n_charts}", timeout=20_000)
    # every chart rendered an SVG document with at least one mark (Vega's aria role per mark item)
    marks = page.evaluate("""() => Array.from(document.querySelectorAll('div.chart')).map(d => {
        const svg = d.querySelector('svg');
        return svg ? svg.querySelectorAll('[role="graphics-symbol"]').length : -1;
    })""")
    assert all(m > 0 for m in marks), f"{kind}: charts without marks: {marks}"
    assert page.locator('div.chart.vega-embed[role="graphics-document"]').count() == n_charts
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"report-{kind}.png"), full_page=True)
    page.close()
    assert not errors, f"{kind}: {errors}"
    assert not blocked, f"{kind} tried to load external resources: {blocked}"


def test_simulated_badge_is_visible(browser, reports: dict[str, Path]) -> None:
    page = browser.new_page()
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
    page.goto(reports["compare"].resolve().as_uri())
    badge = page.locator(".badge.sim").first
    assert badge.is_visible()
    assert badge.inner_text().strip() == "SIMULATED"
    page.close()
