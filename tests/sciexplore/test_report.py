"""`agenthop-report sciexplore` on a warehouse of the synthetic release and the simulated systems."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from statistics import mean

import duckdb
import pytest
from click.testing import CliRunner
from conftest import REPO
from sx_fixtures import file_sha, sciexplore_report, simulated_release, write_jsonl
from test_report_browser import OVERLAPS_JS, _open, browser  # noqa: F401 (fixture)

from agenthop.ingest.cli import main as ingest_main
from agenthop.reports import multiplicity
from agenthop.reports.cli import main as report_main

ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture(scope="module")
def panel(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("sxreport")
    rel, _, resp = simulated_release(work)
    db = work / "w.duckdb"
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--benchmark", str(rel), "--responses", str(resp)])
    assert r.exit_code == 0, r.output
    # a second judge on the first system's T1/T2 answers: flips every verdict of t1_001
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT r.model, r.paradigm, r.replicate, j.task_id, j.verdict FROM raw.judgments j "
                           "JOIN raw.sciexplore_runs r USING (run_id) WHERE j.unit = 'answer' AND r.model = "
                           "'quill-search' AND r.replicate = 0 ORDER BY j.task_id").fetchall()
    judg = write_jsonl(work / "j.jsonl", [
        {"model": m, "paradigm": p, "replicate": rep, "task_id": t, "unit": "answer",
         "verdict": ("incorrect" if v == "correct" else "correct") if t == "t1_001" else v,
         "judge": "human", "judge_version": "1", "rationale": None} for m, p, rep, t, v in rows])
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--judgments", str(judg)])
    assert r.exit_code == 0, r.output
    out = sciexplore_report(db, work)
    return {"db": db, "out": out, "work": work, "release": rel}


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_tables_are_the_marts_means(panel: dict) -> None:
    tables = panel["out"] / "tables"
    main = {r["model"]: r for r in _csv(tables / "table03_main.csv")}
    reps = _csv(tables / "table03_main_replicates.csv")
    assert len(main) == 6 and len(reps) == 24
    with duckdb.connect(str(panel["db"]), read_only=True) as con:
        summary = con.execute("SELECT model, overall, t3_fcite FROM main.sciexplore_summary "
                              "WHERE judge = 'normalized-match'").fetchall()
    for model in main:
        vals = [o for m, o, _ in summary if m == model]
        assert len(vals) == 4
        assert float(main[model]["overall"]) == pytest.approx(mean(vals), abs=1e-12)
    # grouped by paradigm in the paper's order, foundation first
    assert [r["paradigm"] for r in _csv(tables / "table03_main.csv")][:2] == ["Foundation LLMs"] * 2
    tex = (tables / "table03_main.tex").read_text()
    assert "\\toprule" in tex and "\\multicolumn{7}{l}{\\textit{Deep Research Agents}}" in tex
    assert "T4 Item & T4 Row & Overall" in tex
    variance = _csv(tables / "table07_variance.csv")
    assert variance[-1]["model"] == "Mean"
    assert float(variance[-1]["t1"]) == pytest.approx(mean(float(r["t1"]) for r in variance[:-1]))
    # the page and the LaTeX print the Mean under a rule, apart from the systems (never sorted with them)
    t7_tex = (tables / "table07_variance.tex").read_text().splitlines()
    assert t7_tex[[i for i, line in enumerate(t7_tex) if line.startswith("Mean")][0] - 1] == "\\midrule"
    t7_html = (panel["out"] / "index.html").read_text().split('id="table7"')[1].split("</table>")[0]
    body, foot = t7_html.split("<tbody>")[1].split("</tbody>")[0], t7_html.split("<tfoot>")[1]
    assert ">Mean<" not in body and "<b>Mean</b>" in foot
    hops = _csv(tables / "table06_hops.csv")
    assert {"hop2", "hop6"} <= set(hops[0])
    spearman = {r["type"]: r for r in _csv(tables / "figure03_spearman.csv")}
    # one point per system (its mean over replicates); six systems: the exact permutation p, no interval
    assert int(spearman["T1"]["n_points"]) == 6 and spearman["T1"]["rho"]
    assert spearman["T1"]["p"] and not spearman["T1"]["lo"] and not spearman["T1"]["hi"]
    assert float(spearman["T1"]["p"]) * 720 == pytest.approx(round(float(spearman["T1"]["p"]) * 720))  # k / 6!
    agreement = _csv(tables / "judge_agreement.csv")
    assert [(r["judge_a"], r["judge_b"], r["unit"], r["n_units"], r["n_agree"]) for r in agreement] == \
        [("human", "normalized-match", "answer", "71", "70")]
    [dis] = _csv(tables / "judge_disagreements.csv")
    assert dis["task_id"] == "t1_001"
    paired = _csv(tables / "paired_tests.csv")
    assert len(paired) == 5  # neighbours of six systems
    p = [float(r["p"]) for r in paired]  # Holm over the five: step-down multipliers 5, 4, 3, 2, 1, running max
    assert [float(r["p_holm"]) for r in paired] == pytest.approx(multiplicity.holm(p))
    assert "Holm (family-wise error) over the 5 tests" in (panel["out"] / "index.html").read_text()
    assert len(list((panel["out"] / "index_files" / "items").glob("*.html"))) == 103
    html = (panel["out"] / "index.html").read_text()
    assert "All 6 systems are simulated (" in html  # the simulated systems' responses say so
    # every task page marks each simulated system's heading, as the other reports mark simulated runs
    item = (panel["out"] / "index_files" / "items" / "t1_001.html").read_text()
    headings = re.findall(r"<h2>(.*?)</h2>", item, re.S)
    systems = [h for h in headings if "<code class=\"pid\">" in h]
    assert systems and all('class="badge sim"' in h for h in systems), systems


def _verdict_tables(page: Path) -> list[tuple[list[str], list[list[str]], str]]:
    """Per system on a task page: the Verdicts table's headers, its rows' cell texts and the note above it."""
    from bs4 import BeautifulSoup

    out = []
    for sec in BeautifulSoup(page.read_text(), "html.parser").select("section.traj"):
        table = sec.select_one("table.verdicts")
        if table is None:
            continue
        before = table.find_parent("div").find_previous_sibling()
        note = before.get_text(" ", strip=True) if before is not None and before.name == "p" else ""
        out.append(([th.get_text(strip=True) for th in table.select("thead th")],
                    [[td.get_text(" ", strip=True) for td in tr.select("td")] for tr in table.select("tbody tr")],
                    note))
    return out


def test_task_pages_name_the_verdict_keys_and_leave_no_blank_cell(panel: dict) -> None:
    """A T1/T2 verdict is on the whole answer: its table once had a blank Slot / row and Reference / column
    cell on every row. Now a T1/T2 table has no key columns and a line above it saying so; T3 and T4 name
    their keys (Slot and Reference no., Row and Column), and a T4 table says how many ground-truth rows the
    answer matched (only those get verdicts); no verdict table has an empty cell, and a judge without a
    rationale (the fixture's human) reads "none given"."""
    items = panel["out"] / "index_files" / "items"
    expected = {"t1": ["Unit", "Verdict", "Rationale"], "t2": ["Unit", "Verdict", "Rationale"],
                "t3": ["Unit", "Slot", "Reference no.", "Verdict", "Rationale"],
                "t4": ["Unit", "Row", "Column", "Verdict", "Rationale"]}
    for kind, heads in expected.items():
        page = sorted(items.glob(f"{kind}_*.html"))[0]
        tables = _verdict_tables(page)
        assert tables, page.name
        for got, rows, note in tables:
            assert got == heads, (page.name, got)
            assert all(len(r) == len(heads) and all(r) for r in rows), (page.name, rows)
            assert ("whole answer" in note) == (kind in ("t1", "t2")), (page.name, note)
            if kind == "t4":  # which ground-truth rows have verdicts at all: those the answer matched
                matched = len({r[1] for r in rows})
                assert re.search(rf"matched by primary key \(\w+\): {matched} of the \d+ ground-truth rows? matched",
                                 note), (page.name, note)
    rationales = [r[-1] for _, rows, _ in _verdict_tables(items / "t1_001.html") for r in rows]
    assert "none given" in rationales  # the human judge's verdict on quill-search
    # the task list's "–" (hops of a T3 task, a T1 task's mean score) is said to mean "does not apply"
    tasks = (panel["out"] / "index.html").read_text().split('id="tasks"')[1].split("</table>")[0]
    assert "“–” where a column does not apply to the task's type" in re.sub(r"\s+", " ", tasks) and ">–<" in tasks


def test_t4_tables_align_their_number_columns_right(panel: dict) -> None:
    """A T4 column of numbers (IC50 (nM)) was printed left-aligned like text in the ground truth and in every
    answer; a column whose every cell reads as a number now gets the report's number cells, and only such
    a column does."""
    from bs4 import BeautifulSoup

    from agenthop.reports.sciexplore.page import numeric_columns

    rows = [{"k": "a", "v": "1.5", "w": "2"}, {"k": "b", "v": "1,200", "w": "n/a"}, {"k": "c", "v": "", "w": "3"}]
    assert numeric_columns(["k", "v", "w"], rows) == ["v"] and numeric_columns(["x"], rows) == []
    n_num = 0
    for page in sorted((panel["out"] / "index_files" / "items").glob("t4_*.html")):
        for table in BeautifulSoup(page.read_text(), "html.parser").select("div.scroll > table:not(.verdicts)"):
            for td in table.select("td.num"):
                float(td.get_text(strip=True).replace(",", ""))  # a number cell holds a number
                n_num += 1
    assert n_num > 0, "no T4 table of the panel has a number column"


def test_verdict_table_spans_an_answer_verdict_beside_keyed_ones() -> None:
    """Should a task ever carry an answer-level verdict beside citation verdicts, that row gets one cell over
    both key columns saying it is on the whole answer (never two blank cells)."""
    from agenthop.reports.sciexplore.page import verdict_table

    base = {"slot": None, "ref_index": None, "row_key": None, "column": None, "verdict": "correct",
            "judge": "j", "rationale": None}
    vt = verdict_table([{**base, "unit": "citation", "slot": "CITE_1", "ref_index": 0}, {**base, "unit": "answer"}])
    assert [h["text"] for h in vt["heads"]] == ["Slot", "Reference no."] and not vt["whole_answer"]
    assert [[(c["text"], c["span"]) for c in r["key_cells"]] for r in vt["rows"]] == [
        [("CITE_1", 1), (0, 1)], [("the whole answer", 2)]]
    only = verdict_table([{**base, "unit": "answer"}])
    assert only["heads"] == [] and only["whole_answer"] and only["rows"][0]["key_cells"] == []


def test_table7_counts_its_systems_and_the_mean_apart(panel: dict) -> None:
    """The CSV keeps the Mean as its last row, the page's table puts it in a footer: the count beside the
    CSV link once said "N + 1 rows" over a table whose filter said "N of N rows". It now says "N systems and
    the Mean row" and that the CSV has all N + 1."""
    n_csv = len(_csv(panel["out"] / "tables" / "table07_variance.csv"))
    section = (panel["out"] / "index.html").read_text().split('id="table7"')[1].split("</section>")[0]
    assert f"{n_csv - 1} systems and the Mean row; the CSV has all {n_csv} rows, the Mean last" in section
    assert f"{n_csv} rows ·" not in section
    t3 = (panel["out"] / "index.html").read_text().split('id="table3"')[1].split("</section>")[0]
    assert re.search(r"<p class=\"note\">\d+ rows · <a href=\"tables/table03_main.csv\"", t3)  # no footer: as before


def test_other_judge_and_refusals(panel: dict, tmp_path: Path) -> None:
    out = tmp_path / "human"
    r = CliRunner().invoke(report_main, ["sciexplore", "--db", str(panel["db"]), "--out", str(out),
                                         "--judge", "human"])
    assert r.exit_code == 0, r.output
    [row] = _csv(out / "tables" / "table03_main.csv")  # only the system the human judged
    assert row["model"] == "quill-search"
    r = CliRunner().invoke(report_main, ["sciexplore", "--db", str(panel["db"]), "--out", str(out), "--judge", "x"])
    assert r.exit_code == 2 and "no verdicts of that judge" in r.output
    r = CliRunner().invoke(report_main, ["sciexplore", "--db", str(panel["db"]), "--out", str(out),
                                         "--pair", "quill-search,nobody"])
    assert r.exit_code == 2 and "not loaded" in r.output


def test_stale_marts_are_refused(panel: dict, tmp_path: Path) -> None:
    db = tmp_path / "copy.duckdb"
    db.write_bytes(panel["db"].read_bytes())
    line = {"model": "late", "paradigm": "search", "replicate": 0, "task_id": "t1_001", "status": "answered",
            "answer": "x", "trace": []}
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--responses", str(write_jsonl(tmp_path / "r.jsonl", [line]))])
    assert r.exit_code == 0, r.output
    sha = file_sha(db)
    r = CliRunner().invoke(report_main, ["sciexplore", "--db", str(db), "--out", str(tmp_path / "rep")])
    assert r.exit_code == 2 and "marts are stale" in r.output
    assert file_sha(db) == sha and not (tmp_path / "rep").exists()


@pytest.mark.browser
@pytest.mark.parametrize("width", (1024, 1440))
def test_report_renders_at_both_widths(browser, panel: dict, width: int) -> None:  # noqa: F811
    page, errors, blocked, n_charts = _open(browser, panel["out"] / "index.html", width)
    assert n_charts == 1
    scroll = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert scroll[0] <= scroll[1], f"scrolls sideways at {width}px: {scroll}"
    wide = page.evaluate("""() => Array.from(document.querySelectorAll('main table')).filter(t =>
        t.getBoundingClientRect().right > document.documentElement.clientWidth + 1).length""")
    assert wide == 0, f"{wide} tables wider than the page at {width}px"
    text = page.evaluate(OVERLAPS_JS)
    assert not text["problems"] and not text["small"], text
    for key in ("table3", "table4", "table6", "table7"):
        assert page.locator(f"#{key} table tbody tr").count() >= 6
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"sciexplore-{width}.png"), full_page=True)
    page.close()
    assert not errors and not blocked, (errors, blocked)
    item = sorted((panel["out"] / "index_files" / "items").glob("t4_*.html"))[0]
    page, errors, blocked, _ = _open(browser, item, width)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert page.locator("section.traj").count() == 6
    page.screenshot(path=str(ARTIFACTS / f"sciexplore-item-{width}.png"), full_page=True)
    page.close()
    assert not errors and not blocked, (errors, blocked)


