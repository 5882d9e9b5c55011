"""Every report in headless Chromium, offline, at 1,024 and 1,440 px: charts render, nothing scrolls
sideways, no two chart texts overlap, chart text is at least 11 px, every relative link resolves, no
console or page errors; a table wider than its box scrolls with a sticky first column and a cue, every
table of more than ten rows sorts and filters, six runs side by side break no word; and a demo item page
shows the item as the warehouse holds it, with every received text, clipped, that "show all" unfolds.

Needs Debian's `chromium-headless-shell` (apt-get install chromium-headless-shell) and playwright; the
tests skip LOUDLY without them. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path
from urllib.parse import unquote, urlparse

import duckdb
import pytest
from click.testing import CliRunner

from agenthop.reports.cli import main

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"
CANDIDATES = ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium", "chromium-headless-shell", "chromium")
WIDTHS = (1024, 1440)
KINDS = ("compare", "leaderboard", "reruns", "item", "item6", "compare-single")


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
def demo(messages_warehouse, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every report over the warehouse with transcribed runs (item pages show received text)."""
    db = messages_warehouse.db
    out = tmp_path_factory.mktemp("reports")
    con = duckdb.connect(str(db), read_only=True)
    plain = con.execute("SELECT min(run_id) FROM model_summary WHERE model = 'balanced' AND condition = 'full'").fetchone()[0]
    ids = [*messages_warehouse.run_ids, plain]
    # an item on which the transcribed runs made delivered reads
    sample = con.execute(
        f"SELECT sample_id FROM fct_tool_call WHERE run_id IN (?, ?) AND tool = 'read_section' AND status = 'ok' "
        f"AND output_text IS NOT NULL GROUP BY sample_id HAVING count(DISTINCT run_id) = 2 ORDER BY sample_id LIMIT 1",
        list(messages_warehouse.run_ids)).fetchone()[0]
    six = [*ids, *(r[0] for r in con.execute(
        f"SELECT run_id FROM model_summary WHERE run_id NOT IN ({','.join('?' * len(ids))}) ORDER BY run_id LIMIT 3",
        ids).fetchall())]
    con.close()
    assert len(six) == 6
    commands = {
        "compare": ["compare", "--models", "verifier-transcribed,greedy-transcribed"],
        "item6": ["item", sample, "--runs", ",".join(six)],
        "leaderboard": ["leaderboard"],
        "reruns": ["reruns", "--model", "verifier"],
        "item": ["item", sample, "--runs", ",".join(ids)],
        "compare-single": ["compare", "--models", "verifier,metadata-looper", "--single-file"],
    }
    paths = {}
    for kind, args in commands.items():
        path = out / f"{kind}.html"
        res = CliRunner().invoke(main, [*args, "--db", str(db), "--out", str(path)])
        assert res.exit_code == 0, (kind, res.stderr)
        paths[kind] = path
    return {"paths": paths, "db": db, "sample": sample, "runs": ids, "out": out}


def _open(browser, path: Path, width: int):
    page = browser.new_page(viewport={"width": width, "height": 900})
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
    if n_charts:
        page.wait_for_function(f"document.querySelectorAll('div.chart svg').length >= {n_charts}", timeout=30_000)
        page.wait_for_timeout(300)  # container-width charts re-render once after their first layout
    return page, errors, blocked, n_charts


OVERLAPS_JS = """() => {
  const hidden = (el, stop) => {
    for (let e = el; e && e !== stop; e = e.parentNode) {
      if (e.getAttribute && e.getAttribute('opacity') === '0') return true;
      const cs = e.nodeType === 1 ? getComputedStyle(e) : null;
      if (cs && (cs.opacity === '0' || cs.visibility === 'hidden' || cs.display === 'none')) return true;
    }
    return false;
  };
  const problems = [], small = [];
  document.querySelectorAll('div.chart svg').forEach((svg, ci) => {
    const boxes = [];
    svg.querySelectorAll('text').forEach(t => {
      if (!t.textContent.trim() || hidden(t, svg)) return;
      const r = t.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return;
      const size = parseFloat(getComputedStyle(t).fontSize);
      if (size < 11) small.push(`chart ${ci}: '${t.textContent}' at ${size}px`);
      boxes.push({s: t.textContent, r: r});
    });
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i].r, b = boxes[j].r, tol = 1;
      if (a.left + tol < b.right && b.left + tol < a.right && a.top + tol < b.bottom && b.top + tol < a.bottom)
        problems.push(`chart ${ci}: '${boxes[i].s}' overlaps '${boxes[j].s}'`);
    }
  });
  return {problems, small};
}"""


