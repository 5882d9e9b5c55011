"""SciExplore's leaderboard in headless Chromium at 800, 1,024 and 1,440 px: a simulated system's name and
its SIM badge read as one ("sounder-dr (deep_research) SIM" on one line, never "sounder-dr
(deep_research)" over "SIM", nor "sounder-" over "dr"), as a paper's appendix table would print them."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from site_crawl import name_tag_problems
from sx_fixtures import ingest_and_build

from agenthop.reports.cli import main as report_main

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def leaderboard(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The leaderboard of the simulated systems' responses (every system, one replicate) to the seed-0 release."""
    from agenthop.harness.benchmarks.sciexplore.generator import write_release
    from agenthop.harness.benchmarks.sciexplore.release import load_release
    from agenthop.harness.benchmarks.sciexplore.simulate import write_responses

    work = tmp_path_factory.mktemp("sx-names")
    rel = work / "release"
    write_release(rel, seed=0)
    resp = work / "responses.jsonl"
    write_responses(resp, load_release(rel), seed=0, replicates=1)
    db = ingest_and_build(work, rel, resp)
    out = work / "leaderboard.html"
    r = CliRunner().invoke(report_main, ["leaderboard", "--db", str(db), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_simulated_names_keep_their_line_and_badge(leaderboard: Path) -> None:
    from playwright.sync_api import sync_playwright
    from test_report_browser import _browser_binary

    exe = _browser_binary()
    if exe is None:
        pytest.skip("!!! NO CHROMIUM BINARY FOUND: the SciExplore name-tag browser test is SKIPPED !!!")
    problems: list[str] = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        try:
            for width in (800, 1024, 1440):
                tags, found = name_tag_problems(b, leaderboard, width)
                problems += found
                # the names of the review: a hyphenated model, then its paradigm, then the badge
                assert "sounder-dr (deep_research)" in {t["name"] for t in tags if t["sim"]}, tags
        finally:
            b.close()
    assert problems == [], problems
