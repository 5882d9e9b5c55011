"""The report pages on an Inspect-only warehouse: the toolbox logs (two models, two epochs) written by
Inspect offline, imported and built. Pooled compare, --epoch, reruns in epochs, the leaderboard, the
AgentHop- and SciExplore-only commands refusing in one line, definitions the pages use; in Chromium.

Hand computation (inspect_fixtures.py): the primary score is 1 on s1-s3 and 0 on s4 (the token limit)
for alpha in both epochs and for beta in epoch 1; beta answers s3 wrongly in epoch 2. Pooled per item:
alpha (1, 1, 1, 0), beta (1, 1, 0.5, 0): means 0.750 and 0.625, differences A − B = (0, 0, 0.5, 0). One
non-zero difference: its two sign vectors give |±0.5|, both ≥ 0.5, so the exact sign-flip p = 2/2 = 1.
Epoch 1: 0.750 vs 0.750 (no discordant item, McNemar p = 1); epoch 2: 0.750 vs 0.500 (b = 1 on s3, c = 0,
p = 1).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from bs4 import BeautifulSoup

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

from inspect_fixtures import inspect_logs  # noqa: E402,F401  (the session's logs)
from conftest import run_dbt_build  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ALPHA, BETA = "mockllm/alpha", "mockllm/beta"
ARTIFACTS = REPO / "test-artifacts"


def _run(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, AGENTHOP_DB=str(db), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    return subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True, env=env, cwd=REPO)


@pytest.fixture(scope="module")
def warehouse(inspect_logs, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """The toolbox logs alone (no AgentHop or SciExplore run), ingested and built."""
    work = tmp_path_factory.mktemp("inspect-only")
    db = work / "w.duckdb"
    proc = _run(db, "agenthop-ingest", "--db", str(db), "--inspect-log", str(inspect_logs.eval_logs[0].parent))
    assert proc.returncode == 0, proc.stderr
    build = run_dbt_build(db, work)
    assert build.returncode == 0, build.stdout[-3000:]
    return db


def _page(db: Path, out: Path, *args: str) -> BeautifulSoup:
    proc = _run(db, "agenthop-report", *args, "--db", str(db), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return BeautifulSoup(out.read_text(encoding="utf-8"), "html.parser")


def _table(soup: BeautifulSoup, heading_id: str, nth: int = 0) -> list[list[str]]:
    tables = soup.find(id=heading_id).find_all_next("table")
    return [[c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"])] for tr in tables[nth].find_all("tr")]


def _rows(table: list[list[str]]) -> dict[str, list[str]]:
    return {r[0]: r[1:] for r in table}


def test_pooled_values_equal_the_hand_computation(warehouse: Path) -> None:
    from agenthop.reports.core import pooling
    from agenthop.reports.core.runs import pick_groups, shared_runs
    from agenthop.reports.warehouse import Warehouse

    with Warehouse(warehouse) as wh:
        ga, gb = (pooling.make_group(g) for g in pick_groups(shared_runs(wh), [ALPHA, BETA]))
        assert [ga.repeats.name(r) for r in ga.runs] == ["epoch 1", "epoch 2"]
        res = pooling.compare_groups(wh, ga, gb)
        values = pooling.ITEM_VALUES(wh, ga.run_ids + gb.run_ids)
    assert pooling.item_means(values, ga.run_ids) == {"s1": 1.0, "s2": 1.0, "s3": 1.0, "s4": 0.0}
    assert pooling.item_means(values, gb.run_ids) == {"s1": 1.0, "s2": 1.0, "s3": 0.5, "s4": 0.0}
    t = res.test
    assert (t.n, t.mean_a, t.mean_b, t.mcnemar) == (4, 0.75, 0.625, None)
    assert (t.sign_flip.n_nonzero, t.sign_flip.n_resamples, t.sign_flip.exact, t.sign_flip.p) == (1, 2, True, 1.0)
    assert [(e.number, e.mean_a, e.mean_b, e.test.mcnemar.a_only, e.test.mcnemar.b_only) for e in res.epochs] == [
        (1, 0.75, 0.75, 0, 0), (2, 0.75, 0.5, 1, 0)]
    assert [(d.sample_id, d.values_a, d.values_b) for d in res.differing] == [("s3", [1.0, 1.0], [1.0, 0.0])]


def test_compare_pools_both_epochs_by_default(warehouse: Path, tmp_path: Path) -> None:
    soup = _page(warehouse, tmp_path / "c.html", "compare", "--models", f"{ALPHA},{BETA}")
    text = soup.get_text(" ", strip=True)
    assert f"A = {ALPHA} (2 runs pooled: epoch 1, epoch 2)" in text
    assert "condition" not in soup.find("nav").find_next("p").get_text()  # Inspect runs have no condition
    assert f"A: 2 runs of {ALPHA} pooled (epoch 1, epoch 2), values on 4 items" in text
    assert "mean A 0.750, B 0.625, A − B = +0.125" in text
    paired = _rows(_table(soup, "paired"))
    assert paired["sign-flip permutation"] == ["4", "1", "0", "3", "–", "–", "1.00"]
    assert paired["Wilcoxon signed-rank"][:5] == ["4", "1", "0", "3", "0.125"]
    assert "exact: all 2 sign vectors of the 1 non-zero difference" in text
    epochs = _rows(_table(soup, "epochs"))
    assert epochs["epoch 1"] == ["0.750", "4", "0.750", "4", "4", "+0.000", "exact McNemar", "1.00"]
    assert epochs["epoch 2"] == ["0.750", "4", "0.500", "4", "4", "+0.250", "exact McNemar", "1.00"]
    assert epochs["pooled"] == ["0.750", "4", "0.625", "4", "4", "+0.125", "sign-flip permutation", "1.00"]
    differing = _table(soup, "differing")
    assert differing[1:] == [["s3", "1 | 1", "1.000", "1 | 0", "0.500", "+0.500", "A"]]  # A better (higher utility)
    link = soup.find(id="differing").find_next("table").find("a")["href"]
    assert (tmp_path / link).exists()
    # per-run tables have a column per epoch of each side
    assert _rows(_table(soup, "outcomes"))["items"] == ["4", "4", "4", "4"]
    # four runs: the terminations table has no Δ column, nor does its caption speak of one
    assert "Δ" not in " ".join(_table(soup, "terminations")[0]) + soup.find(id="terminations").find_next("p").get_text()


def test_compare_draws_budget_curves_of_inspect_runs(warehouse: Path, tmp_path: Path) -> None:
    """Budget curves from the samples' tokens and turns: at the largest cap each epoch's mean of the primary score
    over its 4 samples (s4 ended at the token limit and never counts): 3/4 for alpha's epochs and beta's first,
    2/4 for beta's second, with Wilson intervals (3 of 4: [0.301, 0.954]; 2 of 4: [0.150, 0.850])."""
    soup = _page(warehouse, tmp_path / "c.html", "compare", "--models", f"{ALPHA},{BETA}")
    note = " ".join(soup.find(id="budget-curves").find_next("p").get_text(" ", strip=True).split())
    assert note.count("4 for ") == 4 and "each item its own unit (not clustered)" in note
    assert "would have behaved differently" in note and "No curve for" not in note
    rows = _table(soup, "budget-curves")
    axes = {r[0] for r in rows[1:]}
    assert {"cap on tokens per item", "cap on turns"} <= axes and "cap on tool points" not in axes
    last_tokens = [r for r in rows[1:] if r[0] == "cap on tokens per item"][-1][2:]
    assert sorted(last_tokens) == ["0.500 [0.150, 0.850]"] + ["0.750 [0.301, 0.954]"] * 3