#: Legend labels outside their chart's box (a one-row legend of four runs' names over a half-width chart
#: loses the last names at the edge).
LEGEND_CLIPPED_JS = """() => Array.from(document.querySelectorAll('div.chart')).flatMap((d, i) => {
  const box = d.getBoundingClientRect();
  return Array.from(d.querySelectorAll('svg .role-legend-label text')).filter(t => t.textContent.trim())
    .filter(t => { const r = t.getBoundingClientRect(); return r.right > box.right + 1 || r.left < box.left - 1; })
    .map(t => `chart ${i}: '${t.textContent}'`); })"""


#: Neighbouring tick labels of one axis closer than 4 px (e.g. "90%" and "100%" touching at the end of a
#: short percentage axis): legible apart only by squinting.
AXIS_GAPS_JS = """() => {
  const out = [];
  document.querySelectorAll('div.chart svg').forEach((svg, ci) => {
    svg.querySelectorAll('g.role-axis').forEach(ax => {
      const horiz = (ax.getAttribute('aria-label') || '').startsWith('X');
      const labels = Array.from(ax.querySelectorAll('g.role-axis-label text'))
        .filter(t => t.textContent.trim() && t.getAttribute('opacity') !== '0')
        .map(t => ({s: t.textContent, r: t.getBoundingClientRect()}))
        .sort((a, b) => horiz ? a.r.left - b.r.left : a.r.top - b.r.top);
      for (let i = 1; i < labels.length; i++) {
        const a = labels[i - 1].r, b = labels[i].r, gap = horiz ? b.left - a.right : b.top - a.bottom;
        if (gap < 4) out.push(`chart ${ci}: '${labels[i - 1].s}' and '${labels[i].s}' ${gap.toFixed(1)} px apart`);
      }
    });
  });
  return out;
}"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", KINDS)
def test_report_renders_offline(browser, demo: dict, kind: str, width: int) -> None:
    path = demo["paths"][kind]
    page, errors, blocked, n_charts = _open(browser, path, width)
    assert n_charts >= 1, f"{kind}: no chart containers"
    marks = page.evaluate("""() => Array.from(document.querySelectorAll('div.chart')).map(d => {
        const svg = d.querySelector('svg');
        return svg ? svg.querySelectorAll('[role="graphics-symbol"]').length : -1;
    })""")
    assert all(m > 0 for m in marks), f"{kind}: charts without marks: {marks}"
    scroll = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert scroll[0] <= scroll[1], f"{kind} at {width}px scrolls sideways: {scroll}"
    wide = page.evaluate("""() => Array.from(document.querySelectorAll('main *')).filter(e =>
        e.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !e.closest('.tablewrap, .scroll')
        ).map(e => e.tagName + '.' + e.className).slice(0, 5)""")
    assert not wide, f"{kind} at {width}px: elements beyond the page edge: {wide}"
    text = page.evaluate(OVERLAPS_JS)
    assert not text["problems"], f"{kind} at {width}px: {text['problems'][:10]}"
    assert not text["small"], f"{kind} at {width}px: chart text below 11px: {text['small'][:10]}"
    crowded = page.evaluate(AXIS_GAPS_JS)
    assert not crowded, f"{kind} at {width}px: crowded axis labels: {crowded[:10]}"
    ARTIFACTS.mkdir(exist_ok=True)
    # the single file holds every item page: its full height is too tall for one screenshot
    page.screenshot(path=str(ARTIFACTS / f"report-{kind}-{width}.png"), full_page=kind != "compare-single")
    page.close()
    assert not errors, f"{kind}: {errors}"
    assert not blocked, f"{kind} tried to load external resources: {blocked}"


_LINK_RE = re.compile(r'(?:href|src)="([^"]*)"')
_ID_RE = re.compile(r'\bid="([^"]+)"')


def _check_links(page_path: Path) -> int:
    html = page_path.read_text(encoding="utf-8")
    html = re.sub(r"<script>.*?</script>", "", html, flags=re.S)  # an inlined library's own strings are no links
    ids = set(_ID_RE.findall(html))
    n = 0
    for link in _LINK_RE.findall(html):
        url = urlparse(link)
        assert not url.scheme and not url.netloc, f"{page_path.name}: non-relative link {link}"
        target = page_path.parent / unquote(url.path) if url.path else page_path
        assert target.is_file(), f"{page_path.name}: broken link {link}"
        if url.fragment and target == page_path:
            assert url.fragment in ids, f"{page_path.name}: no element #{url.fragment}"
        n += 1
    return n


def test_every_relative_link_resolves(demo: dict) -> None:
    checked = 0
    for kind, path in demo["paths"].items():
        pages = [path]
        folder = path.with_name(path.stem + "_files")
        if kind == "compare-single":
            assert not folder.exists(), "--single-file wrote a folder"
        else:
            assert len(list(folder.glob("vega-*.js"))) == 1, f"{kind}: one shared chart bundle"
            pages += sorted((folder / "items").glob("*.html"))
        for p in pages:
            checked += _check_links(p)
    assert checked > 50
    compare_items = list((demo["paths"]["compare"].with_name("compare_files") / "items").glob("*.html"))
    assert compare_items, "compare wrote no item pages"


def test_an_item_page_of_the_folder_renders(browser, demo: dict) -> None:
    items = sorted((demo["paths"]["compare"].with_name("compare_files") / "items").glob("*.html"))
    page, errors, blocked, n_charts = _open(browser, items[0], 1024)
    assert n_charts == 1 and page.locator("ol.options li").count() == 4
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    page.screenshot(path=str(ARTIFACTS / "report-compare-item-1024.png"), full_page=True)
    page.close()
    assert not errors and not blocked


def test_item_page_shows_the_item_as_in_the_warehouse(browser, demo: dict) -> None:
    sample, db = demo["sample"], demo["db"]
    con = duckdb.connect(str(db), read_only=True)
    question, options, correct, seed_title = con.execute(
        "SELECT question, options, correct_index, seed_title FROM raw.items WHERE sample_id = ?", [sample]).fetchone()
    titles = [r[0] for r in con.execute(
        "SELECT gn.title FROM raw.item_papers ip JOIN raw.graph_nodes gn USING (sample_id, paper_id) "
        "WHERE ip.sample_id = ? AND ip.role IN ('gold', 'bridge')", [sample]).fetchall()]
    chosen = dict(con.execute("SELECT run_id, predicted_index FROM fct_trajectory WHERE sample_id = ? AND run_id IN "
                              f"({','.join('?' * len(demo['runs']))})", [sample, *demo["runs"]]).fetchall())
    labels = {r[0]: r[1] for r in con.execute("SELECT run_id, model FROM model_summary").fetchall()}
    # what each transcribed run received for its delivered reads, straight from the recorded messages
    delivered = con.execute(
        """WITH m AS (SELECT run_id, attempt, content, row_number() OVER (PARTITION BY run_id, attempt ORDER BY idx) AS k
                      FROM raw.messages WHERE sample_id = ? AND role = 'tool'),
                c AS (SELECT run_id, attempt, seq, tool, status,
                             row_number() OVER (PARTITION BY run_id, attempt ORDER BY seq) AS k
                      FROM raw.tool_calls WHERE sample_id = ? AND status <> 'not_executed'),
                f AS (SELECT run_id, attempt FROM raw.trajectories WHERE sample_id = ? AND is_final)
           SELECT c.run_id, m.content FROM c JOIN f USING (run_id, attempt) JOIN m USING (run_id, attempt, k)
           WHERE c.tool = 'read_section' AND c.status = 'ok' AND c.run_id IN (?, ?)""",
        [sample, sample, sample, *demo["runs"][:2]]).fetchall()
    sections = [r[0] for r in con.execute(
        """SELECT s.text FROM raw.tool_calls c JOIN raw.trajectories t USING (run_id, sample_id, attempt)
           JOIN raw.graph_nodes gn ON gn.sample_id = c.sample_id AND gn.paper_id = c.paper_id
           JOIN raw.sections s ON s.arxiv_id = gn.arxiv_id AND s.section_index = c.resolved_section_index
           WHERE c.sample_id = ? AND c.run_id IN (?, ?) AND t.is_final AND c.tool = 'read_section' AND c.status = 'ok'
             AND s.text IS NOT NULL""",
        [sample, *demo["runs"][:2]]).fetchall()]
    con.close()
    assert delivered and sections

    page, errors, _, _ = _open(browser, demo["paths"]["item"], 1440)
    assert page.locator("p.question").inner_text().strip() == question.strip()
    items = page.locator("ol.options li")
    assert items.count() == 4
    for i, text in enumerate(options):
        li = items.nth(i)
        assert li.locator(".otext").inner_text().strip() == text.strip()
        assert ("correct" in (li.get_attribute("class") or "").split()) == (i == correct)
    for run_id, idx in chosen.items():
        if idx is not None and idx >= 0:
            assert labels[run_id] in items.nth(idx).locator(".chosen").all_inner_texts().__str__(), (run_id, idx)
    body = page.locator("main").inner_text()
    assert seed_title in body
    for t in titles:
        assert t in body, t
    received = page.evaluate("Array.from(document.querySelectorAll('pre.received-text')).map(p => p.textContent)")
    for run_id, content in delivered:
        assert content in received, run_id
    for text in sections:
        assert any(text[:200] in r for r in received)
    # the run recorded without messages says so, once above its calls (its transcript cell, beneath, is empty)
    assert page.locator("table.calls:not(.transcripts) .nomsg").count() == 1
    page.screenshot(path=str(ARTIFACTS / "report-item-content-1440.png"), full_page=True)
    page.close()
    assert not errors


def test_simulated_badge_is_visible(browser, demo: dict) -> None:
    page, _, _, _ = _open(browser, demo["paths"]["compare"], 1440)
    badge = page.locator(".badge.sim").first
    assert badge.is_visible()
    assert badge.inner_text().strip() == "SIMULATED"
    page.close()


def test_tables_sort_and_filter_in_the_page(browser, demo: dict) -> None:
    page, errors, _, _ = _open(browser, demo["paths"]["reruns"], 1024)
    page.locator("details.unstable-table summary").first.click()  # the unstable items' table, folded by default
    table = page.locator("table.sortable").first
    rows = table.locator("tbody tr")
    n = rows.count()
    assert n >= 2
    first_id = rows.nth(0).locator("td").first.inner_text()
    page.locator(".filterbox input").first.fill(first_id)
    visible = [r for r in range(n) if rows.nth(r).is_visible()]
    assert visible and all(first_id in rows.nth(r).inner_text() for r in visible)
    page.locator(".filterbox input").first.fill("")
    table.locator("thead th").first.click()
    ids = [rows.nth(r).locator("td").first.inner_text() for r in range(n)]
    assert ids == sorted(ids)
    page.close()
    assert not errors


TABLES_JS = """() => Array.from(document.querySelectorAll('main table')).map((t, i) => {
  const box = t.closest('.tablewrap, .traj.scroll');
  const rows = t.tBodies[0] ? Array.from(t.tBodies[0].rows).filter(r => !r.classList.contains('axis-row')) : [];
  const first = rows.length ? rows[0].cells[0] : null;
  const cue = box && box.previousElementSibling && box.previousElementSibling.classList.contains('scroll-cue')
    ? box.previousElementSibling : null;
  return {i, cls: t.className, rows: rows.length, over: box ? box.scrollWidth > box.clientWidth + 1 : null,
          sticky: first ? getComputedStyle(first).position === 'sticky' : true,
          cue: cue ? !cue.hidden && cue.getBoundingClientRect().height > 0 : false,
          filter: !!(t.closest('.tablewrap') || t).previousElementSibling &&
                  (t.closest('.tablewrap') || t).previousElementSibling.classList.contains('filterbox')
                  || !!(cue && cue.previousElementSibling && cue.previousElementSibling.classList.contains('filterbox')),
          head: Array.from(t.querySelectorAll('thead th')).map(h => h.textContent.trim()).join('|').slice(0, 80)};
})"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", ["compare", "leaderboard", "reruns", "item", "item6"])
def test_wide_tables_scroll_with_a_sticky_first_column(browser, demo: dict, kind: str, width: int) -> None:
    """No column is ever cut off: a table either fits its box or scrolls inside it with the first column
    in place and a visible cue; tables of more than ten rows (the turn-aligned calls aside) sort and filter."""
    page, errors, _, _ = _open(browser, demo["paths"][kind], width)
    tables = page.evaluate(TABLES_JS)
    page.close()
    assert tables and not errors
    for t in tables:
        assert t["over"] is not None, f"{kind}: table {t['head']} is in no scroll box"
        if t["over"]:
            assert t["sticky"] and t["cue"], f"{kind} at {width}px: {t['head']} scrolls without sticky column/cue"
        if t["rows"] > 10 and "calls" not in t["cls"].split():
            assert "sortable" in t["cls"].split() and t["filter"], f"{kind}: {t['head']} ({t['rows']} rows) not sortable"
    if kind == "leaderboard":  # Table 2 fits 1,024 px (grouped, abbreviated headers)
        assert not tables[0]["over"], tables[0]


