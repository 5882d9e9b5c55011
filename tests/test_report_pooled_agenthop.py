"""AgentHop's pages with a model of two replicates (the session's demo-like warehouse: verifier has
replicates 0 and 1 under `full`): compare is the shared page, pooling every replicate per item (its
summary, paired test, per-replicate table and differing items), with AgentHop's sections after it
comparing one run a side; the leaderboard's shared table pools the replicates above Table 2."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from bs4 import BeautifulSoup

from report_fixtures import run


@pytest.fixture(scope="module")
def db(built_warehouse) -> Path:
    return built_warehouse.db


def _item_means(db: Path, model: str) -> dict[str, float]:
    """Each item's correctness averaged over the model's `full` replicates, straight from the mart."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            """SELECT t.sample_id, avg(CAST(t.is_correct AS INTEGER)) FROM fct_trajectory t
               JOIN model_summary m USING (run_id) WHERE m.model = ? AND m.condition = 'full'
               GROUP BY t.sample_id""", [model]).fetchall()
    finally:
        con.close()
    return {s: float(v) for s, v in rows}


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _rows_after(soup: BeautifulSoup, heading_id: str) -> dict[str, list[str]]:
    table = soup.find(id=heading_id).find_next("table")
    return {r[0]: r[1:] for r in ([c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"])]
                                  for tr in table.find_all("tr"))}


def test_compare_adds_the_pooled_replicates(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.html"
    code, _, err = run("compare", "--models", "verifier,balanced", "--db", str(db), "--out", str(out))
    assert code == 0, err
    soup = _soup(out)
    text = soup.get_text(" ", strip=True)
    a, b = _item_means(db, "verifier"), _item_means(db, "balanced")
    shared = sorted(set(a) & set(b))
    mean_a, mean_b = (sum(x[s] for s in shared) / len(shared) for x in (a, b))
    assert "A: 2 runs of verifier pooled (replicate 0, replicate 1), values on 48 items" in text
    assert "B: 1 run of balanced (replicate 0)" in text
    per = _rows_after(soup, "epochs")
    assert per["pooled"][:6] == [f"{mean_a:.3f}", "48", f"{mean_b:.3f}", "48", "48", f"{mean_a - mean_b:+.3f}"]
    assert per["replicate 1"][2:] == ["n/a", "0", "0", "n/a", "only A has this replicate"]
    differing = [s for s in shared if a[s] != b[s]]
    assert f"Items the groups differ on ({len(differing)})" in text
    # AgentHop's sections compare replicate 0 of each, and the summary says so
    assert "Four-axis profile" in text and "(run verifier__full__r0" in text
    # the pooled comparison is the shared page's own (summary, paired test, differing items); AgentHop's
    # sections follow the shared ones, as in the page's table of contents
    headings = [h.get("id") for h in soup.find_all("h2") if h.get("id")]
    assert headings.index("paired") < headings.index("differing") < headings.index("profile") < headings.index("winloss")
    assert [a.get("href") for a in soup.select("nav.toc a")][-1] == "#winloss"
    line = " ".join(next(li for li in soup.find(id="summary").find_next("ul").find_all("li")
                         if "sign-flip" in li.get_text()).get_text(" ", strip=True).split())
    assert line.startswith("Test used: sign-flip permutation on the per-item differences, with the Wilcoxon "
                           "signed-rank beside it. On the 48 items both sides scored, "
                           f"mean A {mean_a:.3f}, B {mean_b:.3f}, A − B = {mean_a - mean_b:+.3f} [")
    assert "Wilcoxon p" in line and line.endswith("per-replicate table .")


def test_leaderboard_pools_replicates_above_table_2(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "lb.html"
    code, _, err = run("leaderboard", "--db", str(db), "--out", str(out))
    assert code == 0, err
    soup = _soup(out)
    # simulated models carry a SIM badge in their cell
    board = {k.removesuffix(" SIM"): v for k, v in _rows_after(soup, soup.find("h2").get("id")).items()}
    a = _item_means(db, "verifier")
    assert board["verifier"][0] == f"{sum(a.values()) / len(a):.3f}"
    assert board["verifier"][2:4] == ["48 of 48", "2"]  # items with a value of the items in scope
    assert soup.find(id="table2") is not None  # AgentHop's Table 2 follows


def test_compare_draws_agenthop_budget_curves(db: Path, tmp_path: Path) -> None:
    """AgentHop's compare page has the shared budget curves on its three axes; at the largest cap each run's value
    is its share of items answered correctly (a correct trajectory stopped by a limit never counts)."""
    out = tmp_path / "c.html"
    code, _, err = run("compare", "--models", "verifier,balanced", "--db", str(db), "--out", str(out))
    assert code == 0, err
    soup = _soup(out)
    note = " ".join(soup.find(id="budget-curves").find_next("p").get_text(" ", strip=True).split())
    # the shared page pools every replicate by default: verifier's two runs and balanced's one, each with its curve
    assert note.count("48 for ") == 3 and "each item its own unit (not clustered)" in note
    assert "48 for verifier · replicate 0" in note and "48 for verifier · replicate 1" in note
    assert "would have behaved differently" in note
    table = soup.find(id="budget-curves").find_next("table")
    rows = [[c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"])] for tr in table.find_all("tr")][1:]
    assert {"cap on tool points", "cap on turns", "cap on tokens per item"} <= {r[0] for r in rows}
    con = duckdb.connect(str(db), read_only=True)
    try:
        expected = [con.execute(
            """SELECT avg(CASE WHEN t.is_correct AND t.terminated_by = 'answer' THEN 1.0 ELSE 0.0 END)
               FROM fct_trajectory t JOIN model_summary m USING (run_id)
               WHERE m.model = ? AND m.condition = 'full' AND m.replicate = ?""", [model, rep]).fetchone()[0]
            for model, rep in (("verifier", 0), ("verifier", 1), ("balanced", 0))]
    finally:
        con.close()
    last = [r for r in rows if r[0] == "cap on tool points"][-1][2:]
    assert [c.split()[0] for c in last] == [f"{e:.3f}" for e in expected]
