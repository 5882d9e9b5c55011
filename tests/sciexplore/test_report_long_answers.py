"""Task pages of `agenthop-report sciexplore` stay small however long an answer is: texts are cut with a
note `… (N characters more)`, a T3 answer shows its first references per slot, a T4 answer its first
rows, the trace its first steps, each saying how many more there are (docs/sciexplore.md#report)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner
from conftest import REPO, run_dbt_build
from sx_fixtures import GOOD, TASKS, response, write_jsonl
from test_report_browser import _open, browser  # noqa: F401 (fixture)

from agenthop.ingest.cli import main as ingest_main
from agenthop.reports.cli import main as report_main

MIB = 1024 * 1024
#: a task page is a few kilobytes of markup plus the shown texts: far below the megabytes of the answers
PAGE_BOUND = 400_000


def _long_responses() -> list[dict]:
    text = "ACC-1 " + "lorem ipsum " * (4 * MIB // 12)  # about 4 MiB of prose
    trace = [{"tool": "web_search", "query": f"q{i} " + "kinase " * 700, "result_chars": 10} for i in range(300)]
    refs = [{"title": f"Paper {i} " + "t" * 1000, "year": 2019} for i in range(3000)]
    table = "| Material | Gap |\n|---|---|\n" + "".join(f"| M{i} | {i} |\n" for i in range(20_000))
    table += "| Kalo | " + "9" * (2 * MIB) + " |\n"
    return [response("a1", text, trace=trace), GOOD[1], response("c1", {"CITE_1": refs, "CITE_2": []}),
            response("d1", table)]


@pytest.fixture(scope="module")
def long_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of a warehouse whose one system gave the long answers; its output folder."""
    work = tmp_path_factory.mktemp("sx_long")
    rel = work / "release"
    rel.mkdir()
    write_jsonl(rel / "tasks.jsonl", TASKS)
    db = work / "w.duckdb"
    resp = write_jsonl(work / "long.jsonl", _long_responses())
    assert resp.stat().st_size > 9 * MIB
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--benchmark", str(rel), "--responses", str(resp)],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    proc = run_dbt_build(db, work, "--select", "path:models_sql/staging/sciexplore",
                         "path:models_sql/intermediate/sciexplore", "path:models_sql/marts/sciexplore")
    assert proc.returncode == 0, proc.stdout[-3000:]
    out = work / "report"
    r = CliRunner().invoke(report_main, ["sciexplore", "--db", str(db), "--out", str(out)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return out


def test_task_pages_cut_long_answers(long_report: Path) -> None:
    out = long_report
    items = out / "index_files" / "items"
    pages = {p.stem: p for p in items.glob("*.html")}
    assert set(pages) == {"a1", "b1", "c1", "d1"}
    sizes = {k: p.stat().st_size for k, p in pages.items()}
    assert max(sizes.values()) < PAGE_BOUND, sizes
    soup = {k: BeautifulSoup(p.read_text(encoding="utf-8"), "html.parser") for k, p in pages.items()}
    # the T1 answer: its first 4,000 characters, then how many more it has
    answer = soup["a1"].select_one("pre.received-text").get_text()
    full = _long_responses()[0]["answer"]
    assert answer == full[:4000] + "…"
    notes = [p.get_text() for p in soup["a1"].select("p.note")]
    assert f"… ({len(full) - 4000:,} characters more, not shown)" in notes
    assert "… (200 tool calls more, not shown)" in notes
    assert len(soup["a1"].select("div.call")) == 100
    # the T3 answer: the first 100 references of CITE_1, each title cut, and the verdicts' first 500
    c1_notes = [p.get_text() for p in soup["c1"].select("p.note")]
    assert "… (2,900 references for CITE_1 more, not shown)" in c1_notes
    assert "… (2,500 verdicts more, not shown)" in c1_notes
    titles = soup["c1"].select("section.traj ul > li > ol > li")
    assert len(titles) == 100 and all(len(t.get_text()) < 4100 for t in titles)
    # the T4 answer: its first 100 rows; a long cell of a shown row would be cut as well
    d1_notes = [p.get_text() for p in soup["d1"].select("p.note")]
    assert "… (19,901 rows more, not shown)" in d1_notes
    assert not any("characters more" in n for n in d1_notes)  # its text is not shown, only the table
    [answer_table] = [t for t in soup["d1"].select("section.traj table") if "verdicts" not in (t.get("class") or [])]
    assert len(answer_table.select("tbody tr")) == 100
    # the short answer's page is as before
    assert sizes["b1"] < 40_000 and "more, not shown" not in pages["b1"].read_text(encoding="utf-8")


def test_clip_and_shown_answer() -> None:
    from agenthop.reports.sciexplore.page import clip, shown_answer

    assert clip("abc", 3) == "abc" and clip(None) is None and clip(7) == 7
    assert clip("abcdef", 2) == "ab… (4 characters more)"
    table = {"columns": ["K", "V"], "rows": [{"K": "k", "V": "v" * 5000}] * 150}
    shown, notes = shown_answer("T4", table)
    assert notes == ["… (50 rows more, not shown)"] and len(shown["rows"]) == 100
    assert shown["rows"][0] == {"K": "k", "V": "v" * 4000 + "… (1,000 characters more)"}
    shown, notes = shown_answer("T3", {"CITE_1": [{"title": "x"}] * 101, "CITE_2": ["free text"]})
    assert notes == ["… (1 references for CITE_1 more, not shown)"]
    assert len(shown["CITE_1"]) == 100 and shown["CITE_2"] == ["free text"]
    assert shown_answer("T1", "as is") == ("as is", [])


def test_a_cut_answer_reads_well_in_a_browser(browser, long_report: Path) -> None:  # noqa: F811
    """As rendered: the cut answer and its notes fit the page's width; screenshots in test-artifacts/."""
    (REPO / "test-artifacts").mkdir(exist_ok=True)
    for task in ("a1", "c1", "d1"):
        page, errors, blocked, _ = _open(browser, long_report / "index_files" / "items" / f"{task}.html", 1000)
        assert errors == [] and blocked == []
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        note = page.locator("p.note", has_text="more, not shown").first
        assert note.is_visible()
        note.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, 300)")  # the end of the answer above, its note in the middle
        page.screenshot(path=str(REPO / "test-artifacts" / f"sciexplore-long-{task}.png"), full_page=False)
        page.close()