#: Per model cell of the leaderboard's Table 2: its name's line boxes and whether the cell shows all of it.
MODEL_CELLS_JS = """() => Array.from(document.querySelectorAll('table.leaderboard td.model-cell')).map(td => {
  const name = td.querySelector('.model'), r = name.getBoundingClientRect(), c = td.getBoundingClientRect();
  const tops = new Set(Array.from(name.getClientRects()).map(x => Math.round(x.top)));
  return {name: name.textContent, lines: tops.size, clipped: r.left < c.left - 0.5 || r.right > c.right + 0.5,
          hidden: name.scrollWidth > name.clientWidth + 1 && getComputedStyle(name).overflow !== 'visible'};
})"""


@pytest.mark.parametrize("width", (*WIDTHS, 800))
def test_leaderboard_model_names_never_break_at_a_hyphen(browser, demo: dict, width: int) -> None:
    """Table 2's model names are one line each ("verifier-transcribed", not "verifier-" over "transcribed"), at
    the report tests' widths and a narrower one, and nothing is cut off: the name fits its cell, the page does
    not scroll sideways, and at 1,024 px and up the table still fits its box (below it scrolls, name column
    sticky, as every wide table does)."""
    page, errors, _, _ = _open(browser, demo["paths"]["leaderboard"], width)
    cells = page.evaluate(MODEL_CELLS_JS)
    page_over = page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")
    box_over = page.evaluate("""() => { const b = document.querySelector('table.leaderboard').parentElement;
        return b.scrollWidth > b.clientWidth + 1; }""")
    page.locator("table.leaderboard").screenshot(path=str(ARTIFACTS / f"report-leaderboard-table2-{width}.png"))
    page.close()
    assert any("-" in c["name"] for c in cells), cells  # the demo has hyphenated names to break
    broken = [c["name"] for c in cells if c["lines"] != 1]
    assert not broken, f"model names broken across lines at {width}px: {broken}"
    assert not [c["name"] for c in cells if c["clipped"] or c["hidden"]], cells
    assert not page_over and not errors
    if width >= 1024:
        assert not box_over, f"Table 2 no longer fits its box at {width}px"


