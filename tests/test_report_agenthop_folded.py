"""AgentHop's compare, item and leaderboard pages are the shared pages plus AgentHop's sections (the
report registry), on the session's demo-like warehouse: the shared sections and AgentHop's sit on one page,
and the figures of AgentHop's sections equal the values queried straight from its marts. A warehouse
copy with a second AgentHop metric (rows of raw.scores, ``judge.flag``, set lower-is-better and left out
on four of balanced's items) renders every page for it with ``--metric``: pass@k on the reruns page and
the intention-to-treat value on compare follow that metric, by hand."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest
from bs4 import BeautifulSoup

from conftest import cli, dbt_env, run_dbt_build
from report_fixtures import run

from agenthop.reports import stats

A, B = "early-committer", "balanced"


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _text(soup: BeautifulSoup) -> str:
    return " ".join(soup.get_text(" ", strip=True).split())


def _rows(soup: BeautifulSoup, heading_id: str, nth: int = 0) -> dict[str, list[str]]:
    """The nth table after the heading `heading_id`: first cell -> the other cells' texts."""
    table = soup.find(id=heading_id).find_all_next("table")[nth]
    return {r[0]: r[1:] for r in ([" ".join(c.get_text(" ", strip=True).split()) for c in tr.find_all(["td", "th"])]
                                  for tr in table.find_all("tr")) if r}