@pytest.mark.parametrize("flag", ["--epoch", "--replicate"])
def test_one_epoch_with_epoch_or_replicate(warehouse: Path, tmp_path: Path, flag: str) -> None:
    soup = _page(warehouse, tmp_path / "c.html", "compare", "--models", f"{ALPHA},{BETA}", flag, "2")
    text = soup.get_text(" ", strip=True)
    assert ", epoch 2)" in text and "pooled" not in soup.find(id="summary").find_next("ul").get_text()
    paired = _rows(_table(soup, "paired"))
    assert paired["exact McNemar on utility (1 or 0)"][:5] == ["4", "1", "0", "+25.0", "1.00"]


def test_an_epoch_the_models_lack_and_a_condition_are_handled(warehouse: Path, tmp_path: Path) -> None:
    proc = _run(warehouse, "agenthop-report", "compare", "--models", f"{ALPHA},{BETA}", "--epoch", "3",
                "--out", str(tmp_path / "c.html"))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert f"model '{ALPHA}' has no epoch 3 (it has epochs: 1, 2)" in proc.stderr
    assert not (tmp_path / "c.html").exists()
    # a benchmark without conditions ignores --condition
    _page(warehouse, tmp_path / "c2.html", "compare", "--models", f"{ALPHA},{BETA}", "--condition", "closed_book")