def test_six_runs_side_by_side_break_no_word_at_1024(browser, demo: dict) -> None:
    page, errors, _, _ = _open(browser, demo["paths"]["item6"], 1024)
    assert page.locator("table.calls:not(.transcripts) th.l").count() == 6
    broken = page.evaluate("""() => {
      const out = [];
      document.querySelectorAll('table.calls .paper, table.calls th .model, table.calls .tool').forEach(el => {
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const re = /[^\\s\\-]+/g; let m;
          while ((m = re.exec(n.textContent)) !== null) {
            const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
            const tops = new Set(Array.from(r.getClientRects()).map(x => Math.round(x.top)));
            if (tops.size > 1) out.push(m[0]);
          }
        }
      });
      return out;
    }""")
    over = page.evaluate("(() => { const b = document.querySelector('.traj.scroll'); return b.scrollWidth > b.clientWidth; })()")
    box = page.locator(".traj.scroll").first
    assert "more-right" in (box.get_attribute("class") or "").split()  # the right edge is marked ...
    box.evaluate("b => { b.scrollLeft = b.scrollWidth; b.dispatchEvent(new Event('scroll')); }")
    page.wait_for_timeout(100)
    assert "more-right" not in (box.get_attribute("class") or "").split()  # ... until scrolled to the end
    page.screenshot(path=str(ARTIFACTS / "report-item6-1024.png"), full_page=False)
    page.close()
    assert not broken, f"words broken across lines: {broken[:10]}"
    assert over, "six runs at 1,024 px scroll sideways rather than squeeze their columns"
    assert not errors


