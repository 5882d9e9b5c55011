"""`agenthop-report paper` on the simulated paper19 panel: the CSV contract, the statistics and the pages.

One warehouse per session (tests/paper_fixtures.py: 19 models, closed-book and no-search runs for three of
them, three replicates of one, 48 items) and one report run per module. Every CSV is compared with the
marts it comes from (queried here independently), and every statistic with scipy on the same counts.
"""

from __future__ import annotations

import csv
import itertools
import math
import re
import shutil
import subprocess
import warnings
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from scipy import stats as sps

from agenthop.reports.cli import main
from conftest import built_once, worker_copy
from paper_fixtures import ABLATED, REPLICATED, PaperWarehouse, build_paper_warehouse

REPO = Path(__file__).resolve().parents[1]

#: The machine-readable contract (docs/reports.md): file -> leading columns, in order.
CONTRACT: dict[str, list[str]] = {
    "table02_main": ["model", "replicate", "tier", "family", "n_items", "accuracy", "recall_st", "recall_mt",
                     "secrec_st", "secrec_mt", "conversion_st", "conversion_mt", "calls_per_turn", "avg_tokens_k",
                     "avg_turns", "avg_budget", "max_tokens_rate", "max_turns_rate", "max_budget_rate", "na_rate"],
    "table03_wrong_read": ["model", "action", "n", "n_total", "share"],
    "table09_stopping": ["model", "scope", "category", "n", "n_scope", "share"],
    "table10_cells": ["model", "cell", "n", "correct", "accuracy", "wilson_lo", "wilson_hi"],
    "table12_mcnemar": ["panel", "axis", "model_a", "model_b", "n", "a_only", "b_only", "p_value"],
    "table13_bigrams": ["bigram", "panel_mean_effect_pp", "sig_count", "models_present"],
    "table14_trigrams": ["model", "trigram", "share"],
    "table15_terminations": ["model", "na_rate", "max_turns_rate", "max_budget_rate", "max_tokens_rate"],
    "table17_reruns": ["model", "metric", "n_runs", "mean", "std", "range", "min_value", "max_value"],
    "figure04_difficulty": ["sample_id", "cell", "n_models", "n_correct"],
    "figure05_recall_accuracy": ["model", "tier", "paper_recall", "accuracy"],
    "figure06_transitions": ["model", "prev_tool", "next_tool", "n", "p_next"],
    # the other tables and figures of the report
    "table04_conditions": ["model", "condition_from", "condition_to", "accuracy_from", "accuracy_to", "delta_pp",
                           "n", "from_only", "to_only", "p_value"],
    "table08_cost": ["model", "pricing_found", "total_usd", "usd_per_item", "closed_book_total_usd"],
    "table10_spread": ["model", "easiest_cell", "accuracy_easiest", "hardest_cell", "accuracy_hardest", "delta_pp"],
    "table10_reasoning": ["model", "reasoning_type", "n", "correct", "accuracy", "wilson_lo", "wilson_hi"],
    "table11_evidence": ["evidence_contact", "n", "n_recalled", "share", "correct", "conversion", "n_closed_book"],
    "table16_external": ["benchmark", "n_models", "spearman", "spearman_lo", "spearman_hi", "spearman_p", "pearson",
                         "pearson_lo", "pearson_hi", "pearson_p"],
    "table19_closed_book": ["tier", "slice", "value", "n_models", "n", "correct", "accuracy"],
    "figure02_generations": ["family", "step", "generation_from", "generation_to"],
    "figure04_histogram": ["by", "group", "n_correct", "n_items"],
    "reliability": ["n_models", "n_items", "alpha", "alpha_lo", "alpha_hi"],
    "budget_truncated": ["model", "axis", "b", "n_items", "n_correct", "accuracy"],
    "bigram_frequency_tests": ["model_a", "model_b", "bigram", "with_a", "n_a", "with_b", "n_b", "p_value",
                               "q_value"],
}
RATE_COLUMNS = {"accuracy", "recall_st", "recall_mt", "secrec_st", "secrec_mt", "conversion_st", "conversion_mt",
                "max_tokens_rate", "max_turns_rate", "max_budget_rate", "na_rate", "share", "wilson_lo",
                "wilson_hi", "paper_recall", "p_next", "p_value", "q_value", "conversion", "closed_book_accuracy",
                "accuracy_from", "accuracy_to", "share_a", "share_b"}


# ----------------------------------------------------------------------------------------------
# Fixtures
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def paper_wh(tmp_path_factory: pytest.TempPathFactory) -> PaperWarehouse:
    """Built once per test run (conftest.built_once: this module and test_report_browser_polish.py share it);
    each test process reads its own copy of the warehouse file."""
    work = built_once(tmp_path_factory, "paper19", build_paper_warehouse)
    return PaperWarehouse(db=worker_copy(tmp_path_factory, work / "warehouse.duckdb", "paper19-warehouse"),
                          benchmark=work / "benchmark", work=work)


def _q(db: Path, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        cur = con.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]
    finally:
        con.close()


@pytest.fixture(scope="module")
def report(paper_wh: PaperWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("paper_report")
    models = [r["model"] for r in _q(paper_wh.db, "SELECT DISTINCT model FROM model_summary ORDER BY model")]
    accs = {r["model"]: r["accuracy"] for r in _q(
        paper_wh.db, "SELECT model, accuracy FROM model_summary WHERE condition = 'full' AND replicate = 0")}
    ext = work / "external.csv"
    with ext.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "benchmark", "score", "mark"])
        for i, m in enumerate(models):
            w.writerow([m, "bench-a", round(50 + 40 * accs[m] + (i % 5), 2), "proxy" if i == 0 else ""])  # correlated
            w.writerow([m, "bench-b", (i * 37) % 19, "†" if i == 1 else ""])  # unrelated
        w.writerow(["not-in-panel", "bench-a", 10, ""])
    items = [r["sample_id"] for r in _q(paper_wh.db, "SELECT sample_id FROM raw.items ORDER BY 1")]
    cov = work / "covariates.csv"
    with cov.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["sample_id", "max_gold_citations", "note"])
        for i, sid in enumerate(items):
            w.writerow([sid, "" if i % 11 == 0 else (i * 53) % 97, f"text {i}"])
    out = work / "out"
    res = CliRunner().invoke(main, ["paper", "--db", str(paper_wh.db), "--out", str(out), "--external", str(ext),
                                    "--covariates", str(cov), "--pair", f"{models[0]},{models[1]}"])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == str(out / "index.html")
    return out


def read_csv(report: Path, name: str) -> list[dict[str, str]]:
    with (report / "tables" / f"{name}.csv").open(newline="") as fh:
        return list(csv.DictReader(fh))


def header(report: Path, name: str) -> list[str]:
    with (report / "tables" / f"{name}.csv").open(newline="") as fh:
        return next(csv.reader(fh))


def num(s: str) -> float | None:
    return None if s == "" else float(s)


def close(a: Any, b: Any, tol: float = 1e-12) -> bool:
    if a is None or b is None or a == "" or b == "":
        return (a is None or a == "") and (b is None or b == "")
    return math.isclose(float(a), float(b), rel_tol=tol, abs_tol=tol)


def panel_runs(db: Path, condition: str = "full") -> dict[str, str]:
    """model -> run id of its lowest replicate under the condition, from model_summary (not panel_members)."""
    rows = _q(db, "SELECT model, run_id, replicate FROM model_summary WHERE condition = ? ORDER BY model, replicate, run_id",
              [condition])
    out: dict[str, str] = {}
    for r in rows:
        out.setdefault(r["model"], r["run_id"])
    return out


def assert_rows_equal(csv_rows: list[dict[str, str]], mart_rows: list[dict[str, Any]], key: list[str],
                      cols: list[str]) -> None:
    """CSV rows and mart rows agree on `cols`, matched by `key` (same key sets)."""
    def k(r: dict[str, Any]) -> tuple[str, ...]:
        return tuple(str(r[c]) for c in key)

    by_csv = {k(r): r for r in csv_rows}
    by_mart = {k(r): r for r in mart_rows}
    assert set(by_csv) == set(by_mart)
    assert len(by_csv) == len(csv_rows)
    for kk, m in by_mart.items():
        c = by_csv[kk]
        for col in cols:
            v = m[col]
            if isinstance(v, bool):
                assert c[col] == ("true" if v else "false"), (kk, col)
            elif isinstance(v, (int, float)) or v is None:
                assert close(c[col], v), (kk, col, c[col], v)
            else:
                assert c[col] == str(v), (kk, col, c[col], v)


# ----------------------------------------------------------------------------------------------
# Contract
# ----------------------------------------------------------------------------------------------


def test_every_contract_file_and_its_leading_columns(report: Path) -> None:
    for name, cols in CONTRACT.items():
        assert header(report, name)[: len(cols)] == cols, name