def test_runs_without_a_condition_compare_the_same(warehouse: Path, tmp_path: Path) -> None:
    """Imported runs carry condition '' (newer warehouses) or 'full' (older ones): the same page."""
    copy = tmp_path / "blank.duckdb"
    copy.write_bytes(warehouse.read_bytes())
    con = duckdb.connect(str(copy))
    con.execute("UPDATE main.run_summary SET condition = ''")
    con.close()
    texts = []
    for db in (warehouse, copy):
        soup = _page(db, tmp_path / f"{db.stem}.html", "compare", "--models", f"{ALPHA},{BETA}")
        texts.append(_table(soup, "epochs"))
    assert texts[0] == texts[1]


def test_reruns_page_speaks_of_epochs(warehouse: Path, tmp_path: Path) -> None:
    soup = _page(warehouse, tmp_path / "r.html", "reruns", "--model", BETA)
    text = soup.get_text(" ", strip=True)
    assert "2 epochs" in text and "Epochs compared pairwise" in text and "1 of 2 epochs" in text
    assert "replicate" not in text.split("Definitions The definitions")[0].lower()
    assert f"{BETA} · epoch 1" in text and f"{BETA} · epoch 2" in text


@pytest.mark.parametrize("page", ["compare", "reruns", "item"])
def test_inspect_pages_speak_of_scores_not_right_answers(warehouse: Path, tmp_path: Path, page: str) -> None:
    """An Inspect score of 1 is what the scorer gave (a security "C" is the bad outcome): the pages name the
    value by its metric ("utility = 1"), never right, wrong or correct, outside the definitions appendix quoted
    from the docs."""
    args = {"compare": ("compare", "--models", f"{ALPHA},{BETA}"), "reruns": ("reruns", "--model", BETA),
            "item": ("item", "s3", "--models", f"{ALPHA},{BETA}")}[page]
    soup = _page(warehouse, tmp_path / f"{page}.html", *args)
    for d in soup.select("section.definition"):
        d.decompose()
    text = " ".join(soup.get_text(" ", strip=True).split())
    for word in ("right", "wrong", "correct", "correctness"):
        assert f" {word} " not in f" {text} ".replace(".", " ").replace(",", " ").replace(")", " "), (page, word)
    expected = {"compare": "Share with utility = 1 = the share of final trajectories whose value is 1",
                "reruns": "(b = first utility = 1 only, c = second utility = 1 only)",
                "item": f"{ALPHA} utility = 1 score 1.000"}[page]
    assert expected in text
    if page == "reruns":
        assert "1 changed utility (1 or 0) between epochs" in text and "(✓ utility = 1, ✗ utility = 0, · no trajectory)" in text


