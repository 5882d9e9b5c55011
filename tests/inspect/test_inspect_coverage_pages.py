"""Honest denominators, pass@k and all tokens on the pages of an Inspect-only warehouse.

The toolbox logs (inspect_fixtures.py), alpha's log cancelled before its sample s2 of epoch 1 finished. Hand computation:
utility is 1 on s1-s3 and 0 on s4 for alpha in both epochs and for beta in epoch 1; beta scores s3 0 in
epoch 2.
- alpha, epoch 1 answered 3 of 4 samples (s2 missing). Pooled per item: s1 1, s2 1 (epoch 2 only), s3 1,
  s4 0: mean 0.750 over all 4 samples, one missing in one of two epochs. Intention-to-treat (s2 of epoch 1
  as 0, the worst utility): epoch 1 (1 + 0 + 1 + 0) / 4 = 0.5, epoch 2 3 / 4 = 0.75: 0.625.
- pass@k of alpha: k = 1 over 4 samples (1 + 1 + 1 + 0) / 4 = 0.750; k = 2 over the 3 with two epochs
  (s1 2 of 2, s3 2 of 2, s4 0 of 2): pass@2 = pass^2 = 2 / 3. beta (c of 2: 2, 2, 1, 0): pass@1 = 0.625,
  pass@2 = (1 + 1 + 1 + 0) / 4 = 0.750, pass^2 = (1 + 1 + 0 + 0) / 4 = 0.500.
- Tokens: every figure is all tokens, Inspect's total_tokens (alpha's cache reads included).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

from inspect_fixtures import inspect_logs  # noqa: E402,F401  (the session's logs)
from conftest import run_dbt_build  # noqa: E402
from test_inspect_pooled_reports import _page, _run  # noqa: E402  (the commands as a user runs them)

ALPHA, BETA = "mockllm/alpha", "mockllm/beta"


def _usage(inspect_logs) -> dict[tuple[str, int, str], int]:  # noqa: F811
    """(model, epoch, sample) -> the log's total_tokens of the sample (every model it called)."""
    from inspect_ai.log import read_eval_log

    out = {}
    for path in inspect_logs.json_logs:
        log = read_eval_log(str(path))
        for s in log.samples or []:
            out[(log.eval.model, s.epoch, str(s.id))] = sum(u.total_tokens for u in s.model_usage.values())
    return out


