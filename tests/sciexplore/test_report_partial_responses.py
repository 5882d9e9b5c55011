"""A partial responses file: one system answered 3 of the release's 103 tasks, the other all of them.

The SciExplore page says so at its top and keeps the paper's rule (a missing task is not attempted); its
paired test runs on the tasks both answered and lists the others with why; the failure taxonomy does not
call the missing tasks abandoned. The shared leaderboard shows both systems as rows, each with the tasks
it answered of the 103, the intention-to-treat value beside the partial one and all tokens per task.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb
import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner
from sx_fixtures import ingest_and_build

from agenthop.reports.cli import main as report_main

FULL, PARTIAL, SEARCH = "quill-base", "larch-70b", "quill-search"  # the third of another paradigm
N_TASKS = 103


@pytest.fixture(scope="module")
def partial(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from agenthop.harness.benchmarks.sciexplore.generator import write_release
    from agenthop.harness.benchmarks.sciexplore.release import load_release
    from agenthop.harness.benchmarks.sciexplore.simulate import SYSTEMS, write_responses

    work = tmp_path_factory.mktemp("sx-partial")
    rel = work / "release"
    write_release(rel, seed=0)
    release = load_release(rel)
    assert [(s.model, s.paradigm) for s in SYSTEMS[:3]] == [(FULL, "foundation"), (PARTIAL, "foundation"),
                                                           (SEARCH, "search")]
    assert len(release.tasks) == N_TASKS
    every = work / "every.jsonl"
    write_responses(every, release, seed=0, systems=SYSTEMS[:3], replicates=1)
    # the partial system's file holds one task of each of the first three types
    kept = {"t1_001", "t2_001", "t3_001"}
    lines = [json.loads(x) for x in every.read_text().splitlines()]
    lines = [x for x in lines if x["model"] != PARTIAL or x["task_id"] in kept]
    resp = work / "responses.jsonl"
    resp.write_text("".join(json.dumps(x) + "\n" for x in lines))
    db = ingest_and_build(work, rel, resp)
    out = work / "report"
    r = CliRunner().invoke(report_main, ["sciexplore", "--db", str(db), "--out", str(out),
                                         "--pair", f"{FULL},{PARTIAL}"])
    assert r.exit_code == 0, r.output
    return {"db": db, "out": out, "work": work, "lines": lines, "kept": kept}


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _text(soup: BeautifulSoup) -> str:
    return " ".join(soup.get_text(" ", strip=True).split())


def test_the_page_states_coverage_at_its_top(partial: dict) -> None:
    soup = BeautifulSoup((partial["out"] / "index.html").read_text(encoding="utf-8"), "html.parser")
    head = soup.find(id="coverage")
    # before the first table, not in a footnote
    assert head.find_next("table") is soup.find("table")
    text = _text(head)
    assert f"{PARTIAL} answered 3 of {N_TASKS} tasks" in text
    assert FULL not in text and SEARCH not in text  # they answered every task
    assert "counts a task without a response as not attempted" in text
    assert f"each run scored over the release's {N_TASKS} tasks" in _text(soup.find(id="table3"))


def test_the_paired_test_uses_the_tasks_both_answered_and_lists_the_others(partial: dict) -> None:
    tables = partial["out"] / "tables"
    [row] = _csv(tables / "paired_tests.csv")
    # T1/T2 tasks: 39 + 32 = 71; the partial system answered t1_001 and t2_001 of them
    assert (row["system_a"], row["system_b"], row["n_tasks"], row["n_left_out"]) == (FULL, PARTIAL, "2", "69")
    [left] = _csv(tables / "paired_tests_left_out.csv")
    ids = left["tasks"].split(", ")
    assert (left["reason"], left["n_tasks"], len(ids)) == ("missing on B", "69", 69)
    assert "t1_001" not in ids and "t2_001" not in ids and "t1_002" in ids and "t2_032" in ids
    page = BeautifulSoup((partial["out"] / "index.html").read_text(encoding="utf-8"), "html.parser")
    text = _text(page.find(id="paired"))
    assert "Tasks the paired tests leave out" in text and "missing on B 69 t1_002, t1_003" in text


def test_missing_tasks_are_not_called_abandoned(partial: dict) -> None:
    rows = {r["model"]: r for r in _csv(partial["out"] / "tables" / "failure_taxonomy.csv")}
    answered = [x for x in partial["lines"] if x["model"] == PARTIAL]
    abstained = sum(1 for x in answered if x["status"] == "not_attempted")
    assert float(rows[PARTIAL]["answered"]) == 3 and int(rows[PARTIAL]["n_tasks"]) == N_TASKS
    assert float(rows[PARTIAL]["not_attempted"]) == abstained <= 3
    rate = rows[PARTIAL]["abandonment_rate"]
    assert rate == "" or float(rate) <= abstained / 3  # of the 3 answered tasks, never of the 103
    assert float(rows[FULL]["answered"]) == N_TASKS


def test_the_leaderboard_has_both_systems_with_their_coverage(partial: dict, tmp_path: Path) -> None:
    out = tmp_path / "lb.html"
    r = CliRunner().invoke(report_main, ["leaderboard", "--db", str(partial["db"]), "--out", str(out)])
    assert r.exit_code == 0, r.output
    soup = BeautifulSoup(out.read_text(encoding="utf-8"), "html.parser")
    h2 = soup.find("h2", id=lambda x: x and "sciexplore" in x)
    assert h2 is not None and "is empty" not in _text(soup)
    table = h2.find_next("table")
    heads = [th.get_text(" ", strip=True) for th in table.find("thead").find_all("th")]
    assert heads[:8] == ["model", "score", "95% interval", "tasks", "clusters", "ITT", "replicates", "all tokens / task"]
    rows = {tr.find("td").get_text(" ", strip=True).replace(" SIM", ""): [td.get_text(" ", strip=True)
                                                                          for td in tr.find_all("td")[1:]]
            for tr in table.find("tbody").find_all("tr")}
    # each paradigm's systems are rows of their own
    assert set(rows) == {f"{FULL} (foundation)", f"{PARTIAL} (foundation)", f"{SEARCH} (search)"}
    body = {m: rows[f"{m} (foundation)"] for m in (FULL, PARTIAL)}
    with duckdb.connect(str(partial["db"]), read_only=True) as con:
        scores = dict(con.execute(
            "SELECT model, list(value ORDER BY sample_id) FROM item_metric_values "
            "WHERE metric = 'normalized-match.task_score' GROUP BY model").fetchall())
    # per-protocol: the mean over the 3 tasks it answered; intention-to-treat: the 100 others as 0
    pp, itt = sum(scores[PARTIAL]) / 3, sum(scores[PARTIAL]) / N_TASKS
    assert len(scores[PARTIAL]) == 3 and len(scores[FULL]) == N_TASKS
    assert body[PARTIAL][0] == f"{pp:.3f} answered 3 of {N_TASKS} tasks (100 missing)"
    assert body[PARTIAL][2] == f"3 of {N_TASKS}" and body[PARTIAL][4] == f"{itt:.3f}"
    assert body[FULL][0] == f"{sum(scores[FULL]) / N_TASKS:.3f}" and body[FULL][2] == f"{N_TASKS} of {N_TASKS}"
    assert body[FULL][4] == "–"  # complete: no intention-to-treat value of its own
    # all tokens per task: the file's prompt + completion tokens over the responses
    for model, n in ((FULL, N_TASKS), (PARTIAL, 3)):
        tokens = sum(x["prompt_tokens"] + x["completion_tokens"] for x in partial["lines"] if x["model"] == model)
        assert body[model][6] == f"{tokens / n:,.0f}"
    caption = _text(h2.find_next("p"))
    assert caption.startswith("A row per model and condition (each of the benchmark's conditions makes a system")
    assert "all tokens (incl. cache reads)" in caption
    assert "counts a task without a response as not attempted" in caption
