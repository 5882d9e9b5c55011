"""Cross-check of every contract mart (docs/metrics.md#marts) against an independent Python implementation of docs/metrics.md.

The oracle (tests/oracle/metric_definitions.py) reads only the ``raw`` schema of a built warehouse and computes the
expected mart rows in plain Python; each mart in ``main`` is compared with it row by row (keys per
docs/metrics.md#marts, floats to 1e-9, NULL = NULL, only contract columns). Mismatches are reported with the mart,
the key, the column, the expected and the actual value.
"""

from __future__ import annotations

import math
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from conftest import BuiltWarehouse, _check, cli, dbt_env, run_dbt_build
from oracle import metric_definitions

TOL = 1e-9
#: Marts whose rows are counts of categories: a mart row absent from the oracle is accepted when
#: n = 0 and share (if any) is 0 or NULL (zero-filled categories, metric_definitions R8).
COUNT_MARTS = {"stopping_behavior", "wrong_read_actions", "termination_summary", "evidence_contact_summary",
               "cell_accuracy", "reasoning_type_accuracy", "tool_transitions", "tool_trigrams"}
MAX_REPORTED = 40


def _norm(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, Decimal):
        return float(v)
    return v


def _same(expected: Any, actual: Any) -> bool:
    e, a = _norm(expected), _norm(actual)
    if e is None or a is None:
        return e is None and a is None
    if isinstance(e, (int, float)) and isinstance(a, (int, float)):
        return math.isclose(float(e), float(a), rel_tol=TOL, abs_tol=TOL)
    return e == a


def _mart_rows(con: duckdb.DuckDBPyConnection, mart: str) -> list[dict[str, Any]]:
    cur = con.execute(f"select * from main.{mart}")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def compare_mart(mart: str, keys: tuple[str, ...], expected: list[dict[str, Any]],
                 actual: list[dict[str, Any]]) -> list[str]:
    """Human-readable mismatches between oracle rows and mart rows (empty when they agree)."""
    problems: list[str] = []
    if expected:
        cols = [c for c in expected[0] if c not in keys]
        if actual:
            missing_cols = [c for c in (*keys, *cols) if c not in actual[0]]
            if missing_cols:
                return [f"{mart}: contract column(s) missing from the mart: {missing_cols}"]
    else:
        cols = []
    exp = {tuple(_norm(r[k]) for k in keys): r for r in expected}
    act: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in actual:
        k = tuple(_norm(r[c]) for c in keys)
        if k in act:
            problems.append(f"{mart} {dict(zip(keys, k))}: duplicate key in mart")
        act[k] = r
    for k, e in exp.items():
        kd = dict(zip(keys, k))
        a = act.get(k)
        if a is None:
            problems.append(f"{mart} {kd}: row missing from mart (expected {e})")
            continue
        for c in cols:
            if not _same(e[c], a[c]):
                problems.append(f"{mart} {kd} column {c}: expected {e[c]!r}, actual {a[c]!r}")
    for k, a in act.items():
        zero_fill = mart in COUNT_MARTS and _norm(a.get("n")) == 0 and _norm(a.get("share", 0)) in (0, None)
        if k not in exp and not zero_fill:
            problems.append(f"{mart} {dict(zip(keys, k))}: unexpected row in mart {a}")
    return problems


def compare_condition_deltas(raw: metric_definitions.Raw, trajs: list[metric_definitions.Trajectory],
                             con: duckdb.DuckDBPyConnection) -> list[str]:
    """condition_deltas: docs/metrics.md#marts names no columns; metric_definitions R10 documents the shape compared."""
    expected = metric_definitions.condition_deltas(raw, trajs)
    actual = _mart_rows(con, "condition_deltas")
    return compare_mart("condition_deltas", ("model", "condition_from", "condition_to"), expected, actual)


def assert_warehouse_matches_oracle(db: Path) -> dict[str, Any]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        raw = metric_definitions.load_raw(con)
        trajs = metric_definitions.trajectories(raw)
        expected = metric_definitions.expected_marts(raw)
        problems: list[str] = []
        for mart, keys in metric_definitions.MART_KEYS.items():
            problems += compare_mart(mart, keys, expected[mart], _mart_rows(con, mart))
        problems += compare_condition_deltas(raw, trajs, con)
    finally:
        con.close()
    assert not problems, (
        f"{len(problems)} mismatch(es) between marts and the oracle of docs/metrics.md:\n"
        + "\n".join(problems[:MAX_REPORTED])
        + ("\n..." if len(problems) > MAX_REPORTED else "")
    )
    return {"expected": expected, "trajectories": trajs}