def test_every_item_page_of_transcribed_runs_shows_received_text(browser, demo: dict) -> None:
    items = sorted((demo["paths"]["compare"].with_name("compare_files") / "items").glob("*.html"))
    assert items
    page = browser.new_page(viewport={"width": 1024, "height": 900})
    for path in items:
        page.goto(path.resolve().as_uri())
        sides = page.evaluate("""() => {
          const heads = Array.from(document.querySelectorAll('table.calls:not(.transcripts) thead th.l'));
          return heads.map((th, i) => Array.from(document.querySelectorAll('table.calls:not(.transcripts) tbody tr'))
            .map(tr => tr.cells[i + 1]).filter(Boolean)
            .reduce((acc, td) => ({calls: acc.calls + td.querySelectorAll('.call').length,
                                   received: acc.received + td.querySelectorAll('div.received pre.received-text').length}),
                    {calls: 0, received: 0}));
        }""")
        assert len(sides) == 2, path.name
        for s in sides:
            assert s["calls"] > 0 and s["received"] > 0, (path.name, sides)
        assert page.locator(".nomsg").count() == 0, path.name
    page.close()


def test_show_all_and_expand_all_unfold_the_received_texts(browser, demo: dict) -> None:
    page, errors, _, _ = _open(browser, demo["paths"]["item"], 1024)
    state = "() => Array.from(document.querySelectorAll('div.received')).map(b => { const p = b.querySelector('pre');" \
            " return {clipped: b.classList.contains('clipped'), open: b.classList.contains('open')," \
            " hidden: p.scrollHeight > p.clientHeight + 1}; })"
    before = page.evaluate(state)
    assert before and any(b["clipped"] for b in before), "no received text long enough to clip"
    assert all(b["hidden"] == b["clipped"] for b in before)  # a button exactly where text is cut off
    assert all(h > 0 for h in page.evaluate(
        "Array.from(document.querySelectorAll('pre.received-text')).map(p => p.clientHeight)"))
    clipped = page.locator("div.received.clipped").first
    clipped.locator("button.show-all").click()
    assert clipped.evaluate("b => b.classList.contains('open')")
    assert clipped.evaluate("b => { const p = b.querySelector('pre'); return p.scrollHeight <= p.clientHeight + 1; }")
    assert clipped.locator("button.show-all").inner_text() == "show less"
    page.locator("button.expand-all").first.click()
    after = page.evaluate(state)
    assert all(b["open"] and not b["hidden"] for b in after)
    assert page.locator("button.expand-all").first.inner_text() == "collapse all received texts"
    page.locator("button.expand-all").first.click()
    again = page.evaluate(state)
    assert [b["clipped"] for b in again] == [b["clipped"] for b in before] and not any(b["open"] for b in again)
    page.close()
    assert not errors