def test_rates_are_fractions(report: Path) -> None:
    for path in sorted((report / "tables").glob("*.csv")):
        rows = read_csv(report, path.stem)
        for col in set(header(report, path.stem)) & RATE_COLUMNS:
            for r in rows:
                v = num(r[col])
                assert v is None or 0.0 <= v <= 1.0, (path.name, col, v)


def test_panel_is_each_models_lowest_replicate(paper_wh: PaperWarehouse, report: Path) -> None:
    rows = read_csv(report, "table02_main")
    runs = panel_runs(paper_wh.db)
    assert {r["model"]: r["run_id"] for r in rows} == runs
    assert len(rows) == 19
    beacon = next(r for r in rows if r["model"] == REPLICATED)
    assert beacon["replicate"] == "0"
    n_reps = _q(paper_wh.db, "SELECT count(*) AS n FROM model_summary WHERE model = ? AND condition = 'full'",
                [REPLICATED])[0]["n"]
    assert n_reps == 3


def test_table2_equals_model_summary_and_follows_the_caption(paper_wh: PaperWarehouse, report: Path) -> None:
    rows = read_csv(report, "table02_main")
    runs = list(panel_runs(paper_wh.db).values())
    mart = _q(paper_wh.db, f"SELECT *, coalesce(tier, 'untiered') AS tier FROM model_summary WHERE run_id IN "
                           f"({','.join('?' * len(runs))})", runs)
    assert_rows_equal(rows, mart, ["model"], CONTRACT["table02_main"][1:] + ["generation"])
    # grouped by tier; within a tier families by their best member, members by accuracy
    tiers = [r["tier"] for r in rows]
    assert tiers == sorted(tiers, key=["closed_frontier", "open_frontier", "compute_efficient"].index)
    for tier in set(tiers):
        in_tier = [r for r in rows if r["tier"] == tier]
        fams = [r["family"] for r in in_tier]
        blocks = [f for f, _ in itertools.groupby(fams)]
        assert len(blocks) == len(set(fams)), f"family split in {tier}"
        best = [max(float(r["accuracy"]) for r in in_tier if r["family"] == f) for f in blocks]
        assert best == sorted(best, reverse=True)
        for f in blocks:
            accs = [float(r["accuracy"]) for r in in_tier if r["family"] == f]
            assert accs == sorted(accs, reverse=True)
        leaders = [r["model"] for r in in_tier if r["tier_leader"] == "true"]
        assert leaders == [sorted(in_tier, key=lambda r: (-float(r["accuracy"]), r["model"]))[0]["model"]]


def test_generation_carried_from_the_panel_into_runs(paper_wh: PaperWarehouse, report: Path) -> None:
    panel = yaml.safe_load((REPO / "panels" / "paper19.yaml").read_text())
    want = {m["name"]: str(m["generation"]) for m in panel["models"]}
    got = {r["model"]: r["generation"] for r in _q(paper_wh.db, "SELECT DISTINCT model, generation FROM raw.runs")}
    assert got == want
    gaps = read_csv(report, "figure02_generations")
    mart = _q(paper_wh.db, "SELECT * FROM generation_gaps WHERE condition = 'full'")
    assert_rows_equal(gaps, mart, ["family", "step"], ["generation_from", "generation_to", "accuracy_from",
                                                       "accuracy_to", "delta_pp"])
    # by hand from model_summary: atlas generation 1 -> 2
    accs = {r["model"]: r["accuracy"] for r in _q(
        paper_wh.db, "SELECT model, accuracy FROM model_summary WHERE condition = 'full' AND replicate = 0")}
    atlas = next(r for r in gaps if r["family"] == "atlas")
    assert (atlas["generation_from"], atlas["generation_to"]) == ("1", "2")
    assert close(atlas["delta_pp"], 100 * (accs["sim-cf-atlas"] - accs["sim-cf-atlas-lite"]), 1e-9)


@pytest.mark.parametrize("name,mart,key,cols,order", [
    ("table03_wrong_read", "wrong_read_actions", ["model", "action"], ["n", "n_total", "share"], None),
    ("table09_stopping", "stopping_behavior", ["model", "scope", "category"], ["n", "n_scope", "share"], None),
    ("table10_cells", "cell_accuracy", ["model", "cell"], ["n", "correct", "accuracy", "wilson_lo", "wilson_hi"], None),
    ("table10_reasoning", "reasoning_type_accuracy", ["model", "reasoning_type"],
     ["n", "correct", "accuracy", "wilson_lo", "wilson_hi"], None),
    ("figure06_transitions", "tool_transitions", ["model", "prev_tool", "next_tool"], ["n", "p_next"], None),
    ("budget_truncated", "budget_truncated_accuracy", ["model", "axis", "b"], ["n_items", "n_correct", "accuracy"],
     None),
])
def test_per_run_tables_equal_their_marts(paper_wh: PaperWarehouse, report: Path, name: str, mart: str,
                                          key: list[str], cols: list[str], order: None) -> None:
    runs = panel_runs(paper_wh.db)
    model_of = {v: k for k, v in runs.items()}
    rows = _q(paper_wh.db, f"SELECT * FROM {mart} WHERE run_id IN ({','.join('?' * len(runs))})", list(runs.values()))
    for r in rows:
        r["model"] = model_of[r["run_id"]]
    assert rows, mart
    assert_rows_equal(read_csv(report, name), rows, key, cols)


def test_model_level_tables_equal_their_marts(paper_wh: PaperWarehouse, report: Path) -> None:
    runs = panel_runs(paper_wh.db)
    summary = {r["model"]: r for r in _q(paper_wh.db, "SELECT * FROM model_summary") if runs[r["model"]] == r["run_id"]}
    assert_rows_equal(read_csv(report, "table15_terminations"), list(summary.values()), ["model"],
                      CONTRACT["table15_terminations"][1:] + ["error_rate"])
    fig5 = [{**r, "tier": r["tier"] or "untiered"} for r in summary.values()]
    assert_rows_equal(read_csv(report, "figure05_recall_accuracy"), fig5, ["model"], ["tier", "paper_recall", "accuracy"])
    top = _q(paper_wh.db, "SELECT run_id, trigram, share, n FROM tool_trigrams "
                          "QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY n DESC, trigram) = 1")
    top = [{**r, "model": m} for m, rid in runs.items() for r in top if r["run_id"] == rid]
    t14 = read_csv(report, "table14_trigrams")
    assert_rows_equal(t14, top, ["model"], ["trigram", "share", "n"])
    for r in t14:  # the top trigram's share is the run's concentration
        assert close(r["share"], summary[r["model"]]["trigram_concentration"])
    reruns = _q(paper_wh.db, "SELECT * FROM rerun_variance WHERE condition = 'full'")
    t17 = read_csv(report, "table17_reruns")
    assert {r["model"] for r in t17} == {REPLICATED}
    assert_rows_equal(t17, reruns, ["model", "metric"], CONTRACT["table17_reruns"][2:])
    diff = _q(paper_wh.db, "SELECT * FROM item_difficulty WHERE condition = 'full'")
    assert_rows_equal(read_csv(report, "figure04_difficulty"), diff, ["sample_id"], ["cell", "n_models", "n_correct"])
    # Figure 4 by hand: how many panel runs answered each item
    counts = _q(paper_wh.db, f"SELECT sample_id, count_if(is_correct) AS k, count(*) AS n FROM fct_trajectory "
                             f"WHERE run_id IN ({','.join('?' * len(runs))}) GROUP BY sample_id", list(runs.values()))
    assert {r["sample_id"]: (r["k"], r["n"]) for r in counts} == {
        r["sample_id"]: (r["n_correct"], r["n_models"]) for r in diff}
    hist = [r for r in read_csv(report, "figure04_histogram") if r["by"] == "all"]
    assert sum(int(r["n_items"]) for r in hist) == len(diff)


def test_table11_pooled_evidence_contact_by_hand(paper_wh: PaperWarehouse, report: Path) -> None:
    runs = panel_runs(paper_wh.db)
    cb = panel_runs(paper_wh.db, "closed_book")
    assert set(cb) == set(ABLATED)
    rows = {r["evidence_contact"]: r for r in read_csv(report, "table11_evidence")}
    traj = _q(paper_wh.db, f"SELECT model, sample_id, evidence_contact, is_correct FROM fct_trajectory "
                           f"WHERE paper_recall AND run_id IN ({','.join('?' * len(runs))})", list(runs.values()))
    closed = {(r["model"], r["sample_id"]): r["is_correct"] for r in _q(
        paper_wh.db, f"SELECT model, sample_id, is_correct FROM fct_trajectory WHERE run_id IN "
                     f"({','.join('?' * len(cb))})", list(cb.values()))}
    for contact in ("header", "parent", "none"):
        mine = [t for t in traj if t["evidence_contact"] == contact]
        r = rows[contact]
        assert int(r["n"]) == len(mine) and int(r["n_recalled"]) == len(traj)
        assert int(r["correct"]) == sum(t["is_correct"] for t in mine)
        pairs = [closed[(t["model"], t["sample_id"])] for t in mine if (t["model"], t["sample_id"]) in closed]
        assert int(r["n_closed_book"]) == len(pairs)
        assert close(r["closed_book_accuracy"], sum(pairs) / len(pairs) if pairs else None)