@pytest.mark.browser
@pytest.mark.parametrize("width", (1024, 1440))
def test_task_pages_show_no_blank_verdict_cell(browser, panel: dict, width: int) -> None:  # noqa: F811
    """As rendered: on a T1, T2 and T3 page every cell of every Verdicts table shows text (a T1/T2 verdict's key
    cells were blank once), and the page does not scroll sideways."""
    items = panel["out"] / "index_files" / "items"
    for kind in ("t1", "t2", "t3"):
        page, errors, blocked, _ = _open(browser, sorted(items.glob(f"{kind}_*.html"))[0], width)
        try:
            scroll = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            cells = page.evaluate("""() => Array.from(document.querySelectorAll('table.verdicts')).map(t =>
                Array.from(t.querySelectorAll('td')).map(td => td.innerText.trim()))""")
            if width == 1024 and kind == "t1":
                ARTIFACTS.mkdir(exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "sciexplore-task-t1-1024.png"), full_page=True)
        finally:
            page.close()
        assert scroll[0] <= scroll[1], (kind, width, scroll)
        assert cells and all(all(cells_of) for cells_of in cells), (kind, width, cells)
        assert not errors and not blocked, (kind, errors, blocked)


@pytest.mark.browser
def test_figure3_draws_no_empty_bar_slots(browser, panel: dict) -> None:  # noqa: F811
    """A system without search calls (a foundation model) gets no empty slot in every group of Figure 3:
    the legend lists only systems with bars, and the subtitle names the others."""
    rows = _csv(panel["out"] / "tables" / "figure03_search_effort.csv")
    searched = {r["model"] for r in rows if float(r["mean_search_calls"] or 0) > 0}
    silent = {r["model"] for r in rows} - searched
    assert searched and silent, "the simulated panel should have systems with and without searches"
    page, errors, blocked, _ = _open(browser, panel["out"] / "index.html", 1024)
    legend = page.evaluate("Array.from(document.querySelectorAll('#figure3 div.chart svg g.role-legend-label text'))"
                           ".map(t => t.textContent)")
    titles = page.evaluate("Array.from(document.querySelectorAll('#figure3 div.chart svg g.role-title text'))"
                           ".map(t => t.textContent).join(' ')")
    page.close()
    assert set(legend) == searched, legend
    assert all(m in titles for m in silent), titles
    assert not errors and not blocked, (errors, blocked)