def test_leaderboard_on_an_inspect_only_warehouse(warehouse: Path, tmp_path: Path) -> None:
    for args in ([], ["--benchmark", "inspect:toolbox"]):
        soup = _page(warehouse, tmp_path / "lb.html", "leaderboard", *args)
        text = soup.get_text(" ", strip=True)
        assert "is empty" not in text and "Table 2" not in text
        rows = _table(soup, soup.find("h2").get("id"))
        assert rows[0][:5] == ["model", "score", "95% interval", "samples", "epochs"]
        body = {r[0]: r[1:] for r in rows[1:]}
        assert list(body) == [ALPHA, BETA]  # best first
        assert [body[ALPHA][0], body[ALPHA][2], body[ALPHA][3]] == ["0.750", "4 of 4", "2"]
        assert [body[BETA][0], body[BETA][2], body[BETA][3]] == ["0.625", "4 of 4", "2"]
        # one of four items hit the token limit in every run
        assert body[ALPHA][-3:] == ["75.0", "25.0", "0.0"]
    proc = _run(warehouse, "agenthop-report", "leaderboard", "--benchmark", "nope", "--out", str(tmp_path / "x.html"))
    assert proc.returncode == 2 and "inspect:toolbox" in proc.stderr


@pytest.mark.parametrize(("command", "covers"), [("paper", "agenthop"), ("sciexplore", "sciexplore")])
def test_benchmark_specific_commands_refuse_in_one_line(warehouse: Path, tmp_path: Path, command: str,
                                                        covers: str) -> None:
    out = tmp_path / command
    proc = _run(warehouse, "agenthop-report", command, "--out", str(out))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: {command} covers benchmark {covers}, but warehouse {warehouse} holds runs of inspect:toolbox only; "
        "for those use agenthop-report leaderboard, compare or reruns"]
    assert not out.exists() and "empty" not in proc.stderr


def test_definitions_appendix_holds_what_the_page_links(warehouse: Path, tmp_path: Path) -> None:
    pages = {
        "compare": ("compare", "--models", f"{ALPHA},{BETA}"),
        "reruns": ("reruns", "--model", BETA),
        "leaderboard": ("leaderboard",),
    }
    for name, args in pages.items():
        soup = _page(warehouse, tmp_path / f"{name}.html", *args)
        entries = soup.find_all("section", class_="definition")
        assert entries, name
        linked = {a["href"][1:] for a in soup.find_all("a", class_="def")}
        assert {e["id"] for e in entries} <= linked, name
        appendix = " ".join(e.get_text(" ", strip=True) for e in entries)
        for agenthop_only in ("AgentHop", "paper recall", "section_recall", "Table 17", "conversion", "ST and MT"):
            assert agenthop_only not in appendix, (name, agenthop_only)


# --- in a real browser ---------------------------------------------------------------------------------

from test_report_browser import LEGEND_CLIPPED_JS, _open, browser  # noqa: E402,F401 (fixture)


@pytest.mark.browser
@pytest.mark.parametrize("width", (1024, 1440))
def test_pages_of_an_inspect_only_warehouse_in_chromium(warehouse: Path, browser, tmp_path: Path,  # noqa: F811
                                                        width: int) -> None:
    pages = {
        "compare": ("compare", "--models", f"{ALPHA},{BETA}"),
        "reruns": ("reruns", "--model", BETA),
        "leaderboard": ("leaderboard",),
    }
    ARTIFACTS.mkdir(exist_ok=True)
    for name, args in pages.items():
        out = tmp_path / f"{name}.html"
        _page(warehouse, out, *args)
        page, errors, blocked, _ = _open(browser, out, width)
        try:
            assert errors == [] and blocked == [], (name, errors, blocked)
            scroll = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert scroll <= 0, f"{name} scrolls sideways by {scroll}px at {width}px"
            # four runs (two models, two epochs) name every legend entry in full, also in the half-width charts
            clipped = page.evaluate(LEGEND_CLIPPED_JS)
            assert not clipped, f"{name} at {width}px: legend labels beyond their chart: {clipped}"
            page.screenshot(path=str(ARTIFACTS / f"inspect-only-{name}-{width}.png"), full_page=True)
        finally:
            page.close()
