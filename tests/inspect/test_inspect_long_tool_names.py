"""The compare page of two Inspect runs whose tools have AgentDojo's long names (dojo_tools.py): its tables
of tool names, the trigrams above all (three names in one cell, two tables side by side), fit a 1,024 px
and a 1,440 px page with their count and share columns in view, and a name breaks inside itself only when it
cannot fit its column whole."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

from conftest import run_dbt_build  # noqa: E402
from dojo_tools import CHAINS, write_dojo_logs  # noqa: E402
from markupsafe import Markup  # noqa: E402

from agenthop.reports.render import tool_name, tool_seq  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ARTIFACTS = REPO / "test-artifacts"


def _run(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, AGENTHOP_DB=str(db), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    return subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True, env=env, cwd=REPO)


def test_tool_names_break_after_underscores_only_and_stay_escaped() -> None:
    assert tool_name("get_most_recent_transactions") == Markup(
        '<span class="tool-name">get_<wbr>most_<wbr>recent_<wbr>transactions</span>')
    assert tool_name("<b>x_y") == Markup('<span class="tool-name">&lt;b&gt;x_<wbr>y</span>')
    assert "\x00" not in tool_name("a\x00b") and "\u2400" in tool_name("a\x00b")  # a NUL shown, as everywhere
    seq = tool_seq("get_balance>send_money>get_iban")
    assert seq.count('class="tool-name"') == 3 and seq.count("\u00a0→ ") == 2
    assert tool_seq(None) == Markup("") and tool_name(None) == Markup("")


@pytest.fixture(scope="module")
def compare_page(  # asked before the browser: Inspect's eval runs an event loop of its own
        tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("dojo")
    logs = write_dojo_logs(work / "logs")
    db = work / "w.duckdb"
    proc = _run("agenthop-ingest", "--db", str(db), *[x for log in logs for x in ("--inspect-log", str(log))], db=db)
    assert proc.returncode == 0, proc.stderr
    proc = run_dbt_build(db, work / "dbt")  # work/logs: the Inspect logs
    assert proc.returncode == 0, proc.stdout[-3000:]
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        runs = dict(con.execute("SELECT model, run_id FROM run_summary").fetchall())
    out = work / "compare.html"
    proc = _run("agenthop-report", "compare", "--runs", f"{runs['mockllm/teller']},{runs['mockllm/auditor']}",
                "--db", str(db), "--out", str(out), db=db)
    assert proc.returncode == 0, proc.stderr
    return out


#: Per trigram table: its box's overflow, whether its last column's cells sit inside the page, and the
#: tool-name spans that wrap over more than one line.
TRIGRAMS_JS = """() => { const h = Array.from(document.querySelectorAll('h3')).find(e => e.textContent.trim() === 'Top trigrams');
  const tables = Array.from(h.parentElement.querySelectorAll('table')).filter(t =>
      h.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING && t.querySelector('th').textContent.trim() === 'trigram');
  const edge = document.documentElement.clientWidth;
  return tables.map(t => { const box = t.closest('.tablewrap') || t.parentElement;
    const last = Array.from(t.querySelectorAll('tr')).map(r => r.cells[r.cells.length - 1].getBoundingClientRect());
    const names = Array.from(t.querySelectorAll('.tool-name'));
    return {over: box.scrollWidth - box.clientWidth, rows: t.tBodies[0].rows.length,
            inside: last.every(r => r.right <= Math.min(edge, box.getBoundingClientRect().right) + 1 && r.width > 0),
            broken: names.filter(n => n.getClientRects().length > 1 || n.getBoundingClientRect().height > 30)
                         .map(n => n.textContent), names: names.length}; }); }"""


@pytest.mark.browser
@pytest.mark.parametrize("width", (1024, 1440))
def test_trigram_tables_of_long_tool_names_fit_the_page(compare_page: Path, browser, width: int) -> None:  # noqa: F811
    page, errors, blocked, _ = _open(browser, compare_page, width)
    try:
        scroll = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert scroll[0] <= scroll[1], f"scrolls sideways at {width}px: {scroll}"
        tables = page.evaluate(TRIGRAMS_JS)
        wide = page.evaluate("""() => Array.from(document.querySelectorAll('main .tablewrap, main .scroll')).filter(b =>
            b.scrollWidth > b.clientWidth + 1).map(b => b.querySelector('th') ? b.querySelector('th').textContent : '')""")
        assert not page.evaluate(OVERLAPS_JS)["problems"]
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"inspect-dojo-compare-{width}.png"), full_page=True)
        page.locator("#transitions ~ div.cols2").first.screenshot(path=str(ARTIFACTS / f"inspect-dojo-trigrams-{width}.png"))
    finally:
        page.close()
    assert not errors and not blocked, (errors, blocked)
    assert len(tables) == 2 and all(t["rows"] == 4 for t in tables), tables  # each model's four trigrams
    for t in tables:
        assert t["over"] <= 1 and t["inside"], f"a trigram table hides its n / share columns at {width}px: {t}"
        assert t["names"] == 12 and t["broken"] == [], t  # every name whole: a trigram breaks between names
    assert wide == [], f"tables scrolling sideways at {width}px: {wide}"


from test_report_browser import OVERLAPS_JS, _open, browser  # noqa: E402,F401 (fixture)

assert set(CHAINS) == {"teller", "auditor"}