# ----------------------------------------------------------------------------------------------


def test_marts_match_oracle(built_warehouse: BuiltWarehouse) -> None:
    out = assert_warehouse_matches_oracle(built_warehouse.db)
    # the comparison is not vacuous: every mart of the shared warehouse has oracle rows
    for mart in metric_definitions.MART_KEYS:
        assert out["expected"][mart], f"oracle produced no rows for {mart}"


def test_turn_call_counts_consistent(built_warehouse: BuiltWarehouse) -> None:
    """metric_definitions R5 counts tool turns from turns.n_tool_calls; it must equal the tool_calls rows per turn."""
    con = duckdb.connect(str(built_warehouse.db), read_only=True)
    try:
        raw = metric_definitions.load_raw(con)
    finally:
        con.close()
    per_turn: dict[tuple[Any, ...], int] = {}
    for c in raw.tool_calls:
        k = (c["run_id"], c["sample_id"], c["attempt"], c["turn"])
        per_turn[k] = per_turn.get(k, 0) + 1
    bad = []
    for t in raw.turns:
        k = (t["run_id"], t["sample_id"], t["attempt"], t["turn"])
        if t["n_tool_calls"] != per_turn.get(k, 0):
            bad.append((k, t["n_tool_calls"], per_turn.get(k, 0)))
    assert not bad, f"turns.n_tool_calls disagrees with tool_calls rows: {bad[:10]}"
    turn_keys = {(t["run_id"], t["sample_id"], t["attempt"], t["turn"]) for t in raw.turns}
    orphan = [k for k in per_turn if k not in turn_keys]
    assert not orphan, f"tool calls without a turn row: {orphan[:10]}"


EXTREME_PANEL = """\
# Extreme archetypes for the oracle cross-check (tests/test_oracle_marts.py).
defaults: {backend: sim, conditions: [full], replicates: 1}
models:
  - name: greedy-reader
    sim: {archetype: greedy_reader}
  - name: over-searcher
    sim: {archetype: over_searcher}
    replicates: 2
  - name: metadata-looper
    sim: {archetype: metadata_looper}
  - name: early-committer
    sim: {archetype: early_committer}
    conditions: [full, no_search, closed_book]
"""

# ----------------------------------------------------------------------------------------------
# hand-made edge trajectories, inserted into raw.* of the extreme warehouse before dbt runs
#
# Each entry: name -> (question type, list of attempts); an attempt is (terminated_by,
# predicted_index, is_correct, turns); a turn is (role, calls); a call is (tool, paper, status,
# section) where paper is "g" / "g1" / "g2" (gold papers), "seed" (the non-gold seed), None, and
# section is "label" (a section matched by a direct label, by header when there is one),
# "nolabel" (a section no direct label matches) or None.

EDGE_RUN_A = "oracle-edge__full__r0__0000edge"
EDGE_RUN_B = "oracle-edge__full__r1__0001edge"