def test_multi_row_headers_sort_the_column_under_them(browser, demo: dict) -> None:
    """The compare page's share tables have two header rows (run, then n / share): clicking a run's n
    sorts by that run's counts."""
    page, errors, _, _ = _open(browser, demo["paths"]["compare"], 1440)
    table = page.locator("#stopping ~ .tablewrap table").first
    n_head = table.locator("thead tr").nth(1).locator("th").first  # run A's n
    col = table.evaluate("t => { const g = t.tHead.rows[0]; let c = 0; for (const th of g.cells) "
                         "{ if (th.colSpan > 1) break; c += 1; } return c; }")
    n_head.click()
    values = table.evaluate(f"t => Array.from(t.tBodies[0].rows).filter(r => !r.hidden).map(r => parseFloat(r.cells[{col}].textContent))")
    assert len(values) > 2 and values == sorted(values)
    n_head.click()
    n_head.click()  # third click: the original order, group rows back
    page.close()
    assert not errors


def test_heatmap_labels_every_nonzero_cell_in_the_papers_tool_order(browser, demo: dict) -> None:
    con = duckdb.connect(str(demo["db"]), read_only=True)
    ids = [r[0] for r in con.execute("SELECT run_id FROM model_summary WHERE model IN "
                                     "('verifier-transcribed', 'greedy-transcribed')").fetchall()]
    n_nonzero = con.execute(f"SELECT count(*) FROM tool_transitions WHERE p_next > 0 AND run_id IN (?, ?)", ids).fetchone()[0]
    small = con.execute(f"SELECT count(*) FROM tool_transitions WHERE p_next > 0 AND p_next < 0.005 AND run_id IN (?, ?)",
                        ids).fetchone()[0]
    con.close()
    page, errors, _, _ = _open(browser, demo["paths"]["compare"], 1440)
    chart = page.locator("#transitions ~ div.chart").first
    labels = chart.evaluate("c => Array.from(c.querySelectorAll('g.mark-text.role-mark text')).map(t => t.textContent)")
    y_axis = chart.evaluate("c => Array.from(c.querySelectorAll('g.role-axis')).filter(a => "
                            "(a.getAttribute('aria-label') || '').startsWith('Y-axis')).map(a => Array.from("
                            "a.querySelectorAll('g.role-axis-label text')).map(t => t.textContent))[0]")
    page.close()
    assert len(labels) == n_nonzero and labels.count("<.01") == small
    assert y_axis == ["get_paper_info", "get_references", "list_sections", "search_papers", "read_section", "think",
                      "submit_answer"]
    assert not errors


