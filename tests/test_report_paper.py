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
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from scipy import stats as sps

from agenthop.reports.cli import main
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
    return build_paper_warehouse(tmp_path_factory.mktemp("paper19"))


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
        w.writerow(["model", "benchmark", "score"])
        for i, m in enumerate(models):
            w.writerow([m, "bench-a", round(50 + 40 * accs[m] + (i % 5), 2)])  # correlated, with noise
            w.writerow([m, "bench-b", (i * 37) % 19])  # unrelated
        w.writerow(["not-in-panel", "bench-a", 10])
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
    """Parse a booktabs tabular fragment; returns its number of data rows (without group headers)."""
    lines = [ln for ln in tex.splitlines() if ln.strip() and not ln.lstrip().startswith("%")]
    m = re.fullmatch(r"\\begin\{tabular\}\{([lrc]+)\}", lines[0])
    assert m, lines[0]
    ncols = len(m.group(1))
    assert lines[1] == r"\toprule" and lines[3] == r"\midrule" and lines[-2] == r"\bottomrule"
    assert lines[-1] == r"\end{tabular}"
    assert [ln for ln in lines if ln in (r"\toprule", r"\bottomrule")] == [r"\toprule", r"\bottomrule"]
    body = 0
    for ln in [lines[2], *lines[4:-2]]:
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
    return body - 1  # minus the header row


def test_every_table_is_a_booktabs_fragment(report: Path) -> None:
    texs = sorted((report / "tables").glob("*.tex"))
    assert len(texs) >= 15
    for tex in texs:
        n = check_booktabs(tex.read_text())
        csv_rows = len(read_csv(report, tex.stem))
        assert n == csv_rows, tex.name


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

from test_report_browser import OVERLAPS_JS, _check_links, _open, browser  # noqa: E402,F401


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
    page.close()
    assert not errors and not blocked, (errors, blocked)


def test_every_link_of_the_paper_report_resolves(report: Path) -> None:
    pages = [report / "index.html", *sorted((report / "index_files" / "items").glob("*.html"))]
    assert len(pages) == 21
    assert sum(_check_links(p) for p in pages) > 100