Call = tuple[str, Any, str, Any]
EDGES: dict[str, tuple[str, list[tuple[str, int, bool, list[tuple[str, list[Call]]]]]]] = {
    # gold read is the very last call: S is empty -> ST 'other'; answer never given
    "E1": ("ST", [("token_limit", -1, False, [("assistant", [("read_section", "g", "ok", "label")])])]),
    # wrong-paper read followed by an unknown tool name -> wrong-read 'other'; no scope (r = 0)
    "E2": ("ST", [("answer", 0, False, [
        ("assistant", [("read_section", "seed", "ok", 0)]),
        ("assistant", [("fetch_pdf", "seed", "unknown_tool", None)]),
        ("assistant", [("submit_answer", None, "ok", None)])])]),
    # after the gold read: navigation + think -> ST 'other' (think only counts without navigation)
    "E3": ("ST", [("answer", 1, True, [
        ("assistant", [("read_section", "g", "ok", "label")]),
        ("assistant", [("get_references", "seed", "ok", None)]),
        ("assistant", [("think", None, "ok", None)]),
        ("assistant", [("submit_answer", None, "ok", None)])])]),
    # wrong read then a read_section without paper (invalid_args) -> 'stay'; a text-only turn and an
    # error turn do not count as tool turns
    "E4": ("ST", [("answer", 2, False, [
        ("assistant", [("read_section", "seed", "ok", 0), ("read_section", None, "invalid_args", None)]),
        ("assistant", []),
        ("error", []),
        ("assistant", [("submit_answer", None, "ok", None)])])]),
    # MT, one gold paper read, then a read_section without paper -> MT-fail 'explored' (metric_definitions R6)
    "E5": ("MT", [("answer", 0, False, [
        ("assistant", [("read_section", "g1", "ok", "label")]),
        ("assistant", [("read_section", None, "invalid_args", None)]),
        ("assistant", [("submit_answer", None, "ok", None)])])]),
    # both gold papers in one turn, nothing after -> MT-both 'other'; section recall holds
    "E6": ("MT", [("budget", -1, False, [
        ("assistant", [("read_section", "g1", "ok", "label"), ("read_section", "g2", "ok", "label")])])]),
    # failed gold read (counts for any_gold_read), delivered read of g1 off-label, think, submit
    # -> MT-fail 'premature' (S has no navigation and no read)
    "E7": ("MT", [("answer", 3, True, [
        ("assistant", [("read_section", "g2", "section_not_found", None)]),
        ("assistant", [("read_section", "g1", "ok", "nolabel")]),
        ("assistant", [("think", None, "ok", None)]),
        ("assistant", [("submit_answer", None, "ok", None)])])]),
    # a failed attempt that covered both papers, then the final attempt: g2 rejected (before the
    # anchor), g1 read, g1 again -> only the final attempt counts: MT-fail 'stayed'. (A rejected g2
    # read *after* the anchor would make it 'explored': docs/metrics.md#stopping-behaviour puts no status on
    # that read_section.)
    "E8": ("MT", [
        ("error", -1, False, [
            ("assistant", [("read_section", "g1", "ok", "label"), ("read_section", "g2", "ok", "label")]),
            ("error", [])]),
        ("answer", 1, False, [
            ("assistant", [("read_section", "g2", "rejected_budget", None), ("read_section", "g1", "ok", "label")]),
            ("assistant", [("read_section", "g1", "ok", "nolabel")]),
        ])]),
    # calls emitted in the turn that crossed the token cap: not executed, but the turn counts
    "E9": ("MT", [("token_limit", -1, False, [
        ("assistant", [("read_section", "g2", "not_executed", None), ("submit_answer", None, "not_executed", None)])])]),
    # nothing but an error turn
    "E11": ("ST", [("error", -1, False, [("error", [])])]),
    # both papers covered in one turn, g2 off-label, submit in the same turn -> MT-both 'immediate',
    # evidence 'none'
    "E12": ("MT", [("answer", 0, True, [
        ("assistant", [("read_section", "g2", "ok", "nolabel"), ("read_section", "g1", "ok", "label"),
                       ("submit_answer", None, "ok", None)])])]),
    # a direct label added by inject_edge_runs (numbered with NBSP, upper case, doubled spaces) is the
    # only direct label of g2's "nolabel" section: norm() makes it a header match -> section recall
    "E13": ("MT", [("answer", 2, True, [
        ("assistant", [("read_section", "g1", "ok", "label"), ("read_section", "g2", "ok", "nolabel")]),
        ("assistant", [("submit_answer", None, "ok", None)])])]),
    # labels added on g's "nolabel" section that must not count: empty arxiv_id, the seed's arxiv_id,
    # and a supporting label on g itself -> no section recall, evidence 'none'
    "E14": ("ST", [("answer", 2, False, [
        ("assistant", [("read_section", "g", "ok", "nolabel"), ("submit_answer", None, "ok", None)])])]),
}
#: The second replicate of the edge model: zero recall everywhere, so its conversion is NULL (R9).
EDGES_B = ("E2", "E9", "E11")