TIER_NAMES = {"Closed Frontier", "Open Frontier", "Compute-Efficient", "Untiered"}


@pytest.mark.parametrize("width", WIDTHS)
def test_names_and_number_formats_a_paper_appendix_can_take(browser, demo: dict, width: int) -> None:
    """What the visual review of the demo reports fixed: tiers by name (not their ids), Table 17's metrics by
    name with one precision per row, signed bigram effects like every other difference, and replicate axes
    without trailing zeros."""
    page, errors, _, _ = _open(browser, demo["paths"]["leaderboard"], width)
    tiers = page.evaluate("Array.from(document.querySelectorAll('#table2 ~ .tablewrap tr.axis-row td, "
                          "main table tr.axis-row td')).map(td => td.textContent.trim())")
    legend = page.evaluate("Array.from(document.querySelectorAll('div.chart svg g.role-legend-label text'))"
                           ".map(t => t.textContent)")
    page.close()
    assert tiers and set(tiers) <= TIER_NAMES, tiers
    assert TIER_NAMES & set(legend) and not [t for t in legend if "_" in t], legend

    page, errors2, _, _ = _open(browser, demo["paths"]["reruns"], width)
    t17 = page.evaluate("""() => {  // AgentHop's Table 17 section of the shared reruns page
        const h = Array.from(document.querySelectorAll('main h2')).find(h => h.textContent.startsWith('Rerun variance'));
        let t = h.nextElementSibling;
        while (t && t.tagName !== 'TABLE' && !t.querySelector('table')) t = t.nextElementSibling;
        t = t.tagName === 'TABLE' ? t : t.querySelector('table');
        return Array.from(t.tBodies[0].rows).map(r => Array.from(r.cells).map(c => c.textContent.trim())); }""")
    ticks = page.evaluate("Array.from(document.querySelectorAll('div.chart svg g.role-axis-label text'))"
                          ".map(t => t.textContent)")
    page.close()
    assert t17 and all("_" not in row[0] for row in t17), t17
    for row in t17:  # mean, std and range with the same number of decimals
        decimals = {len(c.split(".")[1]) if "." in c else 0 for c in row[2:5] if c != "n/a"}
        assert len(decimals) <= 1, row
    assert not [t for t in ticks if t.endswith(".0%")], ticks

    page, errors3, _, _ = _open(browser, demo["paths"]["compare"], width)
    effects = page.evaluate("""() => Array.from(document.querySelectorAll('#bigrams ~ .cols2.wide table')).flatMap(t =>
        Array.from(t.tBodies[0].rows).map(r => r.cells[4].textContent.trim()))""")
    page.close()
    assert effects and all(e[0] in "+-" or e == "n/a" for e in effects), effects[:10]
    assert not (errors or errors2 or errors3)


