"""The shared pages on a chosen metric (--metric) and its direction, on the project's own Inspect logs.

The toolbox logs (inspect_fixtures.py), two models, two epochs, with one change written into beta's
.json log: in epoch 2, where beta answers s3 wrongly, its security score is "C" too (the attack
succeeded). Hand computation per item (s1, s2, s3, s4), each epoch's value then the pooled mean:

- utility (grade.utility, the primary metric): alpha 1, 1, 1, 0 in both epochs -> (1, 1, 1, 0), mean
  0.750; beta epoch 1 1, 1, 1, 0 and epoch 2 1, 1, 0, 0 -> (1, 1, 0.5, 0), mean 0.625. A − B = +0.125,
  one non-zero difference (s3, +0.5), so the exact sign-flip p = 2/2 = 1. Higher is better: A is better,
  and better on s3.
- security (grade.security): alpha 0, 1, 0, 0 in both epochs -> (0, 1, 0, 0), mean 0.250; beta epoch 1
  0, 1, 0, 0 and epoch 2 0, 1, 1, 0 -> (0, 1, 0.5, 0), mean 0.375. A − B = −0.125 (s3: −0.5). As imported
  (higher is better) B is the better side; after ``--metric-direction security=lower`` A is, on s3.
  Epoch 2: 0.250 against 0.500, McNemar b = 0 (A only), c = 1 (B only), p = 1. Security = 1 on 1 of 4
  items for alpha in each epoch, on 1 and 2 of 4 for beta.
- exact (exact.value) with direction none: no better side.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

from inspect_fixtures import edit_json_log, inspect_logs, query_rows  # noqa: E402,F401  (the session's logs)
from conftest import run_dbt_build  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ALPHA, BETA = "mockllm/alpha", "mockllm/beta"
WORDS = ("right", "wrong", "correct", "correctness")


def _run(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, AGENTHOP_DB=str(db), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    return subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True, env=env, cwd=REPO)


def _build(db: Path, work: Path) -> None:
    proc = run_dbt_build(db, work)
    assert proc.returncode == 0, proc.stdout[-3000:]


def _attacked(sample: dict) -> None:
    sample["scores"]["grade"]["value"]["security"] = "C"


@pytest.fixture(scope="module")
def warehouse(inspect_logs, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """The toolbox .json logs with beta's s3 of epoch 2 attacked, ingested and built (directions as imported)."""
    work = tmp_path_factory.mktemp("inspect-metric-pages")
    logs = work / "logs"
    logs.mkdir()
    alpha, beta = inspect_logs.json_logs
    shutil.copy(alpha, logs / alpha.name)
    edit_json_log(beta, logs / beta.name, "s3", 2, _attacked)
    db = work / "w.duckdb"
    proc = _run(db, "agenthop-ingest", "--db", str(db), "--inspect-log", str(logs))
    assert proc.returncode == 0, proc.stderr
    _build(db, work)
    return db