#: Hand-derived expectations (docs/metrics.md#definitions) for the edge trajectories of EDGE_RUN_A.
EDGE_EXPECT: dict[str, dict[str, Any]] = {
    "E1": dict(stop=("ST", "other"), paper_recall=True, section_recall=True, any_gold_read=True,
               n_tool_calls=1, n_tool_turns=1, wrong=[]),
    "E2": dict(stop=None, paper_recall=False, evidence_contact=None, any_gold_read=False, n_tool_calls=3,
               n_tool_turns=3, wrong=["other"]),
    "E3": dict(stop=("ST", "other"), paper_recall=True, n_tool_calls=4, n_tool_turns=4, wrong=[]),
    "E4": dict(stop=None, paper_recall=False, n_tool_calls=3, n_tool_turns=2, wrong=["stay"]),
    "E5": dict(stop=("MT-fail", "explored"), paper_recall=False, evidence_contact=None, wrong=[]),
    "E6": dict(stop=("MT-both", "other"), paper_recall=True, section_recall=True, n_tool_turns=1, wrong=[]),
    "E7": dict(stop=("MT-fail", "premature"), paper_recall=False, any_gold_read=True, section_recall=False),
    "E8": dict(stop=("MT-fail", "stayed"), paper_recall=False, n_tool_calls=3, n_tool_turns=2, wrong=[]),
    "E9": dict(stop=("MT-fail", "zero_gold"), paper_recall=False, any_gold_read=False, n_tool_calls=2,
               n_tool_turns=1),
    "E11": dict(stop=None, n_tool_calls=0, n_tool_turns=0, any_gold_read=False),
    "E12": dict(stop=("MT-both", "immediate"), paper_recall=True, section_recall=False,
                evidence_contact="none", n_tool_calls=3, n_tool_turns=1),
    "E13": dict(stop=("MT-both", "immediate"), paper_recall=True, section_recall=True),
    "E14": dict(stop=("ST", "immediate"), paper_recall=True, section_recall=False, evidence_contact="none"),
}


def _edge_items(raw: metric_definitions.Raw) -> dict[str, tuple[str, dict[str, Any]]]:
    """Pick one distinct item per edge trajectory whose gold papers each have a section matched by a
    direct label and one that is not; returns name -> (sample_id, {placeholder: paper/section})."""
    gold = metric_definitions.item_gold(raw)
    n_sections: dict[str, int] = {}
    for sec in raw.sections:
        n_sections[sec["arxiv_id"]] = max(n_sections.get(sec["arxiv_id"], 0), int(sec["section_index"]) + 1)
    node_arxiv = {(n["sample_id"], n["paper_id"]): n["arxiv_id"] for n in raw.graph_nodes}
    headers = {(sec["arxiv_id"], int(sec["section_index"])): metric_definitions.norm(sec["header"]) for sec in raw.sections}
    pools: dict[str, list[tuple[str, dict[str, Any]]]] = {"ST": [], "MT": []}
    for it in sorted(raw.items, key=lambda r: r["sample_id"]):
        sid, ig = it["sample_id"], gold[it["sample_id"]]
        qt = "ST" if it["question_type"] == "single-target" else "MT"
        if len(ig.papers) != (1 if qt == "ST" else 2):
            continue
        slots: dict[str, Any] = {"seed": it["seed_paper_id"], "seed:arxiv": node_arxiv.get((sid, it["seed_paper_id"]))}
        ok = True
        for name, g in zip(("g",) if qt == "ST" else ("g1", "g2"), ig.papers):
            all_set, header_set = ig.direct_sets[g]
            arxiv = node_arxiv.get((sid, g)) or ""
            n = n_sections.get(arxiv, 0)
            free = [i for i in range(n) if i not in all_set and headers.get((arxiv, i))]
            if not all_set or not free:
                ok = False
                break
            slots[name] = g
            slots[name + ":label"] = min(header_set) if header_set else min(all_set)
            slots[name + ":nolabel"] = free[0]
            slots[name + ":arxiv"] = arxiv
            slots[name + ":nolabel_header"] = headers[(arxiv, free[0])]
        if ok:
            pools[qt].append((sid, slots))
    out = {}
    for name, (qt, _) in EDGES.items():
        if not pools[qt]:
            raise AssertionError(f"the extreme benchmark has too few usable {qt} items for edge {name}")
        out[name] = pools[qt].pop(0)
    return out