def _q(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def _run_id(db: Path, model: str, replicate: int = 0) -> str:
    return _q(db, "SELECT run_id FROM model_summary WHERE model = ? AND condition = 'full' AND replicate = ?",
              [model, replicate])[0][0]


@pytest.fixture(scope="module")
def db(built_warehouse) -> Path:
    return built_warehouse.db


@pytest.fixture(scope="module")
def pages(db: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("folded")
    sid = _q(db, "SELECT min(sample_id) FROM fct_tool_call WHERE run_id = ? AND budget_after IS NOT NULL",
             [_run_id(db, A)])[0][0]
    paths = {}
    for kind, args in {"compare": ["compare", "--models", f"{A},{B}"], "leaderboard": ["leaderboard"],
                       "item": ["item", sid, "--models", f"{A},{B}"]}.items():
        paths[kind] = out / f"{kind}.html"
        code, _, err = run(*args, "--db", str(db), "--out", str(paths[kind]))
        assert code == 0, (kind, err)
    paths["sample_id"] = Path(sid)
    return paths


def test_compare_is_the_shared_page_with_agenthops_sections(db: Path, pages: dict[str, Path]) -> None:
    soup = _soup(pages["compare"])
    ids = [h.get("id") for h in soup.find_all("h2")]
    # the shared sections first, then AgentHop's, on one page
    for shared in ("summary", "outcomes", "paired", "terminations", "tools", "transitions", "resources", "differing"):
        assert shared in ids, shared
    for own in ("profile", "decomposition", "paired-tests", "stopping", "wrong-reads", "evidence-contact",
                "bigrams", "cells", "distributions", "winloss"):
        assert own in ids and ids.index(own) > ids.index("differing"), own
    ra, rb = _run_id(db, A), _run_id(db, B)
    # the four-axis profile's accuracy: correct of n from fct_trajectory
    for col, rid in ((0, ra), (1, rb)):
        n, k = _q(db, "SELECT count(*), sum(CAST(is_correct AS INTEGER)) FROM fct_trajectory WHERE run_id = ?", [rid])[0]
        assert _rows(soup, "profile")["accuracy"][col] == stats.format_acc_pm(int(k), int(n))
    # stopping behaviour (Table 9): each share straight from the mart, in percent
    stop = _q(db, "SELECT scope, category, n, share FROM stopping_behavior WHERE run_id = ? ORDER BY category_order",
              [ra])
    table = soup.find(id="stopping").find_next("table")
    cells = {(r[0], r[1]): r[2:4] for r in ([c.get_text(" ", strip=True) for c in tr.find_all("td")]
                                            for tr in table.find_all("tr")) if len(r) > 4}
    for scope, category, n, share in stop:
        assert cells[(scope, category)] == [str(n), f"{100 * share:.1f}"], (scope, category)
    # items won by one run only: counted in fct_trajectory
    (a_wins, b_wins), = _q(db, """SELECT sum(CASE WHEN a.is_correct AND NOT b.is_correct THEN 1 ELSE 0 END),
                                         sum(CASE WHEN b.is_correct AND NOT a.is_correct THEN 1 ELSE 0 END)
                                  FROM fct_trajectory a JOIN fct_trajectory b USING (sample_id)
                                  WHERE a.run_id = ? AND b.run_id = ?""", [ra, rb])
    text = _text(soup)
    assert f"{a_wins} won by A, {b_wins} won by B" in text
    assert f"{a_wins + b_wins} items won by one run only" in text  # AgentHop's summary line, in the shared summary
    # bigram effects: how many bigrams each run used, from the mart
    (seen,), = _q(db, "SELECT count(*) FROM bigram_effects WHERE run_id = ? AND n_with > 0", [ra])
    assert f"of {seen} bigrams seen" in text
    # the item pages it links to are AgentHop's part of the shared item page
    href = soup.find(id="winloss").find_next("a", href=lambda h: h and "/items/" in h)["href"]
    item = _soup(pages["compare"].parent / href)
    assert item.find("ol", class_="options") is not None and item.find("h3", string="Transcript") is not None


def test_item_is_the_shared_page_with_the_item_and_its_calls(db: Path, pages: dict[str, Path]) -> None:
    soup = _soup(pages["item"])
    sid = str(pages["sample_id"])
    text = _text(soup)
    question, correct = _q(db, "SELECT question, correct_index FROM raw.items WHERE sample_id = ?", [sid])[0]
    assert " ".join(question.split()) in text
    right = soup.select("ol.options li.option.correct")
    assert len(right) == 1 and right[0].find("span", class_="letter").get_text() == "ABCD"[correct]
    # the shared page's parts: the metric, scores table or calls, the transcript
    assert "Metric: correct, higher is better" in text and soup.find("h3", string="Transcript") is not None
    # each call's budget left, from fct_tool_call
    budgets = [b for (b,) in _q(db, "SELECT budget_after FROM fct_tool_call WHERE run_id = ? AND sample_id = ? "
                                    "AND attempt = (SELECT max(attempt) FROM fct_tool_call WHERE run_id = ? AND sample_id = ?) "
                                    "ORDER BY seq", [_run_id(db, A), sid, _run_id(db, A), sid])]
    first_col = [" ".join(td.get_text(" ", strip=True).split()) for td in
                 soup.select("table.calls:not(.transcripts) tbody tr td:nth-of-type(2)")]
    shown = [int(part.split("budget left ")[1].split()[0]) for cell in first_col for part in cell.split(" cost ")
             if "budget left " in part]
    assert shown == [int(b) for b in budgets if b is not None]
    # each run's head: the shared badge, and AgentHop's budget used and paper recall
    used, recall = _q(db, "SELECT budget_used, paper_recall FROM fct_trajectory WHERE run_id = ? AND sample_id = ?",
                      [_run_id(db, A), sid])[0]
    head = " ".join(soup.select("table.calls thead th")[1].get_text(" ", strip=True).split())
    assert f"budget {used}" in head and f"paper recall {'yes' if recall else 'no'}" in head


def test_leaderboard_is_the_shared_tables_with_table_2(db: Path, pages: dict[str, Path]) -> None:
    soup = _soup(pages["leaderboard"])
    ids = [h.get("id") for h in soup.find_all("h2")]
    assert ids.index("table2") > 0 and {"scatter", "conditions", "reliability"} <= set(ids)
    rows = _rows(soup, "table2")
    for model, n, k in _q(db, "SELECT model, n_items, n_correct FROM model_summary WHERE condition = 'full' "
                              "AND replicate = 0"):
        row = next(v for key, v in rows.items() if key.removesuffix(" SIMULATED") == model)
        assert row[:2] == [str(n), stats.format_acc_pm(int(k), int(n))], model
    # the least discriminating items link to item pages, written
    href = soup.find(id="reliability").find_next("a", href=lambda h: h and "/items/" in h)["href"]
    assert (pages["leaderboard"].parent / href).exists()


# -- a second AgentHop metric --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def flagged(built_warehouse, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, float]]]:
    """A copy with ``judge.flag`` on verifier's two replicates and balanced's full run (1 on every third
    item; balanced's last four items without a value), lower is better."""
    work = tmp_path_factory.mktemp("flagged")
    db = work / "warehouse.duckdb"
    shutil.copyfile(built_warehouse.db, db)
    con = duckdb.connect(str(db))
    values: dict[str, dict[str, float]] = {}
    try:
        runs = con.execute("SELECT run_id, model FROM raw.runs WHERE benchmark = 'agenthop' AND condition = 'full' "
                           "AND model IN ('verifier', 'balanced') ORDER BY run_id").fetchall()
        for rid, model in runs:
            sids = [s for (s,) in con.execute("SELECT DISTINCT sample_id FROM raw.trajectories WHERE run_id = ? "
                                              "ORDER BY sample_id", [rid]).fetchall()]
            if model == "balanced":
                sids = sids[:-4]
            values[rid] = {s: 1.0 if i % 3 == 0 else 0.0 for i, s in enumerate(sids)}
            con.executemany("INSERT INTO raw.scores (run_id, sample_id, scorer, key, value_text, value_num) "
                            "VALUES (?, ?, 'judge', 'flag', NULL, ?)", [[rid, s, v] for s, v in values[rid].items()])
    finally:
        con.close()
    proc = subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--metric-direction", "flag=lower"],
                          env=dbt_env(db), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    built = run_dbt_build(db, work)
    assert built.returncode == 0, built.stdout[-3000:]
    return db, values


def test_every_page_renders_a_second_agenthop_metric(flagged, tmp_path: Path) -> None:
    db, values = flagged
    for args in (["compare", "--models", "verifier,balanced"], ["reruns", "--model", "verifier"], ["leaderboard", "--benchmark", "agenthop"],
                 ["item", sorted(next(iter(values.values())))[0], "--models", "verifier,balanced"]):
        out = tmp_path / f"{args[0]}.html"
        code, _, err = run(*args, "--metric", "flag", "--db", str(db), "--out", str(out))
        assert code == 0, (args, err)
        assert "flag (judge.flag), lower is better" in _text(_soup(out)), args


def test_pass_k_and_itt_follow_the_shown_metric(flagged, tmp_path: Path) -> None:
    db, values = flagged
    # reruns: pass@k of judge.flag; both replicates agree on every item, so pass@k = pass^k = the share of 1s
    out = tmp_path / "reruns.html"
    code, _, err = run("reruns", "--model", "verifier", "--metric", "flag", "--db", str(db), "--out", str(out))
    assert code == 0, err
    soup = _soup(out)
    mine = next(vs for rid, vs in values.items() if rid.startswith("verifier"))
    share = sum(mine.values()) / len(mine)
    table = soup.find(id=lambda i: bool(i) and i.startswith("a-passk-full")).find_next("table")
    rows = [[td.get_text(strip=True) for td in tr.find_all("td")] for tr in table.find("tbody").find_all("tr")]
    assert [r[0] for r in rows] == ["1", "2"]
    for r in rows:
        assert r[1] == str(len(mine)) and r[2] == f"{share:.3f}" and r[4] == f"{share:.3f}"
    assert "judge.flag" in table.find_previous("p").get_text()
    # compare: balanced misses four items; its intention-to-treat mean counts them as the worst value, 1
    out = tmp_path / "compare.html"
    code, _, err = run("compare", "--models", "verifier,balanced", "--metric", "flag", "--db", str(db),
                       "--out", str(out))
    assert code == 0, err
    bal = next(vs for rid, vs in values.items() if rid.startswith("balanced"))
    n_scope = len(bal) + 4
    itt_b = (sum(bal.values()) + 4 * 1.0) / n_scope
    assert itt_b != sum(bal.values()) / len(bal)
    line = _text(_soup(out))
    assert f"B {itt_b:.3f}." in line.split("Intention-to-treat:")[1][:40]