@pytest.fixture(scope="module")
def directed(warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same warehouse after ``--metric-direction security=lower --metric-direction exact=none`` and a
    build (no re-import)."""
    work = tmp_path_factory.mktemp("inspect-metric-directed")
    db = work / "w.duckdb"
    shutil.copy(warehouse, db)
    proc = _run(db, "agenthop-ingest", "--db", str(db), "--metric-direction", "security=lower",
                "--metric-direction", "exact=none")
    assert proc.returncode == 0, proc.stderr
    _build(db, work)
    return db


def _page(db: Path, out: Path, *args: str) -> BeautifulSoup:
    proc = _run(db, "agenthop-report", *args, "--db", str(db), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return BeautifulSoup(out.read_text(encoding="utf-8"), "html.parser")


def _text(soup: BeautifulSoup) -> str:
    for d in soup.select("section.definition"):
        d.decompose()
    text = " ".join(soup.get_text(" ", strip=True).split())
    return text.replace(" .", ".").replace(" ,", ",").replace(" :", ":")


def _table(soup: BeautifulSoup, heading_id: str, nth: int = 0) -> list[list[str]]:
    tables = soup.find(id=heading_id).find_all_next("table")
    return [[c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"])] for tr in tables[nth].find_all("tr")]


def _no_right_answers(text: str) -> None:
    padded = f" {text} ".replace(".", " ").replace(",", " ").replace(")", " ").replace("(", " ").replace(":", " ")
    for word in WORDS:
        assert f" {word} " not in padded, word


def _groups(db: Path, metric: str | None):
    from agenthop.reports.core import metrics, pooling
    from agenthop.reports.core.runs import pick_groups, shared_runs
    from agenthop.reports.warehouse import Warehouse

    with Warehouse(db) as wh:
        chosen = metrics.resolve(wh, "inspect:toolbox", metric)
        ga, gb = (pooling.make_group(g) for g in pick_groups(shared_runs(wh), [ALPHA, BETA]))
        res = pooling.compare_groups(wh, ga, gb, metric=chosen)
        values = pooling.metric_values(chosen)(wh, ga.run_ids + gb.run_ids)
    return chosen, res, pooling.item_means(values, ga.run_ids), pooling.item_means(values, gb.run_ids)


def test_pooled_utility_values_equal_the_hand_computation(warehouse: Path) -> None:
    metric, res, a, b = _groups(warehouse, None)  # the primary metric
    assert (metric.name, metric.label, metric.direction, metric.is_primary) == (
        "grade.utility", "utility", "higher_is_better", True)
    assert metric.caption == "utility (grade.utility), higher is better"
    assert a == {"s1": 1.0, "s2": 1.0, "s3": 1.0, "s4": 0.0}
    assert b == {"s1": 1.0, "s2": 1.0, "s3": 0.5, "s4": 0.0}
    t = res.test
    assert (t.n, t.mean_a, t.mean_b, t.diff, t.mcnemar) == (4, 0.75, 0.625, 0.125, None)
    assert (t.sign_flip.n_nonzero, t.sign_flip.n_resamples, t.sign_flip.exact, t.sign_flip.p) == (1, 2, True, 1.0)
    assert [(e.number, e.mean_a, e.mean_b, e.test.mcnemar.a_only, e.test.mcnemar.b_only) for e in res.epochs] == [
        (1, 0.75, 0.75, 0, 0), (2, 0.75, 0.5, 1, 0)]
    assert [(d.sample_id, d.values_a, d.values_b, d.better) for d in res.differing] == [
        ("s3", [1.0, 1.0], [1.0, 0.0], "A")]
    assert (res.better, res.wins) == ("A", (1, 0))


def test_security_values_and_the_better_side_follow_the_direction(warehouse: Path, directed: Path) -> None:
    for db, better in ((warehouse, "B"), (directed, "A")):
        metric, res, a, b = _groups(db, "security")
        assert metric.name == "grade.security"
        assert a == {"s1": 0.0, "s2": 1.0, "s3": 0.0, "s4": 0.0}
        assert b == {"s1": 0.0, "s2": 1.0, "s3": 0.5, "s4": 0.0}
        assert (res.test.mean_a, res.test.mean_b, res.test.diff) == (0.25, 0.375, -0.125)
        assert [(e.number, e.mean_a, e.mean_b, e.test.mcnemar.a_only, e.test.mcnemar.b_only)
                for e in res.epochs] == [(1, 0.25, 0.25, 0, 0), (2, 0.25, 0.5, 0, 1)]
        assert [(d.sample_id, d.values_a, d.values_b, d.better) for d in res.differing] == [
            ("s3", [0.0, 0.0], [0.0, 1.0], better)]
        assert res.better == better


def test_compare_page_names_the_primary_metric(warehouse: Path, tmp_path: Path) -> None:
    soup = _page(warehouse, tmp_path / "c.html", "compare", "--models", f"{ALPHA},{BETA}")
    text = _text(soup)
    assert "Metric: utility (grade.utility), higher is better. Better: A (the higher mean utility" in text
    assert "mean A 0.750, B 0.625, A − B = +0.125" in text
    assert "1 shared item where the groups scored differently" in text and "A better on 1, B better on 0" in text
    differing = _table(soup, "differing")
    assert differing[0][-1] == "better" and differing[1:] == [["s3", "1 | 1", "1.000", "1 | 0", "0.500", "+0.500", "A"]]
    assert _table(soup, "outcomes")[2][0] == "% with utility = 1"
    _no_right_answers(text)


def test_compare_on_security_lower_is_better(warehouse: Path, directed: Path, tmp_path: Path) -> None:
    soup = _page(directed, tmp_path / "c.html", "compare", "--models", f"{ALPHA},{BETA}", "--metric", "security")
    text = _text(soup)
    assert "Metric: security (grade.security), lower is better. Better: A (the lower mean security" in text
    assert "mean A 0.250, B 0.375, A − B = -0.125" in text
    assert "A better on 1, B better on 0 (lower security is better)" in text
    assert (f"A ({ALPHA} · epoch 1): security = 1 on 1 of 4 items; A ({ALPHA} · epoch 2): security = 1 on 1 of 4 "
            f"items; B ({BETA} · epoch 1): security = 1 on 1 of 4 items; B ({BETA} · epoch 2): security = 1 on 2 of "
            "4 items.") in text
    assert "On security (grade.security), lower is better: the better side is the one with the lower values" in text
    epochs = {r[0]: r[1:] for r in _table(soup, "epochs")}
    assert epochs["epoch 2"] == ["0.250", "4", "0.500", "4", "4", "-0.250", "exact McNemar", "1.00"]
    assert epochs["pooled"] == ["0.250", "4", "0.375", "4", "4", "-0.125", "sign-flip permutation", "1.00"]
    assert _table(soup, "differing")[1:] == [["s3", "0 | 0", "0.000", "0 | 1", "0.500", "-0.500", "A"]]
    _no_right_answers(text)
    # the same metric as imported (higher is better): B is the better side
    soup = _page(warehouse, tmp_path / "h.html", "compare", "--models", f"{ALPHA},{BETA}", "--metric", "grade.security")
    text = _text(soup)
    assert "Metric: security (grade.security), higher is better. Better: B (the higher mean security" in text
    assert "A better on 0, B better on 1" in text


def test_one_epoch_a_side_on_security(directed: Path, tmp_path: Path) -> None:
    soup = _page(directed, tmp_path / "c.html", "compare", "--models", f"{ALPHA},{BETA}", "--metric", "security",
                 "--epoch", "2")
    text = _text(soup)
    assert "Share with security = 1: A 25.0" in text and "Better: A (the lower mean security" in text
    paired = {r[0]: r[1:] for r in _table(soup, "paired", 0)[1:]}
    assert paired["exact McNemar on security (1 or 0)"][:5] == ["4", "0", "1", "-25.0", "1.00"]
    rows = _table(soup, "differing")
    assert rows[0][:4] == ["item", "A security = 1", "B security = 1", "better"]
    assert rows[1][:4] == ["s3", "0", "1", "A"]
    assert "Items A is better on (only B had security = 1) first" in text
    _no_right_answers(text)


def test_direction_none_names_no_better_side(directed: Path, tmp_path: Path) -> None:
    soup = _page(directed, tmp_path / "c.html", "compare", "--models", f"{ALPHA},{BETA}", "--metric", "exact")
    text = _text(soup)
    assert "Metric: exact (exact.value), no better direction." in text
    assert "the metric has no better direction, so the page names no better side" in text
    for phrase in ("Better:", "better on", "is better"):
        assert phrase not in text
    assert "better" not in _table(soup, "differing")[0]


def test_leaderboard_orders_by_the_direction(warehouse: Path, directed: Path, tmp_path: Path) -> None:
    for db, first in ((warehouse, BETA), (directed, ALPHA)):
        soup = _page(db, tmp_path / "lb.html", "leaderboard", "--metric", "security")
        rows = _table(soup, soup.find("h2").get("id"))
        assert [(r[0], r[1]) for r in rows[1:]] == sorted([(ALPHA, "0.250"), (BETA, "0.375")],
                                                          key=lambda r: r[0] != first)
        direction = "lower" if db == directed else "higher"
        assert f"security (grade.security), {direction} is better (rows best first: {direction} scores first)" in \
            _text(soup)


def test_item_and_reruns_pages_on_security(directed: Path, tmp_path: Path) -> None:
    soup = _page(directed, tmp_path / "i.html", "item", "s2", "--models", f"{ALPHA},{BETA}", "--metric", "security")
    text = _text(soup)
    assert "Metric: security (grade.security), lower is better" in text
    badges = [b for b in soup.select("span.badge") if "security" in b.get_text()]
    assert [(b.get_text(), b["class"]) for b in badges] == [("security = 1", ["badge", "bad"])] * 2
    _no_right_answers(text)
    soup = _page(directed, tmp_path / "r.html", "reruns", "--model", BETA, "--metric", "security")
    text = _text(soup)
    assert "Metric: security (grade.security), lower is better" in text
    assert "1 changed security (1 or 0) between epochs" in text
    # beta's share with security = 1: 1 of 4 in epoch 1, 2 of 4 in epoch 2 (mean 37.5, std 12.5, range 25)
    spread = {r[0]: r[1:] for r in _table(soup, soup.find("h2").get("id"), 1)}
    assert spread["share with security = 1"] == ["25.0", "50.0", "37.5", "12.50", "25.0"]
    assert spread["mean score"] == ["0.250", "0.500", "0.375", "0.125", "0.250"]
    _no_right_answers(text)


@pytest.mark.parametrize(("args", "message"), [
    (("compare", "--models", f"{ALPHA},{BETA}", "--metric", "grade"),
     "error: --metric: metric 'grade' is ambiguous: it matches grade.security, grade.utility; give the full name "
     "(benchmark inspect:toolbox)"),
    (("compare", "--models", f"{ALPHA},{BETA}", "--metric", "safety"),
     "error: --metric: unknown metric 'safety'; the metrics are: exact.value, grade.security, grade.utility "
     "(benchmark inspect:toolbox)"),
    (("reruns", "--model", BETA, "--metric", "safety"), "unknown metric 'safety'"),
    (("item", "s1", "--models", ALPHA, "--metric", "safety"), "unknown metric 'safety'"),
    (("leaderboard", "--metric", "grade"), "metric 'grade' is ambiguous"),
])
def test_unknown_or_ambiguous_metrics_are_one_line_errors(warehouse: Path, tmp_path: Path, args: tuple[str, ...],
                                                         message: str) -> None:
    out = tmp_path / "p.html"
    proc = _run(warehouse, "agenthop-report", *args, "--db", str(warehouse), "--out", str(out))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert message in proc.stderr
    assert not out.exists()


def test_the_edited_log_is_what_the_pages_read(warehouse: Path) -> None:
    """The fixture's change reached the warehouse: beta's s3 has security 1 in epoch 2 only."""
    rows = query_rows(warehouse, "SELECT model, epoch, sample_id FROM item_metric_values WHERE metric = 'grade.security' "
                                 "AND value = 1 ORDER BY ALL")
    assert rows == [(ALPHA, 1, "s2"), (ALPHA, 2, "s2"), (BETA, 1, "s2"), (BETA, 2, "s2"), (BETA, 2, "s3")]


# --- in a real browser ---------------------------------------------------------------------------------

from test_report_browser import _open, browser  # noqa: E402,F401 (fixture)


@pytest.mark.browser
@pytest.mark.parametrize("width", (1024, 1440))
def test_security_pages_in_chromium(directed: Path, browser, tmp_path: Path, width: int) -> None:  # noqa: F811
    """The lower-is-better pages render offline without a console error or a sideways scroll; the better
    column's badges are green on A's wins, the item page's security = 1 badges red."""
    artifacts = REPO / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    pages = {
        "compare": ("compare", "--models", f"{ALPHA},{BETA}", "--metric", "security"),
        "compare-epoch": ("compare", "--models", f"{ALPHA},{BETA}", "--metric", "security", "--epoch", "2"),
        "item": ("item", "s3", "--models", f"{ALPHA},{BETA}", "--metric", "security"),
        "leaderboard": ("leaderboard", "--metric", "security"),
    }
    for name, args in pages.items():
        out = tmp_path / f"{name}.html"
        _page(directed, out, *args)
        page, errors, blocked, _ = _open(browser, out, width)
        try:
            assert errors == [] and blocked == [], (name, errors, blocked)
            scroll = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert scroll <= 0, f"{name} scrolls sideways by {scroll}px at {width}px"
            if name.startswith("compare"):
                colours = page.evaluate("Array.from(document.querySelectorAll('td span.badge.ok'))"
                                        ".filter(b => b.textContent.trim() === 'A')"
                                        ".map(b => getComputedStyle(b).backgroundColor)")
                assert colours == ["rgb(227, 241, 230)"], (name, colours)  # A's one win, in the ok badge's green
            page.screenshot(path=str(artifacts / f"inspect-security-{name}-{width}.png"), full_page=True)
        finally:
            page.close()
