"""compare with a closed-book run: recall (and what is built on it) is n/a, never 0.0, and no statistic
counts it as 0 (the accuracy split, the conversion tests, shares of empty scopes, transition probabilities)."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from agenthop.reports.agenthop import compare, sections
from agenthop.reports.core.runs import RunInfo
from report_fixtures import run


def _run_id(db: Path, model: str, condition: str) -> str:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT min(run_id) FROM model_summary WHERE model = ? AND condition = ?",
                           [model, condition]).fetchone()[0]
    finally:
        con.close()


@pytest.fixture(scope="module")
def closed_vs_full(built_warehouse) -> tuple[dict, list]:  # type: ignore[no-untyped-def]
    from agenthop.reports.agenthop.queries import label_runs, resolve_runs
    from agenthop.reports.warehouse import Warehouse

    db = built_warehouse.db
    ids = [_run_id(db, "balanced", "full"), _run_id(db, "balanced", "closed_book")]
    with Warehouse(db) as wh:
        runs = resolve_runs(wh, run_ids=ids)
        label_runs(runs)
        context, _ = compare.build(wh, runs)
    return context, runs


def test_the_accuracy_split_is_na_not_zero_recall(closed_vs_full) -> None:  # type: ignore[no-untyped-def]
    context, runs = closed_vs_full
    for row in context["decomposition"]:
        assert row["d"] is None and not row["split"], row["scope"]  # no split that credits Δacc to recall
        assert row["b"]["recall"] is None and row["b"]["conversion"] is None
        assert row["a"]["recall"] is not None and row["a"]["recall"] > 0
        assert row["delta_acc"] is not None
    sm = context["summary"]
    assert sm["driver"] is None and "closed_book run" in sm["recall_na"]
    conv = [p for p in context["paired"] if p["comparison"] == "conversion"]
    assert conv and all(p["t"] is None for p in conv)
    acc = [p for p in context["paired"] if p["comparison"] == "accuracy"]
    assert acc and acc[0]["t"] is not None


def test_empty_scopes_and_unused_tools_are_na(closed_vs_full) -> None:  # type: ignore[no-untyped-def]
    context, _ = closed_vs_full
    st = [r for r in context["stopping"] if r["group"] == "ST"]
    assert st and all(r["cells"][1]["share"] is None and r["delta"] == "n/a" for r in st)
    assert context["contact"] and all(r["cells"][1]["share"] is None for r in context["contact"])
    diffs = context["transition_diffs"]
    undefined = [i for i, t in enumerate(diffs) if t["p_b"] is None]
    assert undefined, "the closed-book run never calls the reading tools"
    assert all(diffs[i]["prev_tool"] not in ("think",) for i in undefined)
    assert all(t["diff"] is None for t in diffs[undefined[0]:])  # ranked after every comparable transition
    assert all(w["recall"].endswith("(B: n/a)") for w in context["strata"])


def test_shares_of_a_run_without_rows_in_a_scope_are_na() -> None:
    runs = [RunInfo("a", "m", "full", 0), RunInfo("b", "m", "closed_book", 0)]
    rows = [{"run_id": "a", "scope": "ST", "category": "read", "n": 3, "share": 0.75},
            {"run_id": "a", "scope": "ST", "category": "think", "n": 1, "share": 0.25},
            {"run_id": "b", "scope": "MT", "category": "read", "n": 2, "share": 1.0},
            {"run_id": "a", "scope": "MT", "category": "read", "n": 5, "share": 1.0}]
    out = sections.side_by_side_shares(rows, runs, key="category", preferred=("read", "think"), group="scope",
                                       group_order=("ST", "MT"))
    by = {(r["group"], r["key"]): r for r in out}
    assert by[("ST", "read")]["cells"][1] == {"n": 0, "share": None}
    assert by[("ST", "read")]["delta"] == "n/a"
    assert by[("MT", "read")]["cells"][1]["share"] == 1.0


@pytest.fixture(scope="module")
def closed_page(built_warehouse, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    """The compare page of balanced's full run (A) against its closed-book run (B), with its item pages."""
    db = built_warehouse.db
    full, closed = _run_id(db, "balanced", "full"), _run_id(db, "balanced", "closed_book")
    out = tmp_path_factory.mktemp("closed-compare") / "c.html"
    code, _, err = run("compare", "--runs", f"{full},{closed}", "--db", str(db), "--out", str(out))
    assert code == 0, err
    return out


def test_the_compare_page_prints_na_with_its_reason(built_warehouse, closed_page: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = built_warehouse.db
    html = closed_page.read_text()
    split = html[html.index('id="decomposition"'):html.index('id="paired-tests"')]
    assert not re.search(r"\d / 0\.0<", split), "closed-book recall printed as 0.0"
    assert re.search(r"\d\.\d / n/a<", split)  # R (A / B): A's recall, B's n/a
    assert 'title="n/a: B (' in split and 'id="recall-na"' in split and "no statistic counts them as 0" in split
    assert "The largest part of the difference comes from" not in html
    assert "accuracy split</a> into recall- and conversion-driven parts is n/a" in html
    # two full runs still get their split, and no n/a note
    code, _, _ = run("compare", "--models", "verifier,balanced", "--db", str(db), "--out", str(tmp_path / "f.html"))
    plain = (tmp_path / "f.html").read_text()
    assert code == 0 and 'id="recall-na"' not in plain and "The largest part of the difference comes from" in plain


def test_stopping_scopes_of_a_closed_book_run_are_na_not_zero_gold(closed_vs_full) -> None:  # type: ignore[no-untyped-def]
    """Every stopping scope (ST anchor, MT-both, MT-fail) rests on the evidence a run read: a closed-book run has
    none, so each of its cells is n/a (not "MT-fail: zero_gold 100%", which counts its recall as 0)."""
    context, _ = closed_vs_full
    rows = context["stopping"]
    assert rows and {r["group"] for r in rows} >= {"ST", "MT-fail"}
    assert all(r["cells"][1]["share"] is None and r["delta"] == "n/a" for r in rows), \
        [(r["group"], r["key"], r["cells"][1]) for r in rows if r["cells"][1]["share"] is not None]
    assert any(r["cells"][0]["share"] for r in rows)  # the full run keeps its shares


def test_item_pages_of_the_compare_say_na_for_closed_book_recall(closed_page: Path) -> None:
    pages = sorted((closed_page.parent / "c_files" / "items").glob("*.html"))
    assert pages
    for p in pages:
        text = " ".join(re.sub(r"<[^>]+>", " ", p.read_text()).split())
        assert text.count("paper recall n/a") == 1, p.name  # the closed-book side
        assert text.count("paper recall yes") + text.count("paper recall no") == 1, p.name  # the full side
