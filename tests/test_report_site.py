"""The report site's rules over the real-pipeline warehouse (tests/conftest.py::built_warehouse): the
leaderboard is one condition's panel, its statistics count the panel's models, metrics a condition
lacks print n/a, benchmark notes follow the analysis, and the footer names the commit and the
warehouse relative to the working directory."""

from __future__ import annotations

import html as html_lib
import re
import subprocess
from pathlib import Path

import duckdb
import pytest

from agenthop.reports import render
from agenthop.reports.agenthop.conditions import applicable_summary, applies

from report_fixtures import run

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def db(built_warehouse) -> Path:
    return built_warehouse.db


def _panel(db: Path, condition: str) -> dict[str, str]:
    """model -> its `condition` run with the lowest replicate, straight from the mart."""
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT model, arg_min(run_id, replicate * 1000000 + 0) FROM model_summary "
                       "WHERE condition = ? GROUP BY model", [condition]).fetchall()
    con.close()
    return dict(rows)


def _table2_rows(page: str) -> list[list[str]]:
    body = page[page.index('id="table2"'):page.index('id="scatter"')]
    body = body[body.index("<tbody>"):body.index("</tbody>")]
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = [html_lib.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        rows.append(cells)
    return rows


def test_conditions_say_which_metrics_apply() -> None:
    assert not applies("closed_book", "recall_st") and not applies("closed_book", "avg_budget")
    assert applies("closed_book", "accuracy") and applies("full", "recall_st") and applies("no_search", "recall_mt")
    assert applicable_summary("closed_book", {"accuracy": 0.3, "recall_st": 0.0}) == {"accuracy": 0.3, "recall_st": None}


def test_leaderboard_is_one_conditions_panel(tmp_path: Path, db: Path) -> None:
    full = _panel(db, "full")
    out = tmp_path / "lb.html"
    assert run("leaderboard", "--db", str(db), "--out", str(out))[0] == 0
    page = out.read_text()
    rows = _table2_rows(page)
    assert sorted(r[0].replace("SIMULATED", "").strip() for r in rows) == sorted(full)  # one row per model
    for model, run_id in full.items():
        assert f'title="run {run_id} (replicate' in page
    assert "other run" in page and "--condition" in page  # the other conditions' runs are named, not mixed in

    closed = _panel(db, "closed_book")
    assert closed, "the small panel has a closed_book run"
    out_cb = tmp_path / "lb-cb.html"
    assert run("leaderboard", "--condition", "closed_book", "--db", str(db), "--out", str(out_cb))[0] == 0
    rows = _table2_rows(out_cb.read_text())
    assert len(rows) == len(closed)
    # model, n, accuracy, recall ST/MT, sec. recall ST/MT, conversion ST/MT, calls/turn, tokens, turns, budget, caps
    for r in rows:
        assert r[3:9] == ["n/a"] * 6, r  # no paper is read without tools: recall and conversion do not apply
        assert r[12] == "n/a" and r[15] == "n/a", r  # nor the budget
        assert r[2] != "n/a" and r[11] != "n/a"  # accuracy and turns do
    assert "Paper recall does not apply to closed_book runs" in out_cb.read_text()

    code, _, err = run("leaderboard", "--condition", "nope", "--db", str(db), "--out", str(tmp_path / "x.html"))
    assert code == 2 and "no run has condition 'nope'" in err and "closed_book" in err


def test_panel_accuracy_counts_the_captions_models(tmp_path: Path, db: Path) -> None:
    """The least-discriminating items' panel accuracy is the share of the panel's models (one run each)
    that got the item right, not of every run in the warehouse."""
    full = _panel(db, "full")
    out = tmp_path / "lb.html"
    assert run("leaderboard", "--db", str(db), "--out", str(out))[0] == 0
    page = out.read_text()
    caption = re.search(r"correctness matrix over (\d+) models", page)
    assert caption and int(caption.group(1)) == len(full)
    worst = page[page.index("Least discriminating items"):]
    worst = worst[worst.index("<tbody>"):worst.index("</tbody>")]
    rows = re.findall(r'<a href="[^"]*">([^<]+)</a>.*?<td class="num">([^<]+)</td><td class="num">([^<]+)</td>', worst, re.S)
    assert rows
    con = duckdb.connect(str(db), read_only=True)
    ids = list(full.values())
    mixed = 0
    for sample, shown, n_models in rows:
        panel_acc, all_acc = con.execute(
            f"SELECT avg(is_correct::INT) FILTER (WHERE run_id IN ({','.join('?' * len(ids))})), avg(is_correct::INT) "
            "FROM fct_trajectory WHERE sample_id = ?", [*ids, sample]).fetchone()
        assert shown == f"{100 * panel_acc:.1f}", sample
        assert int(n_models) == len(full)
        mixed += round(panel_acc, 6) != round(all_acc, 6)
    con.close()
    assert mixed, "no listed item tells the panel's accuracy from every run's (the test would not catch the bug)"


def test_benchmark_notes_follow_the_analysis(tmp_path: Path, db: Path) -> None:
    for name, args in {"lb": ["leaderboard"], "cmp": ["compare", "--models", "verifier,balanced"],
                       "rr": ["reruns", "--model", "verifier"]}.items():
        out = tmp_path / f"{name}.html"
        assert run(*args, "--db", str(db), "--out", str(out))[0] == 0
        page = out.read_text()
        notes = page.index('id="benchmark-notes"')
        last_h2 = max(m.start() for m in re.finditer(r"<h2 id=\"(?!benchmark-notes|definitions|items)", page))
        assert notes > last_h2, name
        assert notes < page.index('id="definitions"') if 'id="definitions"' in page else True


def test_footer_names_the_commit_and_the_relative_warehouse(tmp_path: Path, db: Path, monkeypatch) -> None:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    monkeypatch.chdir(db.parent.parent)
    out = tmp_path / "lb.html"
    assert run("leaderboard", "--db", str(db), "--out", str(out))[0] == 0
    footer = out.read_text().split('<footer class="prov">')[1]
    rel = str(db.relative_to(db.parent.parent))
    assert f"<dd title=\"relative to the directory the report was generated from\">{rel}</dd>" in footer
    if head:  # the tests run from a checkout
        assert "git commit" in footer and head in footer
    # outside a checkout (an installed wheel) there is no commit, and no error
    lone = tmp_path / "render.py"
    lone.write_text("# not tracked by any repository\n")
    assert render.commit_of(lone) is None


def test_make_demo_records_messages_and_keeps_dbt_warnings() -> None:
    """`make demo` runs the agents with their transcripts (so every item page shows what the agents
    received) and lets dbt print its WARN lines (neither --quiet nor a log level above warn)."""
    proc = subprocess.run(["make", "-n", "demo"], cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"make -n demo failed here: {proc.stderr.strip()[:200]}")
    lines = proc.stdout.splitlines()
    run_line = next(line for line in lines if "agenthop-harness run " in line)
    dbt_lines = [line for line in lines if "dbt build" in line]
    assert "--messages" in run_line.split()
    assert dbt_lines
    for line in dbt_lines:  # every dbt build of the demo (AgentHop's and SciExplore's)
        words = line.split()
        assert "--quiet" not in words and "-q" not in words, line
        if "--log-level" in words:
            assert words[words.index("--log-level") + 1] in ("debug", "info", "warn"), line