def test_leaderboard_scatter_legend_lists_tiers_in_table_order(browser, demo: dict) -> None:
    """The scatter's tier legend reads in Table 2's tier order (not alphabetically), so a reader can map
    colours to groups the way the table lists them; the paper report's Figure 5 uses the same colours."""
    page, errors, _, _ = _open(browser, demo["paths"]["leaderboard"], 1024)
    groups = page.evaluate("Array.from(document.querySelectorAll('main table tr.axis-row td'))"
                           ".map(td => td.textContent.trim())")
    legend = page.evaluate("""() => Array.from(document.querySelectorAll('div.chart svg g.role-legend'))
        .filter(g => (g.querySelector('g.role-legend-title text') || {}).textContent === 'tier')
        .flatMap(g => Array.from(g.querySelectorAll('g.role-legend-label text')).map(t => t.textContent))""")
    page.close()
    order = list(dict.fromkeys(groups))
    assert len(legend) >= 2, legend
    assert legend == [t for t in order if t in legend], (legend, order)
    assert not errors


def test_compare_heatmap_says_how_to_read_it(browser, demo: dict) -> None:
    """The transition heatmaps' caption sits between the heading and the chart and explains the rows
    (each sums to 1), the blank cells and the empty submit_answer row."""
    page, errors, _, _ = _open(browser, demo["paths"]["compare"], 1024)
    note = page.evaluate("""() => { const h = document.getElementById('transitions');
        const p = h && h.nextElementSibling; return p && p.matches('p.note') ? p.textContent : null; }""")
    page.close()
    assert note and "sums to 1" in note and "submit_answer" in note and "blank cell" in note, note
    assert not errors


def test_replicate_intervals_end_in_ticks(browser, demo: dict) -> None:
    """The per-replicate accuracy chart draws each Wilson interval as a line with a tick at both ends (as the
    bars' whiskers are), so where an interval stops is readable in print; each tick sits on an end of its line."""
    page, errors, _, _ = _open(browser, demo["paths"]["reruns"], 1024)
    found = page.evaluate("""() => { const svg = document.querySelector('div.chart svg');
        const box = e => e.getBoundingClientRect();
        const rules = Array.from(svg.querySelectorAll('g.mark-rule.role-mark > *')).map(box);
        const ticks = Array.from(svg.querySelectorAll('g.mark-rect.role-mark > *')).map(box);
        return {rules: rules.map(r => [r.left, r.right, (r.top + r.bottom) / 2]),
                ticks: ticks.map(t => [(t.left + t.right) / 2, (t.top + t.bottom) / 2])}; }""")
    page.close()
    rules, ticks = found["rules"], found["ticks"]
    assert rules and len(ticks) == 2 * len(rules), found
    for left, right, y in rules:
        ends = [x for x, ty in ticks if abs(ty - y) < 3]
        assert any(abs(x - left) < 3 for x in ends) and any(abs(x - right) < 3 for x in ends), (left, right, ends)
    assert not errors


#: Per table header cell: every word (a run of non-space characters, hyphens included) whose text spans
#: more than one line box, i.e. a header broken mid-word ("verifier-" over "transcribed").
HEADER_WORDS_JS = """() => { const out = [];
  document.querySelectorAll('main table thead th').forEach(th => {
    const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const re = /\\S+/g; let m;
      while ((m = re.exec(n.textContent)) !== null) {
        const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
        const tops = new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.top)));
        if (tops.size > 1) out.push(m[0]);
      }
    }
  });
  return out; }"""


@pytest.mark.parametrize("width", (800, 1024, 1080, 1280))
@pytest.mark.parametrize("kind", ["compare", "leaderboard", "item"])
def test_table_headers_wrap_at_spaces_only(browser, demo: dict, kind: str, width: int) -> None:
    """A header wraps between words, never inside one: the compare page's terminated-by and other share
    tables keep "verifier-transcribed" on one line above its n / share columns (at 1,024-1,100 px the
    two-column layout squeezed it to "verifier-" over "transcribed"), and the accuracy split keeps
    "recall-driven" whole at narrow widths; a table too wide for its box scrolls inside it instead."""
    page, errors, _, _ = _open(browser, demo["paths"][kind], width)
    broken = page.evaluate(HEADER_WORDS_JS)
    page_over = page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")
    if kind == "compare":
        ARTIFACTS.mkdir(exist_ok=True)
        page.locator("#evidence-contact + .cols2").screenshot(path=str(ARTIFACTS / f"report-compare-terminations-{width}.png"))
    page.close()
    assert not broken, f"{kind} at {width}px: header words broken across lines: {broken[:10]}"
    assert not page_over and not errors
