"""`agenthop-report site` and `model` on an Inspect-only warehouse: the project's toolbox logs (two
models, two epochs) as task ``toolbox``, and the same logs as a second task ``toolbox_b`` whose header
records a task version, arguments and limits (as a published task's log does). Imported with
``agenthop-ingest --inspect-log DIR --build``, the two commands an Inspect user runs.

Hand computation (inspect_fixtures.py), the same for both tasks and both epochs:
- score: alpha 1, 1, 1, 0 on s1-s4 in both epochs: 0.750 over 4 of 4 items; beta (1, 1, 0.5, 0) pooled:
  0.625. Panel median (alpha, beta) = 0.6875; alpha ranks 1 of 2.
- all tokens per sample: s1 = (100 + 20) + alpha's cached reply (10 + 5 + 120 read + 30 write) = 285
  (beta: 120 + 130 = 250); s2 = 120 + 130 = 250; s3 = 120 + 130 + 140 = 390; s4 = 3 x 1,000 = 3,000.
  alpha: 3,925 per epoch, 981.25 per trajectory; beta 3,890, 972.5; panel median 976.875.
- tool calls: s1 1, s2 1, s3 2, s4 3 = 7 per trajectory set, 1.75 per trajectory; not ok: s2's lookup
  (a tool error) and s3's first add (bad arguments) = 2 of 7 = 28.6%; add 12 calls (85.7%) and lookup 2
  over the two epochs.
- ended: 3 of 4 with an answer (75.0%), s4 at the token limit (25.0%), none in an error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from bs4 import BeautifulSoup

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

from inspect_fixtures import inspect_logs, query_rows  # noqa: E402,F401  (the session's logs)

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ALPHA, BETA = "mockllm/alpha", "mockllm/beta"
sys.path.insert(0, str(REPO / "tests"))

from site_crawl import ARTIFACTS, crawl, in_chromium  # noqa: E402


def _run(db: Path, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, AGENTHOP_DB=str(db), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    return subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True, env=env, cwd=cwd)


def second_task(src: Path, dst: Path) -> Path:
    """A JSON log of task ``toolbox`` as one of task ``toolbox_b`` (its own eval id) whose header records a
    task version, task arguments, and a message and a time limit in its eval config."""
    doc = json.loads(src.read_text(encoding="utf-8"))
    ev = doc["eval"]
    ev.update(task="toolbox_b", eval_id=ev["eval_id"] + "b", task_id=ev["task_id"] + "b", task_version=3,
              task_args={"level": 2, "hint": "none"})
    ev["config"].update(message_limit=40, time_limit=600)
    dst.write_text(json.dumps(doc), encoding="utf-8")
    return dst


@pytest.fixture(scope="module")
def warehouse(inspect_logs, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    work = tmp_path_factory.mktemp("inspect-site")
    logs = work / "logs"
    logs.mkdir()
    for p in inspect_logs.eval_logs:
        (logs / p.name).write_bytes(p.read_bytes())
    for p in inspect_logs.json_logs:
        second_task(p, logs / p.name.replace("toolbox", "toolbox_b"))
    db = work / "w.duckdb"
    proc = _run(db, "agenthop-ingest", "--db", str(db), "--inspect-log", str(logs), "--build", cwd=work)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return db


def _cells(table) -> list[list[str]]:  # type: ignore[no-untyped-def]
    return [[c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"])] for tr in table.find_all("tr")]


def test_provenance_is_kept_in_columns_of_its_own(warehouse: Path) -> None:
    rows = query_rows(warehouse, "SELECT benchmark, max_turns, message_limit, time_limit_s, working_limit_s, task_version, "
                                 "task_args_json, source_packages_json FROM raw.runs ORDER BY benchmark, run_id")
    assert len(rows) == 8
    for bench, max_turns, message_limit, time_limit, working, version, args, packages in rows:
        assert max_turns == 0 and working is None  # a message limit is not a turn cap
        assert "inspect_ai" in json.loads(packages)
        if bench == "inspect:toolbox_b":
            assert (message_limit, time_limit, version) == (40, 600.0, "3")
            assert json.loads(args) == {"hint": "none", "level": 2}
        else:
            assert (message_limit, time_limit, version, args) == (None, None, "0", None)


def test_model_page_equals_the_hand_computation(warehouse: Path, tmp_path: Path) -> None:
    out = tmp_path / "alpha.html"
    proc = _run(warehouse, "agenthop-report", "model", ALPHA, "--db", str(warehouse), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    soup = BeautifulSoup(out.read_text(encoding="utf-8"), "html.parser")
    summary = _cells(soup.find(id="summary").find_next("table"))
    assert summary[0][:10] == ["benchmark", "primary score", "score", "95% interval", "panel median", "rank",
                               "items scored", "repeats", "all tokens / traj.", "USD / traj."]
    by_bench = {r[0]: r for r in summary[1:]}
    assert set(by_bench) == {"inspect:toolbox", "inspect:toolbox_b"}
    for row in by_bench.values():
        # score 0.750; median of 0.750 and 0.625; 4 of 4 items; 2 epochs; 981.25 tokens; no price
        assert row[2] == "0.750" and row[4] == "0.688" and row[5] == "1 of 2"
        assert row[6] == "4 of 4" and row[7] == "2 epochs" and row[8] == "981" and row[9] == "n/a"
    for heading in soup.find_all("h2"):
        if not heading.get_text().startswith("inspect:"):
            continue
        measures = {r[0]: r[1:] for r in _cells(heading.find_next("table"))[1:]}
        assert measures["primary score"] == ["0.750", "0.688", "1 of 2"]
        assert measures["all tokens per trajectory"] == ["981", "977", "2 of 2"]  # 981.25 vs median 976.875
        assert measures["ended with an answer"][:2] == ["75.0%", "75.0%"]
        assert measures["ended at a limit"][:2] == ["25.0%", "25.0%"]
        assert measures["ended in an error"][:2] == ["0.0%", "0.0%"]
        assert measures["tool calls per trajectory"][:2] == ["1.75", "1.75"]
        assert measures["tool calls not ok"][:2] == ["28.6%", "28.6%"]
        tools = _cells(heading.find_next("h3").find_next("table"))[1:]
        assert tools == [["add", "12", "85.7%"], ["lookup", "2", "14.3%"]]
    footer = soup.find("footer").get_text(" ", strip=True)
    assert "task version 3" in footer and 'hint="none", level=2' in footer
    assert "message limit 40, token limit 3,000, time limit 600 s" in footer
    assert "task arguments none; limits: token limit 3,000" in footer  # toolbox: only the token limit


def test_model_page_of_an_unknown_model_is_a_user_error(warehouse: Path, tmp_path: Path) -> None:
    proc = _run(warehouse, "agenthop-report", "model", "nobody", "--db", str(warehouse), "--out", str(tmp_path / "x.html"))
    assert proc.returncode == 2 and "unknown model 'nobody'" in proc.stderr and ALPHA in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "x.html").exists()


@pytest.mark.browser
def test_site_of_an_inspect_only_warehouse_in_chromium(warehouse: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    proc = _run(warehouse, "agenthop-report", "site", "--db", str(warehouse), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out / "index.html")
    assert "site: [1/" in proc.stderr and "index" in proc.stderr.splitlines()[-1]  # progress on stderr
    found = crawl(out / "index.html")
    assert found.broken == [] and found.absolute == []
    rel = {str(p.relative_to(out.resolve())) for p in found.pages}
    assert any(r.startswith("leaderboard/") for r in rel) and sum(r.startswith("models/") for r in rel) == 2
    assert sum(r.startswith("reruns/") and "_files" not in r for r in rel) == 4  # 2 models x 2 tasks
    assert sum(r.startswith("compare/") and "_files" not in r for r in rel) == 2
    assert any("/items/" in r for r in rel)  # item pages reached from compare and reruns
    assert not any(r.startswith(("paper/", "sciexplore/")) for r in rel)  # no AgentHop or SciExplore runs
    assert len(found.scripts) == 1 and next(iter(found.scripts)).parent == (out / "assets").resolve()
    in_chromium(out, found.pages, "inspect-site")



PROVENANCE_COLUMNS = ("source_packages_json", "task_version", "task_args_json", "message_limit", "time_limit_s",
                      "working_limit_s")


def test_a_warehouse_built_before_provenance_was_kept_still_renders(warehouse: Path, tmp_path: Path) -> None:
    """Marts built by the version before: the runs' staged view lacks the provenance columns. The pages
    render as before, their footers without the imported runs' record."""
    import duckdb

    old = tmp_path / "old.duckdb"
    old.write_bytes(warehouse.read_bytes())
    con = duckdb.connect(str(old))
    cols = ", ".join(PROVENANCE_COLUMNS)
    con.execute(f"CREATE TABLE staging.runs_before AS SELECT * EXCLUDE ({cols}) FROM staging.stg_harness__runs")
    con.execute("DROP VIEW staging.stg_harness__runs")
    con.execute("ALTER TABLE staging.runs_before RENAME TO stg_harness__runs")
    con.close()
    out = tmp_path / "alpha.html"
    proc = _run(old, "agenthop-report", "model", ALPHA, "--db", str(old), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    soup = BeautifulSoup(out.read_text(encoding="utf-8"), "html.parser")
    footer = soup.find("footer").get_text(" ", strip=True)
    assert "imported" not in footer and "run ids" in footer
    assert _cells(soup.find(id="summary").find_next("table"))[1][2] == "0.750"


# -- item pages loaded on demand ------------------------------------------------------------------------

VISIBLE_JS = """() => {
  const main = document.querySelector('main');
  main.querySelectorAll('nav.toc').forEach(n => n.remove());  // "back to <page>" names the page it came from
  // the page's behaviours ran on the item (tables wrapped in their scroll boxes)
  return [document.querySelector('header.top h1').innerText, main.innerText.replace(/\\s+/g, ' ').trim(),
          main.querySelectorAll('.tablewrap').length];
}"""


def test_item_data_files_are_named_by_fnv1a_by_hand() -> None:
    from agenthop.reports.item_data import chunk_of, n_chunks_for

    assert chunk_of("a", 1 << 32) == 0xE40C292C and chunk_of("", 1 << 32) == 0x811C9DC5  # FNV-1a 32 of "a", of ""
    assert chunk_of("a", 7) == 0xE40C292C % 7 and n_chunks_for(0) == 1 and n_chunks_for(129) == 2


def test_data_files_carry_15_bits_per_character_by_hand() -> None:
    import zlib

    from agenthop.reports.item_data import UNIT_BASE, from_units, script, to_units

    assert to_units(b"") == "" and to_units(b"\x80") == chr(UNIT_BASE + 0x4000)  # 1 then 14 zeros
    assert to_units(b"\xff\xff") == chr(UNIT_BASE + 0x7FFF) + chr(UNIT_BASE + 0x4000)  # 15 ones; 1 + 14 zeros
    assert to_units(bytes(15)) == chr(UNIT_BASE) * 8 and len(to_units(bytes(16))) == 9  # 128 bits: 9 characters
    for n in range(0, 40):  # every length, every bit position of the last character
        data = bytes((37 * k + 11) % 256 for k in range(n))
        assert from_units(to_units(data), n) == data, n
        assert all(UNIT_BASE <= ord(c) < UNIT_BASE + 0x8000 for c in to_units(data))
    text = "Item q00001 · ✓✗ " * 40
    raw = script("f", text, ("t-1",)).decode("utf-16")
    assert raw.startswith('f("t-1", "') and raw.endswith(");\n")
    units, n = raw[len('f("t-1", "'):-len(");\n")].split('", ')
    assert zlib.decompress(from_units(units, int(n))).decode("utf-8") == text


def _offline(seen: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    """A route handler that lets file:// requests through (kept in seen["loaded"]) and blocks the rest."""
    def route(r) -> None:  # type: ignore[no-untyped-def]
        if r.request.url.startswith("file:"):
            seen["loaded"].append(r.request.url)
            r.continue_()
        else:
            seen["blocked"].append(r.request.url)
            r.abort()
    return route


@pytest.mark.browser
def test_item_pages_on_demand_show_what_the_inline_pages_show(warehouse: Path, tmp_path: Path) -> None:
    """The site's item viewer, offline from file:// with every other request blocked, loads each linked item's
    data file and shows the text the item page of `reruns` and `compare` alone shows."""
    from playwright.sync_api import sync_playwright
    from test_report_browser import _browser_binary

    exe = _browser_binary()
    if exe is None:
        pytest.skip("!!! NO CHROMIUM BINARY FOUND: the item viewer test is SKIPPED !!!")
    site = tmp_path / "site"
    assert _run(warehouse, "agenthop-report", "site", "--db", str(warehouse), "--out", str(site), "--quiet").returncode == 0
    alone = {"reruns": ["reruns", "--model", ALPHA], "compare": ["compare", "--models", f"{ALPHA},{BETA}"]}
    pairs = []  # (viewer url, inline item page)
    for kind, args in alone.items():
        page = tmp_path / f"{kind}.html"
        proc = _run(warehouse, "agenthop-report", *args, "--benchmark", "inspect:toolbox", "--db", str(warehouse),
                    "--out", str(page))
        assert proc.returncode == 0, proc.stderr
        inline = sorted((tmp_path / f"{kind}_files" / "items").glob("*.html"))
        in_site = next(p for p in site.glob(f"{kind}/inspect_toolbox-*/*.html") if kind == "compare" or "alpha" in p.name)
        soup = BeautifulSoup(in_site.read_text(encoding="utf-8"), "html.parser")
        links = sorted({a["href"] for a in soup.find_all("a", href=True) if "view.html#" in a["href"]})
        assert len(links) == len(inline), (links, inline)
        assert not list(in_site.parent.glob(f"{in_site.stem}_files/items/*.html"))[1:]  # the viewer alone
        for href in links:
            viewer, _, name = href.partition("#")
            pairs.append(((in_site.parent / viewer).resolve().as_uri() + "#" + name,
                          tmp_path / f"{kind}_files" / "items" / f"{name}.html"))
    assert pairs
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        try:
            for k, (url, inline) in enumerate(pairs):
                seen: dict[str, list[str]] = {"errors": [], "blocked": [], "loaded": []}
                page = b.new_page(viewport={"width": 1024, "height": 900})
                page.on("console", lambda m: seen["errors"].append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: seen["errors"].append(str(e)))

                page.route("**/*", _offline(seen))
                page.goto(url)
                page.wait_for_selector("body[data-item-ready]")
                data_files = [u for u in seen["loaded"] if "/view-data/" in u and u.endswith(".js")]
                if k < 2:
                    page.screenshot(path=str(ARTIFACTS / f"item-on-demand-{k}.png"), full_page=True)
                on_demand = page.evaluate(VISIBLE_JS)
                page.goto(inline.resolve().as_uri())
                if k < 2:
                    page.screenshot(path=str(ARTIFACTS / f"item-inline-{k}.png"), full_page=True)
                expected = page.evaluate(VISIBLE_JS)
                page.close()
                assert seen["errors"] == [] and seen["blocked"] == [], seen
                assert len(data_files) == 1, seen["loaded"]  # the item's one data file, from file://
                assert on_demand == expected, (url, inline)
                assert "Transcript" in on_demand[1] and "answer" in on_demand[1] and on_demand[2] > 0
        finally:
            b.close()


# -- a site reruns page whose long list of unstable items loads from a data file -----------------------

ROWS_JS = """() => {
  const h = Array.from(document.querySelectorAll('h3')).find(x => x.textContent.startsWith('Items that change'));
  let t = h.nextElementSibling;
  while (t && !t.querySelector('table') && t.tagName !== 'TABLE') { t = t.nextElementSibling; }
  const table = t.tagName === 'TABLE' ? t : t.querySelector('table');
  const item = a => a.getAttribute('href').includes('#') ? decodeURIComponent(a.getAttribute('href').split('#')[1])
                                                         : a.getAttribute('href').split('/').pop().replace(/\\.html$/, '');
  const box = table.closest('.tablewrap').previousElementSibling;
  return {rows: Array.from(table.tBodies[0].rows).map(r => [item(r.querySelector('a')),
                                                           ...Array.from(r.cells).map(c => c.innerText.trim())]),
          filter: box && box.classList.contains('filterbox') ? box.innerText.trim() : null};
}"""


@pytest.fixture(scope="module")
def lab_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bench's site corpus, small (2 models x 3 epochs x 400 items: about 80 unstable items per model), built."""
    sys.path.insert(0, str(REPO / "bench"))
    import site_corpus

    work = tmp_path_factory.mktemp("lab-site")
    db = work / "site.duckdb"
    site_corpus.build(db, models=2, epochs=3, items=400)
    site_corpus.dbt_build(db, work)
    return db


def test_the_bench_site_corpus_is_free_of_data_quality_issues(lab_site: Path) -> None:
    """The generated corpus is consistent (every trajectory's tokens are its turns' sums, and the rest of the
    accounting checks hold), so its site pages carry no data-quality banner the bench did not mean."""
    with duckdb.connect(str(lab_site), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM main.dq_issues").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM raw.turns").fetchone() == (2 * 3 * 400 * 2,)


@pytest.mark.browser
def test_site_reruns_list_loaded_on_demand_shows_the_inline_list(lab_site: Path, tmp_path: Path) -> None:
    """In the site, a reruns page keeps the first rows of its unstable items in the page and the rest in a
    deflated data file beside it; opened offline from file://, its table holds the same rows (items, their
    pattern and scores, in the same order) as the `reruns` page alone, which keeps every row inline; the
    table filters all of them; without its data file the page says where the other rows are."""
    import zlib

    from playwright.sync_api import sync_playwright
    from test_report_browser import _browser_binary

    from agenthop.reports.deferred_rows import INLINE_ROWS
    from agenthop.reports.item_data import from_units

    model = "lab/model-00"
    site, alone = tmp_path / "site", tmp_path / "reruns.html"
    assert _run(lab_site, "agenthop-report", "site", "--db", str(lab_site), "--out", str(site), "--quiet").returncode == 0
    proc = _run(lab_site, "agenthop-report", "reruns", "--model", model, "--db", str(lab_site), "--out", str(alone))
    assert proc.returncode == 0, proc.stderr
    page = next(site.glob("reruns/*/lab_model-00*.html"))
    rows_file = page.with_name(page.stem + "_files") / "rows" / "unstable-1.js"
    text = rows_file.read_bytes().decode("utf-16")
    assert text.startswith('agenthopRows("unstable-1", "')
    units, n = text[len('agenthopRows("unstable-1", "'):-len(");\n")].split('", ')
    moved = zlib.decompress(from_units(units, int(n))).decode("utf-8")
    n_alone = len(BeautifulSoup(alone.read_text(encoding="utf-8"), "html.parser")
                  .find("h3", string=lambda s: s and s.startswith("Items that change")).find_next("table").tbody.find_all("tr"))
    in_page = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    table = in_page.find("h3", string=lambda s: s and s.startswith("Items that change")).find_next("table")
    assert n_alone > INLINE_ROWS + 10  # the corpus gives a list longer than what the page keeps
    assert len(table.tbody.find_all("tr")) == INLINE_ROWS and moved.count("<tr>") == n_alone - INLINE_ROWS
    assert f"The first {INLINE_ROWS} of the {n_alone} items are in this page" in in_page.get_text(" ", strip=True)

    exe = _browser_binary()
    if exe is None:
        pytest.skip("!!! NO CHROMIUM BINARY FOUND: the deferred rows test is SKIPPED !!!")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        try:
            shown = {}
            for kind, url in (("site", page.resolve().as_uri()), ("alone", alone.resolve().as_uri())):
                seen: dict[str, list[str]] = {"errors": [], "blocked": [], "loaded": []}
                tab = b.new_page(viewport={"width": 1280, "height": 900})
                tab.on("console", lambda m, seen=seen: seen["errors"].append(m.text) if m.type == "error" else None)
                tab.on("pageerror", lambda e, seen=seen: seen["errors"].append(str(e)))
                tab.route("**/*", _offline(seen))
                tab.goto(url)
                if kind == "site":
                    tab.wait_for_selector("body[data-rows-ready]", state="attached")
                shown[kind] = tab.evaluate(ROWS_JS)
                tab.locator("h3", has_text="Items that change").scroll_into_view_if_needed()
                tab.screenshot(path=str(ARTIFACTS / f"site-reruns-rows-{kind}.png"))
                tab.close()
                assert seen["errors"] == [] and seen["blocked"] == [], seen
                assert (rows_file.resolve().as_uri() in seen["loaded"]) == (kind == "site")
            assert len(shown["site"]["rows"]) == n_alone and shown["site"]["rows"] == shown["alone"]["rows"]
            assert shown["site"]["filter"] == f"{n_alone} of {n_alone} rows · click a column header to sort"

            rows_file.unlink()  # the page without its data file: its first rows, and where the others are
            tab = b.new_page(viewport={"width": 1280, "height": 900})
            tab.route("**/*", _offline({"errors": [], "blocked": [], "loaded": []}))
            tab.goto(page.resolve().as_uri())
            tab.wait_for_selector("body[data-rows-ready]", state="attached")
            assert len(tab.evaluate(ROWS_JS)["rows"]) == INLINE_ROWS
            assert "did not load (file not found)" in tab.inner_text("main") and "rows/unstable-1.js" in tab.inner_text("main")
            tab.close()
        finally:
            b.close()


# -- a page's items are loaded, formatted and written a batch at a time -------------------------------


def _site_files(root: Path) -> dict[str, bytes]:
    """Every file of a site; a page's generation time (to the second) left out."""
    import re

    stamp = re.compile(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
    return {str(p.relative_to(root)): stamp.sub(b"", p.read_bytes()) if p.suffix == ".html" else p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_item_data_in_batches_is_the_same_site(lab_site: Path, tmp_path: Path, monkeypatch) -> None:
    """Written a chunk (and a static page) per batch, the site is byte for byte the one written with every item of
    a page in one batch; every item a page links is in its viewer's data files."""
    import re
    import zlib

    from agenthop.reports import item_data
    from agenthop.reports.site_build import build_site
    from agenthop.reports.warehouse import Warehouse

    monkeypatch.setattr(item_data, "ITEMS_PER_CHUNK", 8)  # a page's items in many data files
    sites = {}
    # every item at once; a chunk at a time (no text budget); 2 items first, then as many as the text measured lets
    for batch, chars in ((1_000_000, item_data.BATCH_CHARS), (1, 0), (2, item_data.BATCH_CHARS)):
        monkeypatch.setattr(item_data, "BATCH_ITEMS", batch)
        monkeypatch.setattr(item_data, "BATCH_CHARS", chars)
        with Warehouse(lab_site) as wh:
            build_site(wh, tmp_path / f"site-{batch}", workers=1)  # one process: its sizers are on `wh`
            if batch == 2:  # the measured text let the batches grow
                assert all(s.limit > 2 for s in wh.memo["item_batches"].values()), wh.memo["item_batches"]
        sites[batch] = _site_files(tmp_path / f"site-{batch}")
    assert sites[1] == sites[1_000_000] and sites[2] == sites[1_000_000]
    site = tmp_path / "site-1"
    pages = [p for p in site.glob("*/*/*.html")]
    assert any(p.parent.parent.name == "reruns" for p in pages) and any(p.parent.parent.name == "compare" for p in pages)
    def unpack(f: Path) -> str:  # a data file's text (reports/item_data.py: script)
        units, n = re.search(r'"([^"]*)", (\d+)\);\n$', f.read_bytes().decode("utf-16")).groups()  # type: ignore[union-attr]
        return zlib.decompress(item_data.from_units(units, int(n))).decode("utf-8")

    for page in pages:
        files = sorted(page.parent.glob(f"{page.stem}_files/items/view-data/*.js"))
        held = {name for f in files for name in json.loads(unpack(f))["items"]}
        html = page.read_text(encoding="utf-8") + "".join(map(unpack, page.parent.glob(f"{page.stem}_files/rows/*.js")))
        links = {a["href"].split("#", 1)[1] for a in BeautifulSoup(html, "html.parser").find_all("a", href=True)
                 if "view.html#" in a["href"]}
        assert links and held == links, page  # the rows beyond the first few (in the rows file) included
        assert len(files) > 1, page  # several data files, so several batches


def test_item_queries_per_run_give_the_rows_of_one_in_list(lab_site: Path) -> None:
    """The item queries (one SELECT per run, joined) return the rows, in the order, of one query filtering on the
    runs and items with IN lists; a run named twice counts once."""
    from agenthop.reports.core import queries
    from agenthop.reports.warehouse import Warehouse

    with Warehouse(lab_site) as wh:
        runs = [r for (r,) in wh.con.execute("SELECT run_id FROM raw.runs ORDER BY run_id DESC LIMIT 3").fetchall()]
        sids = [s for (s,) in wh.con.execute("SELECT DISTINCT sample_id FROM raw.trajectories ORDER BY hash(sample_id) "
                                              "LIMIT 40").fetchall()]
        inn = lambda xs: "(" + ", ".join("?" * len(xs)) + ")"  # noqa: E731
        where = f"run_id IN {inn(runs)} AND sample_id IN {inn(sids)}"
        expected = {
            queries.item_messages: f"SELECT run_id, sample_id, idx, role, name, tool_call_id, content FROM raw.messages "
                                   f"WHERE {where} ORDER BY sample_id, run_id, idx",
            queries.item_calls: f"SELECT run_id, sample_id, turn, seq, tool, args_json, status, error_type, output_chars "
                                f"FROM raw.tool_calls WHERE {where} ORDER BY sample_id, run_id, seq",
            queries.item_scores: f"SELECT run_id, sample_id, scorer, key AS score_key, value_text, value_num FROM "
                                 f"raw.scores WHERE {where} ORDER BY sample_id, scorer, score_key, run_id",
            queries.item_trajectories: f"SELECT run_id, sample_id FROM raw.trajectories WHERE {where} AND is_final "
                                       "ORDER BY sample_id, run_id",
        }
        for query, sql in expected.items():
            want = wh.rows(sql, [*runs, *sids])
            got = query(wh, [*runs, runs[0]], sids)
            assert want and [{k: r[k] for k in want[0]} for r in got] == want, query.__name__
        assert queries.item_messages(wh, runs, []) == [] and queries.item_calls(wh, [], sids) == []


def test_site_caps_duckdb_memory_while_it_builds(lab_site: Path, tmp_path: Path, monkeypatch) -> None:
    """Every page of the site is rendered with the connection's memory_limit at MEMORY_LIMIT; after the build the
    connection has its limit of before again."""
    from agenthop.reports import site_build
    from agenthop.reports.warehouse import Warehouse

    seen = []
    render = site_build.SiteBuilder._render

    def spy(self, entry):  # type: ignore[no-untyped-def]
        seen.append(self.wh.con.execute("SELECT current_setting('memory_limit')").fetchone()[0])
        return render(self, entry)

    monkeypatch.setattr(site_build.SiteBuilder, "_render", spy)
    monkeypatch.setattr(site_build, "MEMORY_LIMIT", "300MB")
    with Warehouse(lab_site) as wh:
        wh.con.execute("SET memory_limit = '2GiB'")
        site_build.build_site(wh, tmp_path / "site", workers=1)
        assert wh.con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "2.0 GiB"
    assert seen and set(seen) == {"286.1 MiB"}  # 300 MB


def test_site_workers_cap_duckdb_memory_and_give_the_connection_back(lab_site: Path, tmp_path: Path,
                                                                    monkeypatch) -> None:
    """Each worker process renders its pages on its own connection, capped at its share of MEMORY_LIMIT_MB (the
    workers together hold what one process holds) and without DuckDB's progress bars (two workers' would cut into
    the page lines); the builder's connection, closed while they work, is open again after the build with its limit
    of before."""
    from agenthop.reports import site_build
    from agenthop.reports.warehouse import Warehouse

    seen = tmp_path / "seen.txt"
    render = site_build.SiteBuilder._render

    def spy(self, entry):  # type: ignore[no-untyped-def]  # in a worker: told through a file
        with seen.open("a") as fh:
            limit, bar = self.wh.con.execute("SELECT current_setting('memory_limit'), "
                                             "current_setting('enable_progress_bar')").fetchone()
            fh.write(f"{os.getpid()} {limit} {bar}\n")
        return render(self, entry)

    monkeypatch.setattr(site_build.SiteBuilder, "_render", spy)
    monkeypatch.setattr(site_build, "MEMORY_LIMIT_MB", 300)
    with Warehouse(lab_site) as wh:
        wh.con.execute("SET memory_limit = '2GiB'")
        site_build.build_site(wh, tmp_path / "site", workers=2)
        assert wh.con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "2.0 GiB"
        assert wh.rows("SELECT count(*) AS n FROM main.run_summary")[0]["n"] == 6
    lines = [ln.split() for ln in seen.read_text().splitlines()]
    assert lines and {(limit, bar) for _, limit, _, bar in lines} == {("143.0", "False")}  # no DuckDB progress bars
    assert os.getpid() not in {int(p) for p, *_ in lines}
    assert len({p for p, *_ in lines}) == 2  # rendered by the two workers, neither the builder


def test_run_batch_answers_as_each_pages_own_query(lab_site: Path) -> None:
    """Within queries.batched, outcomes and score_profile read every run of the batch in one query (per metric shown)
    and give each page the rows its own query gives; a run the batch does not hold gets its own query."""
    from agenthop.reports.core import metrics, queries
    from agenthop.reports.warehouse import Warehouse

    with Warehouse(lab_site) as wh:
        runs = dict(wh.con.execute("SELECT run_id, benchmark FROM main.run_summary ORDER BY run_id").fetchall())
        ids = list(runs)
        pages = [ids[:3], ids[3:], [ids[-1], ids[0]], ids]
        metric = metrics.resolve(wh, next(iter(runs.values())), None)
        assert metric is not None and len(ids) == 6
        for scope in (None, metric):
            with metrics.scoped(wh, scope):
                alone = [(queries.outcomes(wh, p), queries.score_profile(wh, p)) for p in pages]
                seen: list[str] = []
                execute = wh.con.execute

                class Spy:  # counts the queries the batch sends (DuckDB's connection cannot be patched)
                    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
                        return getattr(wh.con_, name)

                    def execute(self, sql: str, *a):  # type: ignore[no-untyped-def]
                        seen.append(sql)
                        return execute(sql, *a)

                wh.con_, wh.con = wh.con, Spy()  # type: ignore[attr-defined]
                try:
                    with queries.batched(wh, runs):
                        batched = [(queries.outcomes(wh, p), queries.score_profile(wh, p)) for p in pages]
                        assert len(seen) == 2  # one query per aggregate, for every page
                        queries.outcomes(wh, [ids[0], "no-such-run"])
                        assert len(seen) == 3  # not held: its own query
                finally:
                    wh.con = wh.con_  # type: ignore[attr-defined]
                assert batched == alone
                assert all(o[1]["n_scored"] > 0 and set(o[0]) == set(p) for o, p in zip(batched, pages))


def test_item_transcripts_and_calls_are_the_same_under_a_metric(lab_site: Path) -> None:
    """An item's messages and calls join the final attempt of the trajectories themselves: the same rows while a page
    shows a metric (whose view joins every run's metric values) as without."""
    from agenthop.reports.core import metrics, queries
    from agenthop.reports.warehouse import Warehouse

    with Warehouse(lab_site) as wh:
        runs = [r for (r,) in wh.con.execute("SELECT run_id FROM raw.runs ORDER BY run_id LIMIT 3").fetchall()]
        sids = [s for (s,) in wh.con.execute("SELECT DISTINCT sample_id FROM raw.trajectories ORDER BY sample_id "
                                              "LIMIT 30").fetchall()]
        plain = (queries.item_messages(wh, runs, sids), queries.item_calls(wh, runs, sids))
        bench = wh.con.execute("SELECT benchmark FROM main.run_summary LIMIT 1").fetchone()[0]
        with metrics.scoped(wh, metrics.resolve(wh, bench, None)):
            assert "metric" in str(getattr(wh, "_trajectories", ""))
            assert (queries.item_messages(wh, runs, sids), queries.item_calls(wh, runs, sids)) == plain
        assert plain[0] and plain[1]


def test_site_with_the_run_batch_is_the_same_site(lab_site: Path, tmp_path: Path, monkeypatch) -> None:
    """The site whose pages read their per-run aggregates from one batch is byte for byte the site whose pages each
    send their own queries."""
    from contextlib import nullcontext

    from agenthop.reports.core import queries
    from agenthop.reports.site_build import build_site
    from agenthop.reports.warehouse import Warehouse

    with Warehouse(lab_site) as wh:
        build_site(wh, tmp_path / "batched")
    monkeypatch.setattr(queries, "batched", lambda wh, runs: nullcontext())
    with Warehouse(lab_site) as wh:
        build_site(wh, tmp_path / "alone")
    assert _site_files(tmp_path / "batched") == _site_files(tmp_path / "alone")


def test_data_files_are_deflated_at_the_sites_level() -> None:
    """A data file carries its text deflated at item_data.LEVEL (4: faster to write than 9, a few % larger), which
    inflates to the text whatever the level."""
    import re
    import zlib

    from agenthop.reports import item_data

    text = json.dumps({"strings": [f"message {i} " * 20 for i in range(200)]})
    units, n = re.search(r'"([^"]*)", (\d+)\);\n$', item_data.script("f", text).decode("utf-16")).groups()  # type: ignore[union-attr]
    packed = item_data.from_units(units, int(n))
    assert item_data.LEVEL == 4 and packed == zlib.compress(text.encode("utf-8"), 4)
    assert zlib.decompress(packed).decode("utf-8") == text


# -- pages rendered in worker processes (reports/site_workers.py) ------------------------------------------


def test_site_in_workers_is_the_same_site_with_the_same_progress(lab_site: Path, tmp_path: Path) -> None:
    """Rendered by two or three worker processes, the site is byte for byte the one one process writes, and the
    progress lines are the same, in the same order."""
    from agenthop.reports.site_build import build_site
    from agenthop.reports.warehouse import Warehouse

    sites, said = {}, {}
    for workers in (1, 2, 3):
        lines: list[str] = []
        with Warehouse(lab_site) as wh:
            build_site(wh, tmp_path / f"site-{workers}", max_pairs=1, progress=lines.append, workers=workers)
        sites[workers], said[workers] = _site_files(tmp_path / f"site-{workers}"), lines
    assert sites[2] == sites[1] and sites[3] == sites[1]
    assert said[2] == said[1] and said[3] == said[1]
    kinds = [ln.split()[1] for ln in said[1]]
    assert {"leaderboard:", "reruns:", "compare:", "model:"} <= set(kinds) and kinds[-1] == "index"
    assert "reruns/" in (tmp_path / "site-2" / "models").joinpath(  # a model page links the reruns page written
        sorted(p.name for p in (tmp_path / "site-2" / "models").glob("*.html"))[0]).read_text(encoding="utf-8")


@pytest.mark.parametrize("how", ["raises", "dies"])
def test_a_worker_failing_stops_the_site_with_its_page_named_and_nothing_written(lab_site: Path, tmp_path: Path,
                                                                                monkeypatch, how: str) -> None:
    """A page failing in a worker (an exception a page cannot list, or the process killed) stops the build with one
    error line naming the page, no traceback; the site written before stays as it was and no staging folder is
    left."""
    from click.testing import CliRunner

    from agenthop.reports.cli import main
    from agenthop.reports.core import pages

    out = tmp_path / "site"
    runner = CliRunner()
    res = runner.invoke(main, ["site", "--db", str(lab_site), "--out", str(out), "--quiet", "--max-pairs", "0",
                               "--workers", "1"])
    assert res.exit_code == 0, res.output
    before = _site_files(out)
    reruns = pages.reruns

    def failing(wh, site, model, *a, **k):  # type: ignore[no-untyped-def]
        if model.endswith("01"):
            if how == "dies":
                os._exit(9)
            raise RuntimeError("the disk said no")
        return reruns(wh, site, model, *a, **k)

    monkeypatch.setattr(pages, "reruns", failing)
    res = runner.invoke(main, ["site", "--db", str(lab_site), "--out", str(out), "--max-pairs", "0", "--workers", "2"])
    assert res.exit_code == 2, res.output
    error = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(error) == 1 and "reruns page reruns/" in error[0] and "nothing was written" in error[0], res.output
    assert ("RuntimeError: the disk said no" in error[0]) if how == "raises" else ("worker process ended" in error[0])
    assert "Traceback" not in res.output
    assert _site_files(out) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_site_worker_count_from_option_or_environment(monkeypatch) -> None:
    from agenthop.harness.errors import AgentHopError
    from agenthop.reports import site_workers

    monkeypatch.setattr(site_workers, "available_cpus", lambda: 16)
    assert site_workers.default_workers({}) == site_workers.MAX_DEFAULT == 4
    monkeypatch.setattr(site_workers, "available_cpus", lambda: 1)
    assert site_workers.default_workers({}) == 1
    assert site_workers.default_workers({site_workers.ENV: " 3 "}) == 3
    assert site_workers.worker_memory_limit(512, 2) == "256MB" and site_workers.worker_memory_limit(512, 1) == "512MB"
    assert site_workers.worker_memory_limit(512, 8) == f"{site_workers.MIN_WORKER_MB}MB"
    for bad in ("0", "two", "-1"):
        with pytest.raises(AgentHopError, match="AGENTHOP_SITE_WORKERS"):
            site_workers.default_workers({site_workers.ENV: bad})