def test_header_rows_span_shared_first_words() -> None:
    from agenthop.reports.sciexplore.page import header_rows

    rows = header_rows(["Model", "T1", "T4 Item", "T4 Row", "Overall"])
    assert [(c["text"], [s for _, s in c["sub"]]) for c in rows] == [
        ("Model", []), ("T1", []), ("T4", ["Item", "Row"]), ("Overall", [])]
    assert [i for c in rows for i, _ in c["sub"]] == [2, 3]  # the columns the second row heads
    # the first column stays a header of its own (the sticky row label), and lone two-word headers stay whole
    assert [c["text"] for c in header_rows(["System A", "System B", "Acc A", "Acc B", "A only"])] == \
        ["System A", "System B", "Acc", "A only"]
    assert all(not c["sub"] for c in header_rows(["Model", "Format Acc", "PK Recall"]))


@pytest.mark.browser
def test_table3_heads_t4_over_item_and_row(browser, panel: dict) -> None:  # noqa: F811
    """As in the paper, T4 is one spanning header over its Item and Row columns, and the columns still sort."""
    page, errors, blocked, _ = _open(browser, panel["out"] / "index.html", 1024)
    heads = page.evaluate("""() => Array.from(document.querySelectorAll('#table3 table thead tr')).map(tr =>
        Array.from(tr.cells).map(th => [th.textContent.trim(), th.colSpan, th.rowSpan]))""")
    col = page.evaluate("""() => { const rows = () => Array.from(document.querySelectorAll('#table3 table tbody tr'))
        .filter(r => !r.classList.contains('axis-row')).map(r => r.cells[4].textContent.trim());
        const th = Array.from(document.querySelectorAll('#table3 table thead tr:nth-child(2) th'))
        .find(t => t.textContent.trim() === 'Item'); th.click(); return rows(); }""")
    page.close()
    assert heads[0][0] == ["Model", 1, 2] and ["T4", 2, 1] in heads[0], heads
    assert [h[0] for h in heads[1]] == ["Item", "Row"], heads
    values = [float(v) for v in col]
    assert values == sorted(values), values  # the lower header sorts its own column
    assert not errors and not blocked, (errors, blocked)
