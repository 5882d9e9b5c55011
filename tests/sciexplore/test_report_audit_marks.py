"""The SciExplore report's judge audit, SIMULATED marks and Table 6 caption, end to end: the synthetic
release, the simulated systems and one hand-made system that is not simulated ("scribe", foundation)
whose T1 answers are written here:

  first T1 task:  "<answer>, <answer>7"                          correct, with several candidates
  second T1 task: "<answer>"                                      correct, one candidate
  third T1 task:  "I don't know, but it is probably WRONG-1"      not attempted (judged), hedged then answered
  fourth T1 task: "I could not find the answer."                  not attempted (judged), a plain abstention

so its audit row reads correct 2, with several candidates 1, not attempted (judged) 2, hedged 1.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import REPO
from sx_fixtures import response, sciexplore_report, simulated_release, write_jsonl
from test_report_browser import OVERLAPS_JS, _open, browser  # noqa: F401 (fixture)

from agenthop.ingest.cli import main as ingest_main

ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("sxaudit")
    rel, release, sim = simulated_release(work)
    t1 = [t for t in release.tasks if t.type == "T1"][:4]
    answers = [f"{t1[0].answer}, {t1[0].answer}7", t1[1].answer, "I don't know, but it is probably WRONG-1",
               "I could not find the answer."]
    hand = write_jsonl(work / "hand.jsonl", [response(t.id, a, model="scribe", paradigm="foundation")
                                             for t, a in zip(t1, answers)])
    db = work / "w.duckdb"
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--benchmark", str(rel), "--responses", str(sim),
                                         "--responses", str(hand)])
    assert r.exit_code == 0, r.output
    out = sciexplore_report(db, work)
    return out


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _section(report: Path, key: str) -> str:
    return (report / "index.html").read_text(encoding="utf-8").split(f'id="{key}"')[1].split("</section>")[0]


def test_the_judge_audit_counts_each_system(report: Path) -> None:
    rows = {r["model"]: r for r in _csv(report / "tables" / "judge_audit.csv")}
    assert len(rows) == 7
    scribe = rows["scribe"]
    assert (scribe["n_runs"], scribe["correct"], scribe["several_candidates"], scribe["not_attempted"],
            scribe["hedged"]) == ("1", "2", "1", "2", "1")
    for model, r in rows.items():  # the simulated systems answer with one candidate and abstain bare
        if model != "scribe":
            assert r["several_candidates"] == "0" and r["hedged"] == "0" and int(r["correct"]) > 0, r
    html = _section(report, "audit")
    assert "with several candidates" in html and "hedged, then answered" in html
    assert 'href="' in html and "sciexplore.md#judge-audit" in html


def test_simulated_systems_are_marked_in_tables_3_4_6_and_7(report: Path) -> None:
    from bs4 import BeautifulSoup

    for key in ("table3", "table4", "table6", "table7"):
        table = BeautifulSoup(_section(report, key), "html.parser").select_one("table")
        rows = [tr for tr in table.select("tbody tr") if "axis-row" not in (tr.get("class") or [])]
        sim = [tr.td.get_text(" ", strip=True) for tr in rows if tr.td.select_one(".badge.sim")]
        if key == "table7":  # scribe has one replicate: not in Table 7
            assert rows and len(sim) == len(rows), key
        else:
            assert len(rows) == 7 and len(sim) == 6 and not any("scribe" in name for name in sim), key
    tex = (report / "tables" / "table03_main.tex").read_text()
    lines = [line for line in tex.splitlines() if line.endswith("\\\\") and " & " in line]
    assert any(line.startswith("scribe &") for line in lines)
    assert all("\\textit{(sim)}" in line for line in lines if not line.startswith(("scribe", "Model", "\\multi")))


def test_table6_caption_says_the_papers_t1_disagrees_with_its_hops(report: Path) -> None:
    note = " ".join(_section(report, "table6").split())
    assert "6 of its 13 systems" in note and "9, 10, 8, 8 and 4" in note
    docs = " ".join((REPO / "docs" / "sciexplore.md").read_text().split())
    assert "for the other 6 of its 13" in docs and "Gemini Deep Research (23.08 against 35.90)" in docs


@pytest.mark.browser
@pytest.mark.parametrize("width", (1024, 1440))
def test_the_report_with_audit_and_marks_fits_the_page(browser, report: Path, width: int) -> None:  # noqa: F811
    page, errors, blocked, _ = _open(browser, report / "index.html", width)
    try:
        scroll = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert scroll[0] <= scroll[1], f"scrolls sideways at {width}px: {scroll}"
        over = page.evaluate("""() => Array.from(document.querySelectorAll('#table3 table, #table6 table, #audit table'))
            .map(t => { const b = t.closest('.tablewrap') || t.parentElement; return b.scrollWidth - b.clientWidth; })""")
        assert over and all(o <= 1 for o in over), over
        badge = page.locator("#table3 td .badge.sim").first
        assert badge.is_visible() and badge.inner_text().strip() == "SIMULATED"
        assert not page.evaluate(OVERLAPS_JS)["problems"]
        ARTIFACTS.mkdir(exist_ok=True)
        for key in ("table3", "table6", "audit"):
            page.locator(f"#{key}").screenshot(path=str(ARTIFACTS / f"sciexplore-{key}-{width}.png"))
    finally:
        page.close()
    assert not errors and not blocked, (errors, blocked)