def test_table8_cost_and_table19_slices_equal_their_marts(paper_wh: PaperWarehouse, report: Path) -> None:
    runs = panel_runs(paper_wh.db)
    cost = {r["run_id"]: r for r in _q(paper_wh.db, "SELECT * FROM model_cost")}
    t8 = read_csv(report, "table08_cost")
    assert {r["model"] for r in t8} == set(runs)
    for r in t8:
        assert r["pricing_found"] == "false" and r["total_usd"] == ""  # every simulated model is unpriced
        assert int(r["prompt_tokens"]) == cost[runs[r["model"]]]["prompt_tokens"]
        assert (r["closed_book_run_id"] != "") == (r["model"] in ABLATED)
    t19 = read_csv(report, "table19_closed_book")
    base = [r for r in t19 if r["slice"] in ("seed_year", "venue")]
    assert_rows_equal(base, _q(paper_wh.db, "SELECT * FROM closed_book_slices"), ["tier", "slice", "value"],
                      ["n_models", "n", "correct", "accuracy"])
    n_cb = _q(paper_wh.db, "SELECT count(*) AS n FROM fct_trajectory WHERE condition = 'closed_book' AND replicate = 0")[0]["n"]
    for s in ("seed_year", "venue"):
        assert sum(int(r["n"]) for r in base if r["tier"] == "all" and r["slice"] == s) == n_cb


