"""The shared report sections on a benchmark other than AgentHop, added only through the registries.

The toy benchmark ``toyqa`` of tests/test_core_other_benchmark.py (its own tools web_search /
open_page / finish, graded scores) is registered with the benchmark registry; its report sections (an
extra compare section and the item's question at the top of item pages) with the report registry's
public interface. Its two runs r0 and r1 (replicates 0 and 1 of toy-model) are rendered by
``agenthop-report compare --runs r0,r1``, ``reruns --model toy-model`` and ``item t1 --runs r0,r1``,
and the numbers on the pages are checked against values worked out by hand from the plan:

  r0  t1 ws > op > ws > fi  score 0.5 wrong  answer      tokens 100  turns 3
      t2 ws > fi            score 1.0 right  answer      tokens 50   turns 2
      t3 ws > op            score 0.0 wrong  time_limit  tokens 80   turns 2
  r1  t1 ws > fi            score 1.0 right  answer      tokens 40   turns 2
      t2 ws > op > fi       score 1.0 right  answer      tokens 60   turns 3
      t3 (no calls)         no score  wrong  error       tokens 0    turns 1
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from agenthop.reports.core import registry
from tests.report_fixtures import run
from tests.test_core_other_benchmark import NAME, registered, warehouse  # noqa: F401  (fixtures)


def _question_sections(wh, sample_ids, runs):
    rows = wh.rows(f"SELECT sample_id, question FROM raw.{NAME}_tasks WHERE sample_id IN "
                   f"({', '.join('?' * len(sample_ids))})", list(sample_ids))
    return {r["sample_id"]: registry.table_section("Question", ["item", "question"], [[r["sample_id"], r["question"]]])
            for r in rows}


def _compare_sections(wh, sides, charts):
    runs = [r for side in sides for r in side.runs]
    rows = wh.rows(f"SELECT run_id, count(*) AS n FROM raw.{NAME}_tasks CROSS JOIN (SELECT DISTINCT run_id FROM "
                   "raw.runs WHERE run_id IN (?, ?)) GROUP BY run_id ORDER BY run_id", [r.run_id for r in runs])
    return [registry.table_section("Toy tasks", ["run", "tasks in the release"], [[r["run_id"], r["n"]] for r in rows],
                                   note="toyqa's own section")]


@pytest.fixture(scope="module")
def sections(registered) -> Iterator[registry.ReportSections]:  # noqa: F811
    s = registry.ReportSections(name=NAME, compare=_compare_sections, item=_question_sections)
    registry.register(s)
    try:
        yield s
    finally:
        registry.unregister(NAME)


@pytest.fixture(scope="module")
def pages(warehouse: Path, sections, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:  # noqa: F811
    out = tmp_path_factory.mktemp("toyqa-reports")
    paths = {}
    for kind, args in {"compare": ["compare", "--runs", "r0,r1"], "reruns": ["reruns", "--model", "toy-model"],
                       "item": ["item", "t1", "--runs", "r0,r1"]}.items():
        paths[kind] = out / f"{kind}.html"
        code, stdout, err = run(*args, "--db", str(warehouse), "--out", str(paths[kind]))
        assert code == 0, (kind, err)
        assert stdout.strip() == str(paths[kind])
    return paths


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _table_after(soup: BeautifulSoup, heading_id: str, nth: int = 0) -> list[list[str]]:
    """The rows (cell texts) of the nth table after the heading with `heading_id`."""
    tables = soup.find(id=heading_id).find_all_next("table")
    return [[c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"])] for tr in tables[nth].find_all("tr")]


def _rows(table: list[list[str]]) -> dict[str, list[str]]:
    return {r[0]: r[1:] for r in table}


def test_compare_outcomes_and_the_graded_test(pages: dict[str, Path]) -> None:
    soup = _soup(pages["compare"])
    text = soup.get_text(" ", strip=True)
    assert "Benchmark toyqa" in text
    out = _rows(_table_after(soup, "outcomes"))
    assert out["items"] == ["3", "3"]
    assert out["accuracy %"] == ["33.3 ± 45.9", "66.7 ± 27.2"]  # Wilson 1/3: hi 0.792; 2/3: hi 0.939
    assert out["scored items"] == ["3", "2"]
    assert out["mean judge.value [95%]"][0].startswith("0.500 [") and out["mean judge.value [95%]"][1].startswith("1.000 [1.000, 1.000]")
    # graded scores: not McNemar. Both scored t1 (0.5 vs 1.0) and t2 (1.0 vs 1.0); t3 lacks r1's score.
    assert "Test used: sign-flip permutation" in text and "exact McNemar does not apply" in text
    paired = _rows(_table_after(soup, "paired"))
    # one non-zero difference (t1: -0.5): both of its signs reach |-0.5|, p = 2/2
    assert paired["sign-flip permutation"] == ["2", "0", "1", "1", "–", "–", "1.00"]
    assert paired["Wilcoxon signed-rank"] == ["2", "0", "1", "1", "-0.250", "[-0.500, 0.000]", "1.00"]
    assert paired["sign test"][:4] == ["2", "0", "1", "1"] and paired["sign test"][-1] == "1.00"
    # its "–" under mean and interval is explained: those describe the differences, given on the Wilcoxon row
    assert paired["sign test"][4:6] == ["–", "–"]
    assert "the other rows have “–” there" in text
    assert "1 shared item lacks a score in one of the runs and is left out" in text


def test_compare_scorers_terminations_tools(pages: dict[str, Path]) -> None:
    soup = _soup(pages["compare"])
    scorers = {tuple(r[:2]): r[2:] for r in _table_after(soup, "scorers")[1:]}
    assert scorers[("judge", "value")] == ["0.500", "3", "1.000", "2"]
    assert scorers[("length", "value")] == ["2.333", "3", "2.000", "3"]  # turns 3, 2, 2 and 2, 3, 1
    terms = _rows(_table_after(soup, "terminations")[2:])
    assert terms["answer"] == ["2", "66.7", "50.0", "2", "66.7", "100.0", "+0.0"]
    assert terms["time_limit"] == ["1", "33.3", "0.0", "0", "0.0", "n/a", "+33.3"]
    assert terms["error"] == ["0", "0.0", "n/a", "1", "33.3", "0.0", "-33.3"]
    tools = {k.replace("_ ", "_"): v for k, v in _rows(_table_after(soup, "tools")[2:]).items()}  # <wbr> after "_"
    # r0: 8 calls (ws 4, op 2, fi 2); r1: 5 calls (ws 2, op 1, fi 2); tools in order of their calls
    assert list(tools) == ["web_search", "finish", "open_page"]
    assert tools["web_search"] == ["4", "50.0", "0", "2", "40.0", "0", "+10.0"]
    assert tools["finish"] == ["2", "25.0", "0", "2", "40.0", "0", "-15.0"]
    trigrams = [[r[0].replace("_ ", "_"), *r[1:]] for r in _table_after(soup, "transitions", 1)[1:]]
    assert trigrams == [["open_page → web_search → finish", "1", "50.0"],
                        ["web_search → open_page → web_search", "1", "50.0"]]


def test_compare_resources_differing_items_and_benchmark_section(pages: dict[str, Path]) -> None:
    soup = _soup(pages["compare"])
    res = _rows(_table_after(soup, "resources"))
    assert res["total tokens (caps' quantity) per item, mean"] == ["77", "33"]  # 230 / 3 and 100 / 3
    assert res["turns per item, mean (p50 / p90)"] == ["2.33 (2 / 3)", "2.00 (2 / 3)"]
    assert res["tool calls"] == ["8", "5"]
    assert res["cost, total (USD)"] == ["n/a", "n/a"]  # simulated runs are not priced
    differing = _table_after(soup, "differing")
    # graded: items whose scores differ, the largest difference first; t2 (1.0 and 1.0) is not listed
    assert [r[:3] for r in differing[1:]] == [["t1", "0.500", "1.000"], ["t3", "0.000", "n/a"]]
    links = [a["href"] for a in soup.find(id="differing").find_next("table").find_all("a")]
    assert links == ["compare_files/items/t1.html", "compare_files/items/t3.html"]
    assert all((pages["compare"].parent / href).is_file() for href in links)
    own = soup.find("h2", string="Toy tasks")
    assert own is not None and [c.get_text() for c in own.find_next("tbody").find_all("td")] == ["r0", "3", "r1", "3"]


def test_reruns_spread_flips_and_pairwise_graded(pages: dict[str, Path]) -> None:
    soup = _soup(pages["reruns"])
    text = soup.get_text(" ", strip=True)
    assert "on benchmark toyqa" in text and "The outcomes of this group are graded" in text
    h2 = soup.find("h2", string=lambda s: s and s.startswith("Condition full"))
    tables = h2.find_all_next("table")
    spread = {r[0]: r[1:] for r in ([c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"])]
                                    for tr in tables[1].find_all("tr"))}
    assert spread["accuracy"] == ["33.3", "66.7", "50.0", "16.67", "33.3"]
    assert spread["mean score"] == ["0.500", "1.000", "0.750", "0.250", "0.500"]
    assert spread["all tokens (incl. cache reads) per item"] == ["77", "33", "55", "22", "43"]
    pairwise = [c.get_text(" ", strip=True) for c in tables[2].find_all("tr")[1].find_all("td")]
    assert pairwise == ["#0 vs #1", "2", "0", "1", "1", "-0.250", "[-0.500, 0.000]", "1.00", "1.00", "1.00"]  # Wilcoxon p, its Holm p, sign p
    consistency = [[c.get_text(" ", strip=True) for c in tr.find_all("td")] for tr in tables[3].find_all("tr")[1:]]
    assert consistency == [["0 of 2 replicates", "1"], ["1 of 2 replicates", "1"], ["2 of 2 replicates", "1"]]
    unstable = [[c.get_text(" ", strip=True) for c in tr.find_all("td")] for tr in tables[4].find_all("tr")[1:]]
    assert unstable == [["t1", "1/2", "✗✓", "0.500 · 1.000", "0.500"]]
    assert (pages["reruns"].parent / "reruns_files/items/t1.html").is_file()


def test_item_page_shows_the_benchmarks_item_and_both_trajectories(pages: dict[str, Path]) -> None:
    soup = _soup(pages["item"])
    text = soup.get_text(" ", strip=True)
    assert "question 1?" in text  # the benchmark's own item section, through the report registry
    scores = {tuple(r[:2]): r[2:] for r in _table_after(soup, "top", 1)[1:]}
    assert scores[("judge", "value")] == ["0.5", "1.0"]
    calls = soup.find("table", class_="calls")
    heads = [" ".join(th.get_text(" ").split()) for th in calls.find("thead").find_all("th")[1:]]
    assert "score 0.500 · ended by answer · 3 turns · 4 calls · 100 tokens" in heads[0]
    assert "score 1.000 · ended by answer · 2 turns · 2 calls · 40 tokens" in heads[1]
    tools = [[b.get_text() for b in td.find_all("b", class_="tool")] for td in calls.find("tbody").find_all("td")
             if "turn" not in (td.get("class") or [])]
    assert [t for col in tools for t in col].count("web_search") == 3  # r0: 2, r1: 1
    assert text.count("No messages recorded for this run's trajectory.") == 2


def test_compare_refuses_runs_of_two_benchmarks(warehouse: Path, sections) -> None:  # noqa: F811
    from tests.test_agenthop_compat import PRE_CORE_RUN

    code, _, err = run("compare", "--runs", f"r0,{PRE_CORE_RUN}", "--db", str(warehouse))
    assert code == 2 and "belong to different benchmarks" in err and "r0 (toyqa)" in err
