"""The shared compare and reruns pages on binary outcomes with item groups: a copy of the toyqa warehouse
of tests/test_core_other_benchmark.py whose final trajectories score 1 when correct and 0 when not (so the
pages use the exact McNemar test) and whose items are put in two groups, easy (t1, t2) and hard (t3).

  r0  t1 wrong  t2 right  t3 wrong        r1  t1 right  t2 right  t3 wrong

Three shared items, one discordant (t1, only r1 right): the MDE is not computed (no split of fewer than
six discordant items reaches p < 0.05), so both McNemar tables print "–" and their captions say why. The
item-groups table puts its two columns (accuracy, n) under each run, as the scorer table does.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from bs4 import BeautifulSoup

from tests.report_fixtures import run
from tests.test_core_other_benchmark import NAME, registered, warehouse  # noqa: F401  (fixtures)

GROUPS = {"t1": "easy", "t2": "easy", "t3": "hard"}
WHY = "fewer than six items differ (b + c ≤ 5), so even if all of them went one way p would not fall below 0.05"


def _as_table(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Make schema.relation `name` a table with the same rows (a view cannot be updated)."""
    schema, rel = name.split(".")
    [(kind,)] = con.execute("SELECT table_type FROM information_schema.tables WHERE table_schema = ? AND "
                            "table_name = ?", [schema, rel]).fetchall()
    if kind == "VIEW":
        con.execute(f"CREATE TABLE {schema}.__copy AS SELECT * FROM {name}")
        con.execute(f"DROP VIEW {name} CASCADE")
        con.execute(f"ALTER TABLE {schema}.__copy RENAME TO {rel}")


@pytest.fixture(scope="module")
def binary_pages(warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:  # noqa: F811
    work = tmp_path_factory.mktemp("toyqa-binary")
    db = work / "w.duckdb"
    shutil.copyfile(warehouse, db)
    con = duckdb.connect(str(db))
    try:
        _as_table(con, "intermediate.int_core_trajectories_final")
        con.execute("UPDATE intermediate.int_core_trajectories_final SET score = CASE WHEN is_correct THEN 1 "
                    "ELSE 0 END WHERE benchmark = ?", [NAME])
        # the metric the pages read (item_metric_values, metric_defs) carries the same 0/1 values
        _as_table(con, "main.item_metric_values")
        con.execute("UPDATE main.item_metric_values AS v SET value = t.score FROM intermediate.int_core_trajectories_final "
                    "AS t WHERE t.run_id = v.run_id AND t.sample_id = v.sample_id AND v.benchmark = ?", [NAME])
        _as_table(con, "main.metric_defs")
        con.execute("UPDATE main.metric_defs SET kind = 'binary', min_value = 0, max_value = 1 WHERE benchmark = ?",
                    [NAME])
        _as_table(con, "intermediate.int_core_item_groups")
        con.executemany("INSERT INTO intermediate.int_core_item_groups (benchmark, sample_id, item_group) "
                        "VALUES (?, ?, ?)", [[NAME, s, g] for s, g in GROUPS.items()])
    finally:
        con.close()
    paths = {}
    for kind, args in {"compare": ["compare", "--runs", "r0,r1"], "reruns": ["reruns", "--model", "toy-model"]}.items():
        paths[kind] = work / f"{kind}.html"
        code, _, err = run(*args, "--db", str(db), "--out", str(paths[kind]))
        assert code == 0, (kind, err)
    return paths


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _caption_and_table(soup: BeautifulSoup, start) -> tuple[str, list[list[tuple[str, int, int]]], list[list[str]]]:
    """The note before the first table after `start`, the table's header cells (text, colspan, rowspan) per
    header row and its body rows."""
    table = start.find_next("table")
    note = table.find_previous_sibling("p")
    heads = [[(th.get_text(" ", strip=True), int(th.get("colspan", 1)), int(th.get("rowspan", 1)))
              for th in tr.find_all("th")] for tr in table.find("thead").find_all("tr")]
    body = [[td.get_text(" ", strip=True) for td in tr.find_all("td")] for tr in table.find("tbody").find_all("tr")]
    return note.get_text(" ", strip=True), heads, body


def test_compare_mcnemar_dash_is_explained(binary_pages: dict[str, Path]) -> None:
    soup = _soup(binary_pages["compare"])
    text = soup.get_text(" ", strip=True)
    assert "Test used: exact McNemar" in text
    note, heads, body = _caption_and_table(soup, soup.find(id="paired"))
    assert [h[0] for h in heads[0]][-1] == "MDE (pp)"
    assert body == [["exact McNemar on correctness", "3", "0", "1", "-33.3", "1.00", "–"]]
    assert f"MDE\xa0“–”: {WHY}." in note
    dash = soup.find(id="paired").find_next("table").find("tbody").find_all("td")[-1]
    assert dash.get("title", "").startswith("no MDE: fewer than six items differ")
    # the summary says it too, instead of leaving the MDE out without a word
    assert "With 1 item differing, no difference could reach 0.05 here (no MDE)." in text


def test_reruns_pairwise_dash_is_explained(binary_pages: dict[str, Path]) -> None:
    soup = _soup(binary_pages["reruns"])
    h3 = soup.find("h3", string="Replicates compared pairwise")
    note, heads, body = _caption_and_table(soup, h3)
    assert [h[0] for h in heads[0]] == ["pair", "n", "b", "c", "Δ (pp)", "p", "p (Holm)", "MDE (pp)",
                                        "within noise floor"]
    assert body[0][:8] == ["#0 vs #1", "3", "0", "1", "-33.3", "1.00", "1.00", "–"]  # one pair: Holm's p is p
    assert f"MDE\xa0“–”: {WHY}." in note and "as in compare" not in note
    assert "Adjusted p: Holm (family-wise error) over the 1 pair shown." in note
    assert [a.get_text(strip=True) for a in h3.find_next("p").find_all("a", class_="def")] == \
        ["McNemar", "MDE", "adjusted p"]


def test_item_groups_put_accuracy_and_n_under_each_run(binary_pages: dict[str, Path]) -> None:
    """The item-groups table once had one header row (run, n, run, n) while the scorer and tool tables
    grouped their columns under each run: it now uses the same grouped head."""
    soup = _soup(binary_pages["compare"])
    _, heads, body = _caption_and_table(soup, soup.find(id="groups"))
    assert len(heads) == 2
    assert heads[0][0] == ("group", 1, 2)
    runs = heads[0][1:]
    assert len(runs) == 2 and all(span == 2 and rows == 1 and text.startswith("toy-model") for text, span, rows in runs)
    assert [h[0] for h in heads[1]] == ["accuracy %", "n", "accuracy %", "n"]
    # easy: r0 1 of 2, r1 2 of 2; hard: 0 of 1 each
    assert [r[0] for r in body] == ["easy", "hard"]
    assert [r[2] for r in body] == ["2", "1"] and [r[4] for r in body] == ["2", "1"]
    assert body[0][1].startswith("50.0") and body[0][3].startswith("100.0") and body[1][1].startswith("0.0")
    # the scorer table's head is the same macro's
    _, scorer_heads, _ = _caption_and_table(soup, soup.find(id="scorers"))
    assert [h[0] for h in scorer_heads[1]] == ["mean", "n", "mean", "n"] and scorer_heads[0][0] == ("scorer", 1, 2)