def test_table19_covariate_quartiles_by_hand(paper_wh: PaperWarehouse, report: Path) -> None:
    items = [r["sample_id"] for r in _q(paper_wh.db, "SELECT sample_id FROM raw.items ORDER BY 1")]
    values = {sid: float((i * 53) % 97) for i, sid in enumerate(items) if i % 11 != 0}
    order = sorted(values, key=lambda s: (values[s], s))
    quart = {sid: 4 * i // len(order) + 1 for i, sid in enumerate(order)}
    cb = panel_runs(paper_wh.db, "closed_book")
    traj = _q(paper_wh.db, f"SELECT sample_id, is_correct FROM fct_trajectory WHERE run_id IN "
                           f"({','.join('?' * len(cb))})", list(cb.values()))
    rows = {r["value"]: r for r in read_csv(report, "table19_closed_book")
            if r["tier"] == "all" and r["slice"] == "max_gold_citations quartile"}
    assert set(rows) == {"Q1", "Q2", "Q3", "Q4"}
    for b in (1, 2, 3, 4):
        mine = [t for t in traj if quart.get(t["sample_id"]) == b]
        r = rows[f"Q{b}"]
        assert int(r["n"]) == len(mine) and int(r["correct"]) == sum(t["is_correct"] for t in mine)
        in_q = [values[s] for s in order if quart[s] == b]
        assert (float(r["lo"]), float(r["hi"])) == (min(in_q), max(in_q))
    assert not any(r["slice"].startswith("note") for r in read_csv(report, "table19_closed_book"))  # text column


# ----------------------------------------------------------------------------------------------
# Statistics against scipy
# ----------------------------------------------------------------------------------------------


def discordant(db: Path, run_a: str, run_b: str, scope: str) -> tuple[int, int, int]:
    """(n, a_only, b_only) straight from fct_trajectory."""
    cond = {"accuracy": "TRUE", "conversion_st": "a.question_type = 'ST' AND a.paper_recall AND b.paper_recall",
            "conversion_mt": "a.question_type = 'MT' AND a.paper_recall AND b.paper_recall"}[scope]
    r = _q(db, f"""SELECT count(*) AS n, coalesce(count_if(a.is_correct AND NOT b.is_correct), 0) AS ao,
                          coalesce(count_if(b.is_correct AND NOT a.is_correct), 0) AS bo
                   FROM fct_trajectory a JOIN fct_trajectory b USING (sample_id)
                   WHERE a.run_id = ? AND b.run_id = ? AND {cond}""", [run_a, run_b])[0]
    return r["n"], r["ao"], r["bo"]


def mcnemar_scipy(b: int, c: int) -> float:
    return 1.0 if b + c == 0 else float(sps.binomtest(b, b + c, 0.5).pvalue)


def test_table12_walk_equals_scipy(paper_wh: PaperWarehouse, report: Path) -> None:
    runs = panel_runs(paper_wh.db)
    summary = {r["model"]: r for r in _q(paper_wh.db, "SELECT * FROM model_summary") if runs[r["model"]] == r["run_id"]}
    rows = read_csv(report, "table12_mcnemar")
    ranked = sorted((m for m in summary if summary[m]["conversion_mt"] is not None),
                    key=lambda m: (-summary[m]["conversion_mt"], m))[:6]
    walk = [r for r in rows if r["panel"] == "top6_conversion_mt"]
    assert [(r["model_a"], r["model_b"]) for r in walk] == list(zip(ranked, ranked[1:]))
    tiers = {summary[m]["tier"] for m in summary}
    expected_tier_rows = []
    for tier in tiers:
        for axis in ("accuracy", "conversion_st", "conversion_mt"):
            members = sorted((m for m in summary if summary[m]["tier"] == tier and summary[m][axis] is not None),
                             key=lambda m: (-summary[m][axis], m))
            expected_tier_rows.append((tier, axis, members[0], members[1]))
    got_tier_rows = [(r["panel"], r["axis"], r["model_a"], r["model_b"]) for r in rows if r["panel"] in tiers]
    assert sorted(got_tier_rows) == sorted(expected_tier_rows)
    for r in rows:
        n, ao, bo = discordant(paper_wh.db, runs[r["model_a"]], runs[r["model_b"]], r["axis"])
        assert (int(r["n"]), int(r["a_only"]), int(r["b_only"])) == (n, ao, bo)
        assert close(r["p_value"], mcnemar_scipy(ao, bo), 1e-12)
        assert r["significant"] == ("true" if mcnemar_scipy(ao, bo) < 0.05 else "false")
    # Table 2 marks a conversion cell exactly where the tier test on that axis rejects
    t2 = {r["model"]: r for r in read_csv(report, "table02_main")}
    for r in rows:
        if r["panel"] in tiers and r["axis"] != "accuracy":
            assert t2[r["model_a"]][f"{r['axis']}_sig"] == r["significant"]
    assert sum(r[f"{a}_sig"] == "true" for r in t2.values() for a in ("conversion_st", "conversion_mt")) == sum(
        r["significant"] == "true" for r in rows if r["panel"] in tiers and r["axis"] != "accuracy")


def test_table4_paired_deltas_equal_scipy(paper_wh: PaperWarehouse, report: Path) -> None:
    rows = read_csv(report, "table04_conditions")
    assert {r["model"] for r in rows} == set(ABLATED)
    deltas = _q(paper_wh.db, "SELECT * FROM condition_deltas")
    assert_rows_equal(rows, deltas, ["model", "condition_from", "condition_to"], ["accuracy_from", "accuracy_to", "delta_pp"])
    for r in rows:
        a = panel_runs(paper_wh.db, r["condition_from"])[r["model"]]
        b = panel_runs(paper_wh.db, r["condition_to"])[r["model"]]
        n, ao, bo = discordant(paper_wh.db, a, b, "accuracy")
        assert (int(r["n"]), int(r["from_only"]), int(r["to_only"])) == (n, ao, bo)
        assert close(r["p_value"], mcnemar_scipy(ao, bo))
        assert close(r["chance"], 0.25)


def test_table13_bonferroni_counts_equal_scipy(paper_wh: PaperWarehouse, report: Path) -> None:
    runs = panel_runs(paper_wh.db)
    eff = _q(paper_wh.db, f"SELECT * FROM bigram_effects WHERE run_id IN ({','.join('?' * len(runs))})",
             list(runs.values()))
    rows = {r["bigram"]: r for r in read_csv(report, "table13_bigrams")}
    assert len(rows) == 49
    for bigram, r in rows.items():
        mine = [e for e in eff if e["bigram"] == bigram]
        present = [e for e in mine if e["n_with"] > 0]
        assert int(r["models_present"]) == len(present)
        effects = [e["effect_pp"] for e in present if e["effect_pp"] is not None]
        assert close(r["panel_mean_effect_pp"], sum(effects) / len(effects) if effects else None, 1e-9)
        sig = 0
        for e in mine:
            if e["n_with"] and e["n_without"]:
                table = [[e["correct_with"], e["n_with"] - e["correct_with"]],
                         [e["correct_without"], e["n_without"] - e["correct_without"]]]
                if min(1.0, sps.fisher_exact(table).pvalue * 49) < 0.05:
                    sig += 1
        assert int(r["sig_count"]) == sig, bigram
        mean = num(r["panel_mean_effect_pp"])
        assert r["list"] == ("" if not sig or mean is None or mean == 0 else
                             "productive" if mean > 0 else "anti_productive")


def test_table16_correlations_equal_scipy(paper_wh: PaperWarehouse, report: Path) -> None:
    runs = panel_runs(paper_wh.db)
    accs = {r["model"]: r["accuracy"] for r in _q(paper_wh.db, "SELECT model, run_id, accuracy FROM model_summary")
            if runs.get(r["model"]) == r["run_id"]}
    rows = {r["benchmark"]: r for r in read_csv(report, "table16_external")}
    assert set(rows) == {"bench-a", "bench-b"}
    models = sorted(accs)
    scores = {"bench-a": {m: round(50 + 40 * accs[m] + (i % 5), 2) for i, m in enumerate(models)},
              "bench-b": {m: (i * 37) % 19 for i, m in enumerate(models)}}
    for bench, r in rows.items():
        x = [accs[m] for m in models]
        y = [scores[bench][m] for m in models]
        assert int(r["n_models"]) == 19
        pe = sps.pearsonr(x, y)
        ci = pe.confidence_interval()
        assert close(r["pearson"], pe.statistic, 1e-9) and close(r["pearson_p"], pe.pvalue, 1e-9)
        assert close(r["pearson_lo"], ci.low, 1e-9) and close(r["pearson_hi"], ci.high, 1e-9)
        sp = sps.spearmanr(x, y)
        rank_ci = sps.pearsonr(sps.rankdata(x), sps.rankdata(y)).confidence_interval()
        assert close(r["spearman"], sp.statistic, 1e-9) and close(r["spearman_p"], sp.pvalue, 1e-9)
        assert close(r["spearman_lo"], rank_ci.low, 1e-9) and close(r["spearman_hi"], rank_ci.high, 1e-9)
    assert float(rows["bench-a"]["spearman"]) > 0.8


def test_bigram_frequency_tests_equal_scipy_with_bh(paper_wh: PaperWarehouse, report: Path) -> None:
    runs = panel_runs(paper_wh.db)
    models = sorted(_q(paper_wh.db, "SELECT DISTINCT model FROM model_summary ORDER BY model"), key=lambda r: r["model"])
    a, b = models[0]["model"], models[1]["model"]
    rows = [r for r in read_csv(report, "bigram_frequency_tests")]
    assert {(r["model_a"], r["model_b"]) for r in rows} == {(a, b)}  # --pair replaces the default pairs
    eff = {(e["run_id"], e["bigram"]): e for e in _q(paper_wh.db, "SELECT * FROM bigram_effects")}
    ps = []
    for r in rows:
        ea, eb = eff[(runs[a], r["bigram"])], eff[(runs[b], r["bigram"])]
        assert (int(r["with_a"]), int(r["with_b"])) == (ea["n_with"], eb["n_with"])
        assert int(r["with_a"]) + int(r["with_b"]) > 0
        table = [[ea["n_with"], ea["n_without"]], [eb["n_with"], eb["n_without"]]]
        p = sps.fisher_exact(table).pvalue
        assert close(r["p_value"], p, 1e-9)
        ps.append(p)
    q = sps.false_discovery_control(ps)
    for r, qv in zip(rows, q):
        assert close(r["q_value"], qv, 1e-9)
        assert r["significant"] == ("true" if qv < 0.05 else "false")


def test_reliability_equals_numpy_and_feldt(paper_wh: PaperWarehouse, report: Path) -> None:
    runs = panel_runs(paper_wh.db)
    traj = _q(paper_wh.db, f"SELECT run_id, sample_id, is_correct FROM fct_trajectory WHERE run_id IN "
                           f"({','.join('?' * len(runs))}) ORDER BY sample_id", list(runs.values()))
    items = sorted({t["sample_id"] for t in traj})
    idx = {s: j for j, s in enumerate(items)}
    rid = list(runs.values())
    m = np.zeros((len(rid), len(items)))
    for t in traj:
        m[rid.index(t["run_id"]), idx[t["sample_id"]]] = float(t["is_correct"])
    k = m.shape[1]
    alpha = k / (k - 1) * (1 - m.var(axis=0, ddof=1).sum() / m.sum(axis=1).var(ddof=1))
    (r,) = read_csv(report, "reliability")
    assert (int(r["n_models"]), int(r["n_items"])) == m.shape
    assert close(r["alpha"], alpha, 1e-9)
    df1, df2 = m.shape[0] - 1, (m.shape[0] - 1) * (k - 1)
    assert close(r["alpha_lo"], 1 - (1 - alpha) * sps.f.ppf(0.975, df1, df2), 1e-9)
    assert close(r["alpha_hi"], 1 - (1 - alpha) * sps.f.ppf(0.025, df1, df2), 1e-9)
    disc = []
    for j in range(k):
        rest = m.sum(axis=1) - m[:, j]
        if m[:, j].std() > 0 and rest.std() > 0:
            disc.append(np.corrcoef(m[:, j], rest)[0, 1])
    assert int(r["n_items_discriminating"]) == len(disc)
    assert close(r["discrimination_median"], np.median(disc), 1e-9)
    assert close(r["discrimination_q1"], np.percentile(disc, 25), 1e-9)
    assert close(r["discrimination_q3"], np.percentile(disc, 75), 1e-9)
    assert close(r["share_above_0_2"], np.mean(np.array(disc) > 0.2), 1e-12)


def test_budget_truncated_accuracy_at_the_caps(paper_wh: PaperWarehouse, report: Path) -> None:
    runs = panel_runs(paper_wh.db)
    rows = read_csv(report, "budget_truncated")
    caps = {r["run_id"]: r for r in _q(paper_wh.db, "SELECT run_id, budget_total, max_turns, max_total_tokens FROM raw.runs")}
    answered = {r["run_id"]: r["acc"] for r in _q(
        paper_wh.db, "SELECT run_id, avg((is_correct AND terminated_by = 'answer')::INT) AS acc FROM fct_trajectory GROUP BY 1")}
    for model, rid in runs.items():
        for axis, cap in (("points", caps[rid]["budget_total"]), ("turns", caps[rid]["max_turns"]),
                          ("tokens", caps[rid]["max_total_tokens"])):
            curve = [r for r in rows if r["model"] == model and r["axis"] == axis]
            accs = [float(r["accuracy"]) for r in curve]
            assert accs == sorted(accs), (model, axis)  # a higher cap never loses an answer
            assert int(curve[-1]["b"]) == cap
            assert close(curve[-1]["accuracy"], answered[rid], 1e-12)


# ----------------------------------------------------------------------------------------------
# LaTeX
# ----------------------------------------------------------------------------------------------

_ESCAPES = re.compile(r"\\(?:[&%$#_{}]|textbackslash\{\}|textasciitilde\{\}|textasciicircum\{\}|textless\{\}|"
                      r"textgreater\{\})")


def _split_cells(row: str) -> list[str]:
    return re.split(r"(?<!\\)&", row)


def _cell_width(cell: str) -> int:
    m = re.match(r"\s*\\multicolumn\{(\d+)\}", cell)
    return int(m.group(1)) if m else 1


def check_booktabs(tex: str) -> int:
    """Parse a booktabs tabular fragment; returns its number of data rows (without header and group rows)."""
    lines = [ln for ln in tex.splitlines() if ln.strip() and not ln.lstrip().startswith("%")]
    m = re.fullmatch(r"\\begin\{tabular\}\{([lrc]+)\}", lines[0])
    assert m, lines[0]
    ncols = len(m.group(1))
    assert lines[1] == r"\toprule" and lines[-2] == r"\bottomrule" and lines[-1] == r"\end{tabular}"
    assert [ln for ln in lines if ln in (r"\toprule", r"\bottomrule")] == [r"\toprule", r"\bottomrule"]
    head_end = lines.index(r"\midrule")
    header = [ln for ln in lines[2:head_end] if not ln.startswith(r"\cmidrule")]
    assert 1 <= len(header) <= 3, header  # group row, headers, units
    body = 0
    for ln in [*header, *lines[head_end + 1:-2]]:
        if ln == r"\midrule":
            continue
        assert ln.endswith(r" \\"), ln
        cells = _split_cells(ln[: -len(r" \\")])
        assert sum(_cell_width(c) for c in cells) == ncols, ln
        for c in cells:
            text = re.sub(r"\$[^$]*\$", "", _ESCAPES.sub("", c))  # escapes and math segments removed
            text = re.sub(r"\\(textbf|textit|multicolumn)\{", "{", text)
            assert not re.search(r"[&%$#_^~]|\\(?![a-z])", text), (ln, c)
            depth = 0
            for ch in text:
                depth += {"{": 1, "}": -1}.get(ch, 0)
                assert depth >= 0, c
            assert depth == 0, c
        if not (len(cells) == 1 and _cell_width(cells[0]) == ncols):  # a group header spans every column
            body += 1
    return body - len(header)


#: Tables the paper (and the LaTeX) prints as two tier blocks side by side; the page stacks them.
SIDE_BY_SIDE = ("table15_terminations", "table18_zero_full")


def test_every_table_is_a_booktabs_fragment(report: Path) -> None:
    """Every .tex parses as booktabs and has the rows of the page's table (the paper's layout)."""
    texs = sorted((report / "tables").glob("*.tex"))
    assert len(texs) >= 15
    shown = page_tables(report)
    for tex in texs:
        n = check_booktabs(tex.read_text())
        page = shown[tex.stem]
        if tex.stem in SIDE_BY_SIDE:  # two models per line: every page row appears once, in one half
            lines = [ln for ln in tex.read_text().splitlines() if " & " in ln and "multicolumn" not in ln][1:]
            models = [c.strip() for ln in lines for c in (_split_cells(ln)[0], _split_cells(ln)[len(_split_cells(ln)) // 2])]
            assert sorted(m for m in models if m) == sorted(r[0] for r in page["rows"]), tex.name
            assert len(lines) < len(page["rows"]) and n == len(lines) + tex.read_text().count(r"\multicolumn") // 2
        else:
            assert n == page["n_rows"] + len(page["footer"]), tex.name


def test_latex_escapes_hostile_names() -> None:
    from agenthop.reports.paper.export import to_latex
    from agenthop.reports.paper.table import Column, Table

    t = Table("t", "Table X", "x", "paper-x", [Column("model", "text", "Model_&_%"), Column("v", "rate", "v")],
              [{"model": r"a_b & c% $d #e {f} \g ~h ^i <j>", "v": 0.5}, {"model": "plain", "v": None}])
    t.mark(0, "v", "best")
    t.mark(1, "model", "leader")
    tex = to_latex(t)
    assert check_booktabs(tex) == 2
    assert r"a\_b \& c\% \$d \#e \{f\} \textbackslash{}g" in tex and r"\textbf{50.0}" in tex


# ----------------------------------------------------------------------------------------------
# Page
# ----------------------------------------------------------------------------------------------


def test_page_has_a_section_per_analysis_with_links(report: Path) -> None:
    html = (report / "index.html").read_text()
    for ref in ("Table 2", "Table 3", "Tables 4 and 18", "Table 8", "Table 9", "Table 10", "Table 11", "Table 12",
                "Table 13", "Table 14", "Table 15", "Table 16", "Table 17", "Table 19", "Figure 2", "Figure 4",
                "Figure 5", "Figure 6", "Reliability", "Beyond the paper"):
        assert f"<h2>{ref} · " in html, ref
    links = re.findall(r'Definition: <a class="def" href="#([a-z0-9-]+)" title="docs/metrics.md#(paper-[a-z0-9-]+)"', html)
    doc = (REPO / "docs" / "metrics.md").read_text()
    assert len(links) == len(re.findall(r"<h2>", html))  # every analysis section
    assert '<h2 id="definitions">Definitions</h2>' in html
    for target, anchor in set(links):
        assert f'id="{anchor}"' in doc, anchor  # defined in docs/metrics.md ...
        assert f'<section class="definition" id="{target}">' in html  # ... and carried in the page's Definitions
    assert len(re.findall(r'<section class="definition"', html)) < len(links)  # Tables 3, 9, 14, 15 share one
    for href in set(re.findall(r'href="(tables/[^"]+)"', html)):
        assert (report / href).is_file(), href
    assert "SIMULATED" in html
    assert len(re.findall(r'<div class="chart" id="paper-', html)) >= 6
    assert (report / "index_files").is_dir() and list((report / "index_files").glob("vega-*.js"))


def test_item_links_point_into_the_report_folder(report: Path, paper_wh: PaperWarehouse) -> None:
    html = (report / "index.html").read_text()
    links = re.findall(r'href="(index_files/items/[^"]+\.html)"', html)
    for link in links:
        assert (report / link).is_file(), link
    diff = _q(paper_wh.db, "SELECT sample_id, n_correct / n_models AS s FROM item_difficulty WHERE condition = 'full'")
    hardest = [r["sample_id"] for r in sorted(diff, key=lambda r: (r["s"], r["sample_id"]))[:10]]
    easiest = [r["sample_id"] for r in sorted(diff, key=lambda r: (-r["s"], r["sample_id"]))
               if r["sample_id"] not in hardest][:10]
    assert [link.rsplit("/", 1)[1][:-5] for link in links] == hardest + easiest
    page = (report / links[0]).read_text()
    assert "../../index.html" in page  # the item page links back to the report


# ----------------------------------------------------------------------------------------------
# Options and errors
# ----------------------------------------------------------------------------------------------


def test_no_external_gives_a_note_and_no_file(paper_wh: PaperWarehouse, tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["paper", "--db", str(paper_wh.db), "--out", str(tmp_path / "o"),
                                    "--condition", "closed_book"])
    assert res.exit_code == 0, res.output
    assert not (tmp_path / "o" / "tables" / "table16_external.csv").exists()
    html = (tmp_path / "o" / "index.html").read_text()
    assert "No external scores given" in html
    rows = read_csv(tmp_path / "o", "table02_main")
    assert {r["model"] for r in rows} == set(ABLATED)


@pytest.mark.parametrize("args,content,message", [
    (["--external"], "model,benchmark,score\nm,b,high\n", ":2: score 'high' is not a number"),
    (["--external"], "model,score\nm,1\n", "header lacks column(s) benchmark"),
    (["--external"], "model,benchmark,score,mark\nm,b,1,maybe\n", ":2: mark 'maybe' is not one of"),
    (["--covariates"], "item,x\na,1\n", "the first column must be sample_id"),
    (["--covariates"], "sample_id,x\na,1\na,2\n", ":3: sample_id 'a' appears twice"),
    (["--condition", "nope", "--external"], "model,benchmark,score\n", "no runs under condition 'nope'"),
    (["--pair", "sim-cf-atlas,unknown-model", "--external"], "model,benchmark,score\n",
     "--pair names model 'unknown-model'"),
])
def test_bad_input_is_one_clear_line(paper_wh: PaperWarehouse, tmp_path: Path, args: list[str], content: str,
                                     message: str) -> None:
    f = tmp_path / "in.csv"
    f.write_text(content)
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["paper", "--db", str(paper_wh.db), "--out", str(out), *args, str(f)])
    assert res.exit_code == 2, res.output
    assert message in res.output and len(res.output.strip().splitlines()) == 1
    assert not out.exists() or not any(out.iterdir())


# ----------------------------------------------------------------------------------------------
# generation: in panel files and the runs table
# ----------------------------------------------------------------------------------------------


def test_panel_generation_is_a_string_and_validated() -> None:
    from agenthop.harness.errors import AgentHopError
    from agenthop.harness.panel import parse_panel

    doc = {"models": [{"name": "a", "sim": {"archetype": "balanced"}, "generation": 2},
                      {"name": "b", "sim": {"archetype": "balanced"}, "generation": "2.5-preview"},
                      {"name": "c", "sim": {"archetype": "balanced"}}]}
    assert [m.generation for m in parse_panel(doc).models] == ["2", "2.5-preview", None]
    for bad in (True, "", [1]):
        doc = {"models": [{"name": "a", "sim": {"archetype": "balanced"}, "generation": bad}]}
        with pytest.raises(AgentHopError, match="generation"):
            parse_panel(doc, "p.yaml")


def test_run_files_without_generation_still_conform() -> None:
    """Run directories written before `generation` existed read it as NULL; other columns stay required."""
    import pyarrow as pa

    from agenthop.ingest.conform import IngestError, conform
    from agenthop.schemas.trajectory import RUNS

    row = {f.name: None for f in RUNS if f.name != "generation"}
    row.update(run_id="r", model="m", backend="sim", condition="full", replicate=0, benchmark_sha256="x",
               budget_total=30, max_turns=20, max_total_tokens=200000, harness_version="v", config_json="{}",
               benchmark="agenthop")
    old = pa.Table.from_pylist([row], schema=pa.schema([f for f in RUNS if f.name != "generation"]))
    out = conform(old, RUNS, "runs-0.parquet")
    assert out.column_names == RUNS.names and out.column("generation").to_pylist() == [None]
    with pytest.raises(IngestError, match="missing column 'tier'"):
        conform(old.drop_columns(["tier"]), RUNS, "runs-0.parquet")


# ----------------------------------------------------------------------------------------------
# The report-site browser checks on the paper page (skipped loudly without Chromium)
# ----------------------------------------------------------------------------------------------

from test_report_browser import AXIS_GAPS_JS, OVERLAPS_JS, _check_links, _open, browser  # noqa: E402,F401


#: Tables wider than their box whose first column does not stay in place (position: sticky).
UNSTICKY_WIDE_TABLES_JS = """() => Array.from(document.querySelectorAll('main table')).filter(t => {
    const box = t.parentElement;
    if (box.scrollWidth <= box.clientWidth + 1) return false;
    const firsts = Array.from(t.querySelectorAll('thead tr:first-child > :first-child, tbody tr:not(.axis-row) > :first-child'));
    return !firsts.every(c => getComputedStyle(c).position === 'sticky');
}).map(t => t.outerHTML.slice(0, 120))"""


@pytest.mark.browser
@pytest.mark.parametrize("width", (1024, 1440))
def test_paper_page_passes_the_browser_checks(browser, report: Path, width: int) -> None:  # noqa: F811
    page, errors, blocked, n_charts = _open(browser, report / "index.html", width)
    assert n_charts >= 7
    marks = page.evaluate("""() => Array.from(document.querySelectorAll('div.chart')).map(d => {
        const svg = d.querySelector('svg');
        return svg ? svg.querySelectorAll('[role="graphics-symbol"]').length : -1;
    })""")
    assert all(m > 0 for m in marks), marks
    # Figure 6 wraps one matrix per model into rows of four: every matrix labels its own columns
    # (a shared axis would sit under the empty cells of a short last row)
    x_axes, matrices = page.evaluate("""() => {
        const svg = document.querySelector('#figure6 div.chart svg');
        return [svg.querySelectorAll('[aria-roledescription="axis"][aria-label^="X-axis"]').length,
                svg.querySelectorAll('[aria-roledescription="axis"][aria-label^="Y-axis"]').length];
    }""")
    n_models = len({r["model"] for r in read_csv(report, "figure06_transitions")})
    assert x_axes == n_models and matrices >= 1, (x_axes, n_models, matrices)
    scroll = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert scroll[0] <= scroll[1], scroll
    text = page.evaluate(OVERLAPS_JS)
    assert not text["problems"] and not text["small"], (text["problems"][:5], text["small"][:5])
    assert not page.evaluate(UNSTICKY_WIDE_TABLES_JS)
    crowded = page.evaluate(AXIS_GAPS_JS)  # e.g. "90%" against "100%" on Figures 2 and 4's short axes
    assert not crowded, crowded[:10]
    facets = page.evaluate("Array.from(document.querySelectorAll('#budget div.chart svg g.role-column-header text'))"
                           ".map(t => t.textContent)")
    assert facets == ["cap on budget points", "cap on turns", "cap on tokens"], facets
    # Table 2 fits the page at 1,024 px too (compact numeric columns, headers that break), as in the paper
    fit = page.evaluate("""() => { const t = document.querySelector('#table2 table.paper'), box = t.parentElement;
        return [box.scrollWidth, box.clientWidth, t.getBoundingClientRect().right,
                document.documentElement.clientWidth]; }""")
    assert fit[0] <= fit[1] and fit[2] <= fit[3], f"Table 2 at {width}px: {fit}"
    assert page.locator("#table2 .scroll-cue:visible").count() == 0
    # Figure 5 labels every model (the label texts are the marks of its text layers)
    labels = page.evaluate("""() => Array.from(document.querySelectorAll('#figure5 div.chart svg g.mark-text.role-mark text'))
        .map(t => t.textContent)""")
    assert sorted(labels) == sorted(r["model"] for r in read_csv(report, "figure05_recall_accuracy")), labels
    # a chart in an appendix explains itself: Figure 6 spells out its short tool names and its empty submit row,
    # the condition chart names the settings as Tables 4 and 18 do (not by condition id alone)
    fig6 = page.evaluate("Array.from(document.querySelectorAll('#figure6 div.chart svg g.role-title text'))"
                         ".map(t => t.textContent).join(' ')")
    for phrase in ("read = read_section", "submit = submit_answer", "its row is empty"):
        assert phrase in fig6, fig6
    settings = page.evaluate("Array.from(document.querySelectorAll('#table4 div.chart svg g.role-legend-label text'))"
                             ".map(t => t.textContent)")
    assert settings and all(s.split(" (")[0] in ("Zero-tool", "No-search", "Full-tool") for s in settings), settings
    page.close()
    assert not errors and not blocked, (errors, blocked)


def test_every_link_of_the_paper_report_resolves(report: Path) -> None:
    pages = [report / "index.html", *sorted((report / "index_files" / "items").glob("*.html"))]
    assert len(pages) == 21
    assert sum(_check_links(p) for p in pages) > 100


# ----------------------------------------------------------------------------------------------
# The paper's layout: headers, blocks, signs and selections of the page's and the LaTeX's tables
# ----------------------------------------------------------------------------------------------


class _PageTables(HTMLParser):
    """Each shown table of the page by the CSV it links: column headers, spanning groups, units, body rows."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict[str, Any]] = {}
        self.key: str | None = None
        self.cur: dict[str, Any] | None = None
        self.cell: list[str] | None = None
        self.where = ""
        self.row: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "a" and (a.get("href") or "").startswith("tables/") and (a.get("href") or "").endswith(".csv"):
            self.key = a["href"][len("tables/"):-len(".csv")]
        elif tag == "table" and self.key and "paper" in (a.get("class") or ""):
            self.cur = {"headers": [], "groups": [], "units": [], "rows": [], "footer": []}
            self.tables[self.key] = self.cur
        elif self.cur is not None and tag == "tr":
            self.row = [] if self.where in ("tbody", "tfoot") and "axis-row" not in (a.get("class") or "") else None
            self.units_row = "units" in (a.get("class") or "")
        elif self.cur is not None and tag in ("thead", "tbody", "tfoot"):
            self.where = tag
        elif self.cur is not None and tag in ("th", "td"):
            self.cell = []
            self.kind = ("col" if "data-col" in a else "group" if "group" in (a.get("class") or "")
                         else "unit" if getattr(self, "units_row", False) else tag)

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self.cur is None:
            return
        if tag in ("th", "td") and self.cell is not None:
            text = "".join(self.cell).replace("\u200b", "").replace("\u00ad", "").strip()  # break opportunities
            if self.kind == "col":
                self.cur["headers"].append(text)
            elif self.kind == "group":
                self.cur["groups"].append(text)
            elif self.kind == "unit":
                self.cur["units"].append(text)
            elif tag == "td" and self.row is not None:
                self.row.append(text)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.cur["footer" if self.where == "tfoot" else "rows"].append(self.row)
            self.row = None
        elif tag == "table":
            self.cur["n_rows"] = len(self.cur["rows"])
            self.cur, self.key, self.where = None, None, ""


def page_tables(report: Path) -> dict[str, dict[str, Any]]:
    parser = _PageTables()
    parser.feed((report / "index.html").read_text())
    return parser.tables


#: The paper's column headers (and spanning groups, units rows) of each table, transcribed from the AgentHop
#: paper (its \Delta_{\text{kw}} written Δkw). Table 10's Δ names the panel's easiest and
#: hardest cells and Table 16's middle columns are the --external benchmarks: checked in their own tests.
PAPER_HEADERS: dict[str, dict[str, list[str]]] = {
    "table02_main": {"headers": ["Model", "Recall(ST)", "Recall(MT)", "SecRec(ST)", "SecRec(MT)", "Conversion(ST)",
                                 "Conversion(MT)", "Calls/Turn", "Avg.Tokens", "Avg.Turns", "Avg.Budgets",
                                 "Max Tokens", "Max Turns", "Max Budgets", "Accuracy"],
                     "groups": ["Search↑", "Synthesis↑", "Tool-use", "Resource↓", "Failure Ratio↓", "Outcome↑"]},
    "table03_wrong_read": {"headers": ["Model", "n", "Recover", "Stay", "Think", "Re-nav", "Submit"]},
    "table04_conditions": {"headers": ["Model", "Zero-tool", "Δtools", "No-search", "Δkw", "Full-tool"],
                           "units": ["(%)", "(pp)", "(%)", "(pp)", "(%)"]},
    "table08_cost": {"headers": ["Model", "Full-tool ($)", "Zero-tool ($)", "$/sample (full)", "Input/sample (K)",
                                 "Output/sample"]},
    "table09_stopping": {"headers": ["Model", "n", "0-Gold", "Prem", "Explored", "Stayed", "n", "Imm", "Thnk",
                                     "Read", "n", "Imm", "Thnk", "Read"],
                         "groups": ["MT-fail", "ST (after gold)", "MT-both (after both)"]},
    "table11_evidence": {"headers": ["Group", "n", "Share", "Conversion", "Zero-tool"]},
    "table12_mcnemar": {"headers": ["Pair", "n", "Discordant", "p"]},
    "table13_bigrams": {"headers": ["Bigram", "Δ (pp)", "Sig. count", "Models"]},
    "table14_trigrams": {"headers": ["Model", "Top-1 trigram", "Concentration"]},
    "table15_terminations": {"headers": ["Model", "Acc", "NA", "MaxT", "Bud", "Tok"],
                             "latex": ["Model", "Acc", "NA", "MaxT", "Bud", "Tok"] * 2},  # two tiers side by side
    "table17_reruns": {"headers": ["Model", "Metric", "Run 0", "Run 1", "Run 2", "Mean", "Std", "Range"]},
    "table18_zero_full": {"headers": ["Model", "Zero", "Full", "Δ"], "latex": ["Model", "Zero", "Full", "Δ"] * 2},
    "table19_closed_book": {"headers": ["Axis", "Stratum", "n", "Closed", "Open", "Comp.-eff."]},
}


def latex_headers(report: Path, key: str) -> list[str]:
    """The column-header row of a .tex file, as text (pylatexenc), spaces and subscript marks removed."""
    l2t = pytest.importorskip("pylatexenc.latex2text")
    lines = [ln for ln in (report / "tables" / f"{key}.tex").read_text().splitlines()
             if ln.strip() and not ln.startswith("%")]
    head = [ln for ln in lines[2:lines.index(r"\midrule")] if not ln.startswith(r"\cmidrule")]
    row = head[1] if len(head) >= 2 and "multicolumn" in head[0] else head[0]
    return [_norm(l2t.LatexNodes2Text().latex_to_text(c)) for c in _split_cells(row.removesuffix(r" \\"))]


def _norm(h: str) -> str:
    return re.sub(r"[\s_{}]", "", h)


@pytest.mark.parametrize("key", sorted(PAPER_HEADERS))
def test_rendered_headers_are_the_papers(report: Path, key: str) -> None:
    want = PAPER_HEADERS[key]
    got = page_tables(report)[key]
    assert got["headers"] == want["headers"], key
    assert got["groups"] == want.get("groups", []), key
    assert got["units"] == want.get("units", []), key
    assert latex_headers(report, key) == [_norm(h) for h in want.get("latex", want["headers"])], key


def test_table10_is_the_cell_grid_with_the_papers_sign(report: Path) -> None:
    spread = read_csv(report, "table10_spread")
    easiest, hardest = spread[0]["easiest_cell"], spread[0]["hardest_cell"]
    t = page_tables(report)["table10_cells"]
    assert t["headers"] == ["Model", "st_d1", "st_d2", "mt_d1", "mt_d2", f"Δ{easiest}−{hardest}"]
    assert latex_headers(report, "table10_cells")[-1] == _norm(f"Δ{easiest}-{hardest}")
    cells = {(r["model"], r["cell"]): r for r in read_csv(report, "table10_cells")}
    assert t["units"] == [f"(n={max(int(r['n']) for (m, c), r in cells.items() if c == cell)})"
                          for cell in ("st_d1", "st_d2", "mt_d1", "mt_d2")] + ["(pp)"]
    rows = {r[0]: r for r in t["rows"]}
    for r in spread:
        # the drop from the easiest to the hardest cell: positive when the hard cell is worse
        want = 100 * (float(r["accuracy_easiest"]) - float(r["accuracy_hardest"]))
        assert close(r["delta_pp"], want, 1e-9)
        assert rows[r["model"]][-1] == f"{want:+.1f}"
        c = cells[(r["model"], "st_d1")]
        lo, hi = sps.binomtest(int(c["correct"]), int(c["n"])).proportion_ci(method="wilson")
        acc = int(c["correct"]) / int(c["n"])
        assert rows[r["model"]][1] == f"{100 * acc:.1f} ± {100 * (hi - acc):.1f}"


def test_names_of_actions_and_reasoning_types_have_one_source(report: Path) -> None:
    """Table 3's action columns and Table 10's reasoning types are spelled and ordered as every other page
    shows them (reports/agenthop/sections.py): the display names of the compare page, the release's (and the
    paper's) capitals, GROUND, METHOD, MOTIVE, RESULT, in the paper's order."""
    from agenthop.reports.agenthop import sections

    t3 = page_tables(report)["table03_wrong_read"]
    assert t3["headers"][2:] == [sections.WRONG_READ_LABELS[k] for k in sections.WRONG_READ_ORDER if k != "other"]
    t10 = page_tables(report)["table10_reasoning"]
    types = {r["reasoning_type"] for r in read_csv(report, "table10_reasoning")}
    assert types == set(sections.REASONING_ORDER)
    assert t10["headers"] == ["Model", *sections.REASONING_ORDER] == ["Model", "GROUND", "METHOD", "MOTIVE", "RESULT"]
    latex = latex_headers(report, "table10_reasoning")
    assert latex == ["Model", *sections.REASONING_ORDER], latex


def test_table13_shows_the_top_bigrams_by_abs_delta(report: Path) -> None:
    rows = read_csv(report, "table13_bigrams")
    assert len(rows) == len({r["bigram"] for r in rows})
    eligible = [r for r in rows if r["panel_mean_effect_pp"] and 2 * int(r["models_present"]) > int(r["n_models"])]
    pos = sorted((r for r in eligible if float(r["panel_mean_effect_pp"]) > 0),
                 key=lambda r: -float(r["panel_mean_effect_pp"]))[:7]
    neg = sorted((r for r in eligible if float(r["panel_mean_effect_pp"]) < 0),
                 key=lambda r: float(r["panel_mean_effect_pp"]))[:7]
    assert {r["bigram"] for r in rows if r["in_paper_table"] == "true"} == {r["bigram"] for r in pos + neg}
    shown = page_tables(report)["table13_bigrams"]["rows"]
    assert [r[0] for r in shown] == [r["bigram"].replace(">", "→") for r in pos + neg]
    assert all(re.fullmatch(r"\d+/\d+", r[2]) and re.fullmatch(r"\d+/\d+", r[3]) for r in shown)
    tex = (report / "tables" / "table13_bigrams.tex").read_text()
    assert r"$\rightarrow$" in tex and "textgreater" not in tex


def test_table4_and_18_use_the_panel_runs_throughout(paper_wh: PaperWarehouse, report: Path) -> None:
    """One row never mixes a mean over replicates with the McNemar counts of the panel runs: the page's
    accuracies and deltas are of the panel runs, the same runs condition_paired_counts pairs."""
    runs = {c: panel_runs(paper_wh.db, c) for c in ("closed_book", "no_search", "full")}
    acc = {r["run_id"]: r["accuracy"] for r in _q(paper_wh.db, "SELECT run_id, accuracy FROM model_summary")}
    pairs = {(r["model"], r["condition_from"], r["condition_to"]): r for r in _q(
        paper_wh.db, "SELECT model, condition_from, condition_to, run_from, run_to FROM condition_paired_counts")}
    for r in read_csv(report, "table04_conditions"):
        p = pairs[(r["model"], r["condition_from"], r["condition_to"])]
        assert p["run_from"] == runs[r["condition_from"]][r["model"]]
        assert close(r["panel_accuracy_from"], acc[p["run_from"]]) and close(r["panel_accuracy_to"], acc[p["run_to"]])
        assert close(r["panel_delta_pp"], 100 * (acc[p["run_to"]] - acc[p["run_from"]]), 1e-9)
    shown = {r[0]: r for r in page_tables(report)["table04_conditions"]["rows"]}
    assert set(shown) == set(ABLATED)
    for m in ABLATED:
        z, ns, f = (acc[runs[c][m]] for c in ("closed_book", "no_search", "full"))
        assert shown[m][1:] == [f"{100 * z:.1f}", f"{100 * (ns - z):+.1f}", f"{100 * ns:.1f}",
                                f"{100 * (f - ns):+.1f}", f"{100 * f:.1f}"]
    t18 = {r[0]: r for r in page_tables(report)["table18_zero_full"]["rows"]}
    assert set(t18) == set(ABLATED)
    for m in ABLATED:
        z, f = acc[runs["closed_book"][m]], acc[runs["full"][m]]
        assert t18[m][1:] == [f"{100 * z:.1f}", f"{100 * f:.1f}", f"{100 * (f - z):+.1f}"]


def test_table8_per_sample_tokens_and_total_row(paper_wh: PaperWarehouse, report: Path) -> None:
    t = page_tables(report)["table08_cost"]
    rows, csv_rows = t["rows"], read_csv(report, "table08_cost")
    assert [r[0] for r in t["footer"]] == ["Total"] and len(rows) == len(csv_rows)
    priced = [float(r["total_usd"]) for r in csv_rows if r["total_usd"]]
    assert t["footer"][0][1] == (f"{sum(priced):.2f}" if priced else "–")
    tex = (report / "tables" / "table08_cost.tex").read_text()
    assert "\\midrule\nTotal & " in tex  # after the body, under a rule
    by_model = {r["model"]: r for r in csv_rows}
    for r in rows:
        c = by_model[r[0]]
        assert r[4] == f"{int(c['prompt_tokens']) / int(c['n_items']) / 1000:.0f}"
        assert r[5] == f"{int(c['completion_tokens']) / int(c['n_items']):,.0f}"


def test_table17_has_a_column_per_run(paper_wh: PaperWarehouse, report: Path) -> None:
    reps = _q(paper_wh.db, "SELECT replicate, accuracy, avg_tokens_k FROM model_summary WHERE model = ? AND "
                           "condition = 'full' ORDER BY replicate", [REPLICATED])
    rows = page_tables(report)["table17_reruns"]["rows"]
    i = next(i for i, r in enumerate(rows) if r[0] == REPLICATED)
    assert rows[i][1] == "Accuracy" and rows[i][2:5] == [f"{r['accuracy']:.3f}" for r in reps]
    assert rows[i + 3][:2] == [REPLICATED, "Tokens (k)"]  # the repeated label stays (muted) for sorting and rows[i + 3][2:5] == [f"{r['avg_tokens_k']:.1f}" for r in reps]
    tex = (report / "tables" / "table17_reruns.tex").read_text()
    assert f"\n & Tokens (k) & {reps[0]['avg_tokens_k']:.1f}" in tex  # the LaTeX prints the label once
    accs = [r["accuracy"] for r in reps]
    assert rows[i][5:] == [f"{np.mean(accs):.3f}", f"{np.std(accs):.3f}", f"{max(accs) - min(accs):.3f}"]


def test_table9_and_15_are_wide_blocks_with_an_accuracy_column(paper_wh: PaperWarehouse, report: Path) -> None:
    long = {(r["model"], r["scope"], r["category"]): r for r in read_csv(report, "table09_stopping")}
    for row in page_tables(report)["table09_stopping"]["rows"]:
        m = row[0]
        for j, (scope, cat) in enumerate([("MT-fail", "zero_gold"), ("MT-fail", "premature"), ("MT-fail", "explored"),
                                          ("MT-fail", "stayed")], start=2):
            if (m, scope, cat) in long:
                assert row[j] == f"{100 * float(long[(m, scope, cat)]['share']):.1f}"
    acc = {r["model"]: r["accuracy"] for r in read_csv(report, "table02_main")}
    for row in page_tables(report)["table15_terminations"]["rows"]:
        assert row[1] == f"{100 * float(acc[row[0]]):.1f}"


def test_latex_compiles_and_uses_the_papers_symbols(report: Path, tmp_path: Path) -> None:
    """Every fragment is ASCII (a raw α or → breaks pdflatex), parses with pylatexenc, writes the arrow as
    $\\rightarrow$ and α as $\\alpha$; and compiles with pdflatex + booktabs where the machine has it."""
    walker = pytest.importorskip("pylatexenc.latexwalker")
    texs = sorted((report / "tables").glob("*.tex"))
    for tex in texs:
        text = tex.read_text()
        assert text.isascii(), tex.name
        walker.LatexWalker(text, tolerant_parsing=False).get_latex_nodes()
        assert not re.search(r"[a-z]\\textgreater\{\}[a-z]", text), tex.name
    assert r"$\alpha$" in (report / "tables" / "reliability.tex").read_text()
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        warnings.warn("pdflatex not installed: the .tex files were parsed (pylatexenc), not compiled")
        return
    doc = tmp_path / "all.tex"
    doc.write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[a3paper,landscape]{geometry}\n"
                   "\\begin{document}\n" + "".join(f"\\input{{{t}}}\\par\\bigskip\n" for t in texs)
                   + "\\end{document}\n")
    proc = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", doc.name], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert (tmp_path / "all.pdf").stat().st_size > 0


def test_figure4_buckets_are_the_papers() -> None:
    from agenthop.reports.paper.figures import bucket, bucket_ranges

    assert bucket_ranges(19) == {"low": "0–6", "mid": "7–12", "high": "13–19"}
    assert [bucket(k, 9) for k in range(10)] == ["low"] * 3 + ["mid"] * 4 + ["high"] * 3


def test_every_scatter_label_is_placed_apart() -> None:
    from agenthop.reports.charts import place_labels

    pts = [(0.8 + 0.01 * (i % 4), 0.8 + 0.012 * (i // 4), f"model-{i:02d}-name") for i in range(16)]
    pts += [(0.2 + 0.04 * i, 0.3 + 0.03 * i, f"m{i}") for i in range(5)]
    labels, missing = place_labels(pts, width=560, height=420, x_domain=(0.1, 1.0), y_domain=(0.1, 1.0))
    assert sorted(labels) == list(range(len(pts))) and missing == []


@pytest.mark.browser
def test_wide_paper_tables_sort_by_their_column_headers(browser, report: Path) -> None:  # noqa: F811
    """Table 2 has spanning headers (not the site's one-row sorter): its column headers still sort it."""
    page, errors, _, _ = _open(browser, report / "index.html", 1440)
    th = page.locator("#table2 table.paper th[data-col]", has_text="Accuracy")
    th.click()
    th.click()  # descending
    got = page.evaluate("""() => Array.from(document.querySelectorAll('#table2 table.paper tbody tr:not(.axis-row)'))
        .map(r => r.cells[r.cells.length - 1].textContent.trim())""")
    assert got == sorted(got, key=float, reverse=True) and len(got) == 19, got
    assert page.evaluate("document.querySelectorAll('#table2 tr.axis-row:not([hidden])').length") == 0
    box = page.locator("#table2 .filterbox input")
    box.fill("sim-ce")
    shown = page.evaluate("""() => Array.from(document.querySelectorAll('#table2 table.paper tbody tr'))
        .filter(r => !r.hidden).map(r => r.cells[0].textContent.trim())""")
    assert shown and all(m.startswith("sim-ce") for m in shown), shown
    page.close()
    assert not errors, errors


def test_table16_scores_by_model_with_the_papers_marks(report: Path) -> None:
    t = page_tables(report)["table16_scores"]
    assert t["headers"] == ["Model", "bench-a", "bench-b", "AgentHop"]
    scores = read_csv(report, "table16_scores")
    assert "not-in-panel" not in {r["model"] for r in scores}
    rows = {r[0]: r for r in t["rows"]}
    acc = {r["model"]: r["accuracy"] for r in read_csv(report, "table02_main")}
    assert set(rows) == set(acc)
    for r in scores:
        mark = {"proxy": "∗", "†": "†"}.get(r["mark"], r["mark"])
        assert rows[r["model"]][1 if r["benchmark"] == "bench-a" else 2] == f"{float(r['score']):.1f}{mark}"
        assert rows[r["model"]][3] == f"{100 * float(acc[r['model']]):.1f}"
    assert sum(r["mark"] != "" for r in scores) == 2
    assert r"$^{\ast}$" in (report / "tables" / "table16_scores.tex").read_text()


def test_figure4_buckets_count_the_items(report: Path) -> None:
    items = read_csv(report, "figure04_difficulty")
    n_models = len(read_csv(report, "table02_main"))
    rows = {(r["by"], r["group"]): r for r in read_csv(report, "figure04_buckets")}
    for (by, group), r in rows.items():
        ks = [int(i["n_correct"]) for i in items if by == "all" or i[by] == group]
        assert int(r["n_items"]) == len(ks)
        assert int(r["n_low"]) == sum(3 * k < n_models for k in ks)
        assert int(r["n_high"]) == sum(3 * k > 2 * n_models for k in ks)
        assert int(r["n_low"]) + int(r["n_mid"]) + int(r["n_high"]) == len(ks)
        assert close(r["share_all_correct"], sum(k == n_models for k in ks) / len(ks))
    t = page_tables(report)["figure04_buckets"]
    assert t["headers"] == ["Group", "n", "Low (0–6)", "Mid (7–12)", "High (13–19)", "All correct", "None correct"]
    assert [r[0] for r in t["rows"]][:3] == ["All items", "st_d1", "st_d2"]


def test_the_demo_has_data_for_figure2_table16_and_the_ablations() -> None:
    """`make demo`'s paper report fills Figure 2 (a family with two generations), Table 16 (the shipped
    example --external file, every row a demo model) and Tables 4/18 (a model with all three conditions)."""
    from agenthop.harness.panel import load_panel
    from agenthop.reports.paper.inputs import read_external

    panel = load_panel(REPO / "panels" / "demo.yaml")
    gens: dict[str, set[str]] = {}
    for m in panel.models:
        if m.family and m.generation:
            gens.setdefault(m.family, set()).add(m.generation)
    assert any(len(g) >= 2 for g in gens.values()), gens
    assert any(set(m.conditions) >= {"closed_book", "no_search", "full"} for m in panel.models)
    scores = read_external(REPO / "panels" / "demo_external.csv")
    assert {s.model for s in scores} == {m.name for m in panel.models}
    assert len({s.benchmark for s in scores}) >= 2
    assert "paper --external panels/demo_external.csv" in (REPO / "Makefile").read_text()


def test_table8_lists_the_models_in_table2_order(report: Path) -> None:
    """Like the other per-model tables, Table 8 (page and LaTeX) follows Table 2's order: tier, family, accuracy."""
    from agenthop.reports.paper.export import latex_escape

    order = [r["model"] for r in read_csv(report, "table02_main")]
    tex = (report / "tables" / "table08_cost.tex").read_text(encoding="utf-8")
    rows = [line.split(" & ")[0].strip() for line in tex.splitlines() if " & " in line and line.rstrip().endswith("\\\\")]
    shown = [m for m in rows if m in {latex_escape(o) for o in order}]
    assert shown == [latex_escape(m) for m in order if latex_escape(m) in shown], (shown, order)
    assert len(shown) >= 3