def _edge_labels(raw: metric_definitions.Raw, chosen: dict[str, tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Extra recall labels for E13 / E14 (see EDGES)."""
    next_index: dict[str, int] = {}
    for lab in raw.recall_labels:
        next_index[lab["sample_id"]] = max(next_index.get(lab["sample_id"], 0), int(lab["label_index"]) + 1)
    rows = []

    def add(sid: str, arxiv: str | None, section: str, relevance: str) -> None:
        rows.append({"sample_id": sid, "label_index": next_index[sid], "paper_title": None, "arxiv_id": arxiv,
                     "label_section": section, "relevance": relevance})
        next_index[sid] += 1

    sid, slots = chosen["E13"]
    header = slots["g2:nolabel_header"]
    add(sid, slots["g2:arxiv"], "7.1\u00a0" + "  ".join(header.upper().split(" ")), "direct")
    sid, slots = chosen["E14"]
    header = slots["g:nolabel_header"]
    add(sid, "", header, "direct")
    add(sid, slots["seed:arxiv"], header, "direct")
    add(sid, slots["g:arxiv"], header, "supporting")
    return rows


def inject_edge_runs(db: Path) -> dict[str, str]:
    """Insert the hand-made runs EDGE_RUN_A / EDGE_RUN_B into raw.*; returns edge name -> sample_id."""
    con = duckdb.connect(str(db))
    try:
        raw = metric_definitions.load_raw(con)
        chosen = _edge_items(raw)
        template = dict(raw.runs[0])
        runs_rows, traj_rows, turn_rows, call_rows = [], [], [], []
        for run_id, replicate, names in ((EDGE_RUN_A, 0, tuple(EDGES)), (EDGE_RUN_B, 1, EDGES_B)):
            runs_rows.append({**template, "run_id": run_id, "model": "oracle-edge", "condition": "full",
                              "replicate": replicate, "_source": "tests/test_oracle_marts.py"})
            for name in names:
                sid, slots = chosen[name]
                attempts = EDGES[name][1]
                for attempt, (term, pred, correct, turns) in enumerate(attempts):
                    seq = 0
                    budget = 30
                    for turn_no, (role, calls) in enumerate(turns):
                        before = budget
                        for ci, (tool, paper, status, section) in enumerate(calls):
                            pid = slots[paper] if paper is not None else None
                            rsi = slots[f"{paper}:{section}"] if isinstance(section, str) else section
                            cost = (5 if tool == "search_papers" else 0 if tool in ("think", "submit_answer")
                                    else 1) if status not in metric_definitions.NOT_ATTEMPTED else 0
                            budget -= cost
                            call_rows.append({
                                "run_id": run_id, "sample_id": sid, "attempt": attempt, "turn": turn_no,
                                "call_index": ci, "seq": seq, "tool": tool, "args_json": "{}",
                                "paper_id": pid, "section_query": None, "resolved_header": None,
                                "resolved_section_index": rsi if status == "ok" else None,
                                "search_query": None, "answer": "A" if tool == "submit_answer" else None,
                                "cost": cost, "status": status, "output_chars": 10, "budget_after": budget})
                            seq += 1
                        turn_rows.append({
                            "run_id": run_id, "sample_id": sid, "attempt": attempt, "turn": turn_no, "role": role,
                            "n_tool_calls": len(calls), "prompt_tokens": 100, "completion_tokens": 10,
                            "cache_read_tokens": 0, "cache_creation_tokens": 0,
                            "cumulative_tokens": 110 * (turn_no + 1), "budget_before": before,
                            "budget_after": budget, "content_chars": 0, "t_offset_s": float(turn_no)})
                    traj_rows.append({
                        "run_id": run_id, "sample_id": sid, "attempt": attempt,
                        "is_final": attempt == len(attempts) - 1, "predicted_answer": None,
                        "predicted_index": pred, "is_correct": correct, "terminated_by": term,
                        "total_turns": len(turns), "budget_used": 30 - budget, "total_prompt_tokens": 100 * len(turns),
                        "total_completion_tokens": 10 * len(turns), "cache_read_tokens": 0,
                        "cache_creation_tokens": 0, "total_tokens": 110 * len(turns) + 1000 * attempt,
                        "tool_errors": 0, "api_error_count": 0, "transient_retry_count": 0, "wall_time_s": 0.5,
                        "reasoning": None})
        for table, rows in (("runs", runs_rows), ("trajectories", traj_rows), ("turns", turn_rows),
                            ("tool_calls", call_rows), ("recall_labels", _edge_labels(raw, chosen))):
            cols = list(rows[0])
            con.executemany(
                f"insert into raw.{table} ({', '.join(cols)}) values ({', '.join('?' for _ in cols)})",
                [[r[c] for c in cols] for r in rows])
    finally:
        con.close()
    return {name: sid for name, (sid, _) in chosen.items()}


@pytest.fixture(scope="module")
def extreme_warehouse(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    work = tmp_path_factory.mktemp("oracle_extreme")
    bench, runs, db, panel = work / "benchmark", work / "runs", work / "warehouse.duckdb", work / "panel.yaml"
    panel.write_text(EXTREME_PANEL, encoding="utf-8")
    env = dbt_env(db)
    _check(subprocess.run([cli("agenthop-harness"), "make-benchmark", "--out", str(bench), "--items", "40",
                           "--seed", "20240611"], env=env, capture_output=True, text=True), "make-benchmark")
    _check(subprocess.run([cli("agenthop-harness"), "run", "--panel", str(panel), "--data", str(bench),
                           "--out", str(runs), "--no-progress"], env=env, capture_output=True, text=True),
           "harness run")
    _check(subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(bench), "--runs", str(runs)],
                          env=env, capture_output=True, text=True), "ingest")
    edges = inject_edge_runs(db)
    # models and seeds only (the schema tests run on the shared warehouse): this one checks numbers
    proc = run_dbt_build(db, work, "--exclude-resource-type", "test", "unit_test",
                         "--select", *(f"+{m}" for m in (*metric_definitions.MART_KEYS, "condition_deltas")))
    _check(proc, "dbt build (models)")
    return db, edges


def test_edge_trajectories_oracle_by_hand(extreme_warehouse: tuple[Path, dict[str, str]]) -> None:
    """The oracle itself against hand-derived values for the injected edge trajectories."""
    db, edges = extreme_warehouse
    con = duckdb.connect(str(db), read_only=True)
    try:
        raw = metric_definitions.load_raw(con)
    finally:
        con.close()
    by_key = {(t.run_id, t.sample_id): t for t in metric_definitions.trajectories(raw)}
    for name, exp in EDGE_EXPECT.items():
        t = by_key[(EDGE_RUN_A, edges[name])]
        assert metric_definitions.stopping_category(t) == exp["stop"], name
        for attr in ("paper_recall", "section_recall", "evidence_contact", "any_gold_read", "n_tool_turns"):
            if attr in exp:
                assert getattr(t, attr) == exp[attr], (name, attr)
        if "n_tool_calls" in exp:
            assert len(t.calls) == exp["n_tool_calls"], name
        if "wrong" in exp:
            gold = set(t.gold)
            acts = [metric_definitions.wrong_read_action(t.calls[i + 1], gold) for i in range(len(t.calls) - 1)
                    if metric_definitions.is_delivered(t.calls[i]) and t.calls[i]["paper_id"] not in gold]
            assert acts == exp["wrong"], name
    # the zero-recall replicate has no conversion; the rerun group still counts it (R9)
    rv = {r["metric"]: r for r in metric_definitions.rerun_variance(raw, list(by_key.values())) if r["model"] == "oracle-edge"}
    assert rv["conversion"]["n_runs"] == 2
    conv_a = metric_definitions.run_metrics(list(by_key.values()))[EDGE_RUN_A]["conversion"]
    assert rv["conversion"]["mean"] == pytest.approx(conv_a) and rv["conversion"]["std"] == 0.0


def test_extreme_panel_marts_match_oracle(extreme_warehouse: tuple[Path, dict[str, str]]) -> None:
    db, _ = extreme_warehouse
    out = assert_warehouse_matches_oracle(db)
    exp = out["expected"]
    terminations = {r["terminated_by"] for r in exp["termination_summary"]}
    stopping = {(r["scope"], r["category"]) for r in exp["stopping_behavior"]}
    actions = {r["action"] for r in exp["wrong_read_actions"]}
    # the panel and the edge runs reach categories the shared warehouse does not
    assert {"token_limit", "budget", "error"} <= terminations, terminations
    assert {("ST", "other"), ("MT-both", "other"), ("MT-fail", "zero_gold"), ("MT-fail", "premature"),
            ("MT-fail", "stayed"), ("MT-fail", "explored")} <= stopping, stopping
    assert {"other", "stay"} <= actions, actions
    looper = [r for r in exp["model_summary"] if r["model"] == "metadata-looper"]
    assert looper and all(r["recall_st"] == 0 and r["recall_mt"] == 0 for r in looper)