@pytest.fixture(scope="module")
def warehouse(inspect_logs, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    work = tmp_path_factory.mktemp("inspect-partial")
    logs = work / "logs"
    logs.mkdir()
    alpha, beta = inspect_logs.json_logs
    # alpha's eval was cancelled before its sample s2 of epoch 1 finished
    doc = json.loads(alpha.read_text())
    doc["samples"] = [s for s in doc["samples"] if (s["id"], s["epoch"]) != ("s2", 1)]
    doc["status"] = "cancelled"
    (logs / alpha.name).write_text(json.dumps(doc, allow_nan=True))
    (logs / beta.name).write_bytes(beta.read_bytes())
    db = work / "w.duckdb"
    proc = _run(db, "agenthop-ingest", "--db", str(db), "--inspect-log", str(logs))
    assert proc.returncode == 0, proc.stderr
    build = run_dbt_build(db, work / "dbt", "--exclude", "resource_type:unit_test")  # work/logs: the Inspect logs
    assert build.returncode == 0, build.stdout[-3000:]
    return db


def _cells(table) -> list[list[str]]:  # noqa: ANN001
    return [[c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"])] for tr in table.find_all("tr")]


def _after(soup: BeautifulSoup, heading: str, nth: int = 0):  # noqa: ANN202
    h = soup.find(lambda t: t.name in ("h2", "h3") and t.get_text(" ", strip=True).startswith(heading))
    assert h is not None, heading
    return h.find_all_next("table")[nth]


def test_reruns_page_shows_pass_k_as_computed_by_hand(warehouse: Path, tmp_path: Path) -> None:
    expected = {
        ALPHA: [["1", "4", "0.750"], ["2", "3", "0.667"]],
        BETA: [["1", "4", "0.625"], ["2", "4", "0.750"]],
    }
    hat = {ALPHA: ["0.750", "0.667"], BETA: ["0.625", "0.500"]}
    for model in (ALPHA, BETA):
        soup = _page(warehouse, tmp_path / "r.html", "reruns", "--model", model)
        rows = _cells(_after(soup, "pass@k and pass^k"))
        assert rows[0] == ["k", "n", "pass@k", "95% interval", "pass^k", "95% interval"]
        assert [r[:3] for r in rows[1:]] == expected[model]
        assert [r[4] for r in rows[1:]] == hat[model]
        for r in rows[1:]:  # each interval holds its value
            for value, interval in ((r[2], r[3]), (r[4], r[5])):
                lo, hi = (float(x) for x in interval.strip("[]").split(", "))
                assert lo <= float(value) <= hi


def test_a_partial_epoch_states_its_coverage_in_the_headline(warehouse: Path, tmp_path: Path) -> None:
    soup = _page(warehouse, tmp_path / "r.html", "reruns", "--model", ALPHA)
    h2 = soup.find("h2", string=lambda s: s and "2 epochs" in s)
    line = h2.find_next_sibling()
    assert line.get_text(" ", strip=True) == "epoch 1: answered 3 of 4 samples (1 missing)"
    rows = _cells(h2.find_next("table"))
    assert rows[0][2] == "samples" and [r[2] for r in rows[1:]] == ["3 of 4", "4 of 4"]
    # a complete model: no coverage line
    beta = _page(warehouse, tmp_path / "b.html", "reruns", "--model", BETA)
    assert not beta.select(".coverage")


def test_leaderboard_shows_coverage_and_the_intention_to_treat_value(warehouse: Path, tmp_path: Path) -> None:
    soup = _page(warehouse, tmp_path / "lb.html", "leaderboard")
    rows = _cells(soup.find("h2").find_next("table"))
    assert rows[0][:7] == ["model", "score", "95% interval", "samples", "ITT", "epochs", "all tokens / sample"]
    body = {r[0]: r[1:] for r in rows[1:]}
    assert body[ALPHA][0] == "0.750 answered all 4 samples (1 missing in 1 of 2 epochs)"
    assert body[ALPHA][2:4] == ["4 of 4", "0.625"]
    assert body[BETA][0] == "0.625" and body[BETA][2:4] == ["4 of 4", "–"]
    caption = " ".join(soup.find("h2").find_next("p").get_text(" ", strip=True).split())
    assert "Means are over the items with a value (per-protocol)" in caption
    assert "intention-to-treat" in caption and "all tokens (incl. cache reads)" in caption


def test_token_figures_are_all_tokens_the_logs_total_tokens(inspect_logs, warehouse: Path,  # noqa: F811
                                                            tmp_path: Path) -> None:
    usage = _usage(inspect_logs)
    del usage[(ALPHA, 1, "s2")]  # the sample the fixture's log lost
    per_model = {m: [v for (mm, _, _), v in usage.items() if mm == m] for m in (ALPHA, BETA)}
    # alpha's cached answer: its all tokens exceed the cap's quantity, so the page must show the former
    soup = _page(warehouse, tmp_path / "lb.html", "leaderboard")
    body = {r[0]: r[1:] for r in _cells(soup.find("h2").find_next("table"))[1:]}
    for model, vals in per_model.items():
        assert body[model][5] == f"{sum(vals) / len(vals):,.0f}", model
    for model in (ALPHA, BETA):
        page = _page(warehouse, tmp_path / "r.html", "reruns", "--model", model)
        spread = {r[0]: r[1:] for r in _cells(_after(page, "Spread over the epochs"))}
        row = spread["all tokens (incl. cache reads) per item"]
        for epoch in (1, 2):
            vals = [v for (m, e, _), v in usage.items() if m == model and e == epoch]
            assert row[epoch - 1] == f"{sum(vals) / len(vals):,.0f}", (model, epoch)


def test_compare_states_coverage_and_lists_what_the_paired_test_leaves_out(warehouse: Path, tmp_path: Path) -> None:
    soup = _page(warehouse, tmp_path / "c.html", "compare", "--models", f"{ALPHA},{BETA}", "--epoch", "1")
    summary = " ".join(soup.find(id="summary").find_next("ul").get_text(" ", strip=True).split())
    # epoch 1: alpha (1 + 1 + 0) / 3 over its 3 samples; intention-to-treat (1 + 0 + 1 + 0) / 4 = 0.5
    assert "Coverage: A answered 3 of 4 samples (1 missing) ; B answered all 4 samples" in summary
    assert "Intention-to-treat: A 0.500, B 0.750." in summary
    left = " ".join(soup.find(id="left-out").get_text(" ", strip=True).split())
    assert left == ("Left out of the paired test (1 of the samples, without a value on both sides): "
                    "missing on A: s2.")
    # pooled: every sample has a value on each side, one of alpha's is missing in one epoch
    pooled = _page(warehouse, tmp_path / "p.html", "compare", "--models", f"{ALPHA},{BETA}")
    summary = " ".join(pooled.find(id="summary").find_next("ul").get_text(" ", strip=True).split())
    assert "A answered all 4 samples (1 missing in 1 of 2 epochs)" in summary
    assert "Intention-to-treat: A 0.625, B 0.625." in summary and pooled.find(id="left-out") is None


def test_compare_compares_tokens_on_all_tokens(inspect_logs, warehouse: Path, tmp_path: Path) -> None:  # noqa: F811
    usage = _usage(inspect_logs)
    del usage[(ALPHA, 1, "s2")]
    soup = _page(warehouse, tmp_path / "c.html", "compare", "--models", f"{ALPHA},{BETA}")
    rows = {r[0]: r[1:] for r in _cells(soup.find(id="resources").find_next("table"))}
    expected = []
    for model in (ALPHA, BETA):
        for epoch in (1, 2):
            vals = [v for (m, e, _), v in usage.items() if m == model and e == epoch]
            expected.append(f"{sum(vals) / len(vals):,.0f}")
    assert rows["all tokens (incl. cache reads) per item, mean"] == expected
    # alpha's cache reads make it the larger user of tokens, which the caps' quantity hides
    caps = rows["total tokens (caps' quantity) per item, mean"]
    assert float(expected[1].replace(",", "")) > float(expected[3].replace(",", ""))
    assert float(caps[1].replace(",", "")) < float(caps[3].replace(",", ""))
