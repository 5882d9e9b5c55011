"""Picking runs: one picker (reports/core/runs.py::pick_runs) serves the shared pages and AgentHop's own
pages, so its rules and error texts cannot drift apart again."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agenthop.harness.errors import AgentHopError
from agenthop.reports.core.runs import RunInfo, model_runs, pick_runs

REPORTS = Path(__file__).resolve().parents[1] / "reports"


def _runs() -> list[RunInfo]:
    return [RunInfo("a0", "alpha", "full", 0, benchmark="agenthop"),
            RunInfo("a1", "alpha", "full", 1, benchmark="agenthop"),
            RunInfo("ac", "alpha", "closed_book", 0, benchmark="agenthop"),
            RunInfo("b0", "beta", "full", 0, benchmark="agenthop"),
            RunInfo("x0", "gamma", "full", 0, benchmark="agenthop"),
            RunInfo("x1", "gamma", "full", 0, benchmark="sciexplore")]


def test_pick_runs_by_model_and_by_id() -> None:
    runs = _runs()
    assert [r.run_id for r in pick_runs(runs, models=["alpha", "beta"])] == ["a0", "b0"]
    assert [r.run_id for r in pick_runs(runs, models=["alpha"], condition="closed_book")] == ["ac"]
    assert [r.run_id for r in pick_runs(runs, run_ids=["a1"], models=["alpha"])] == ["a1", "a0"]
    assert [r.run_id for r in pick_runs(runs, models=["gamma"], benchmark="sciexplore")] == ["x1"]
    assert [r.run_id for r in model_runs(runs, "alpha")] == ["a0", "a1", "ac"]


@pytest.mark.parametrize(("kw", "message"), [
    ({"models": ["nope"]}, "unknown model 'nope'; known models: alpha, beta, gamma"),
    ({"run_ids": ["r9"]}, "unknown run id 'r9'; known run ids: a0, a1, ac, b0, x0, x1"),
    ({"models": ["beta"], "condition": "closed_book"},
     "model 'beta' has no 'closed_book' run (it has: full); use --condition or --runs"),
    ({"models": ["alpha", "alpha"]}, "model 'alpha' is given twice (both pick run 'a0'); to compare its replicates "
                                     "pass --runs RUN_A,RUN_B, or use: agenthop-report reruns --model alpha"),
    ({"run_ids": ["a0", "a0"]}, "run 'a0' is given twice; name different runs"),
    ({"models": ["gamma"]}, "model 'gamma' has runs of several benchmarks (agenthop, sciexplore); say which with "
                            "--benchmark, or pass --runs"),
    ({"models": ["alpha"], "benchmark": "other"}, "unknown benchmark 'other'; the warehouse holds runs of: "
                                                  "agenthop, sciexplore"),
])
def test_pick_runs_errors(kw: dict, message: str) -> None:
    with pytest.raises(AgentHopError) as exc:
        pick_runs(_runs(), **kw)
    assert str(exc.value) == message


def test_agenthop_pages_use_the_shared_picker(built_warehouse) -> None:  # type: ignore[no-untyped-def]
    """resolve_runs (model_summary) and select_runs (run_summary) pick the same runs and fail the same way."""
    from agenthop.reports.core.runs import select_runs
    from agenthop.reports.agenthop.queries import resolve_runs, runs_of_model
    from agenthop.reports.warehouse import Warehouse

    with Warehouse(built_warehouse.db) as wh:
        assert ([r.run_id for r in resolve_runs(wh, models=["verifier", "balanced"])]
                == [r.run_id for r in select_runs(wh, models=["verifier", "balanced"])])
        for kw in ({"models": ["no-such-model"]}, {"run_ids": ["nope1"]}, {"models": ["verifier", "verifier"]},
                   {"models": ["verifier"], "condition": "no_such_condition"}):
            errors = []
            for fn in (resolve_runs, select_runs):
                with pytest.raises(AgentHopError) as exc:
                    fn(wh, **kw)
                errors.append(str(exc.value))
            assert errors[0] == errors[1], kw
        with pytest.raises(AgentHopError, match="unknown model 'x'; known models: "):
            runs_of_model(wh, "x")


def test_the_picker_is_written_once() -> None:
    """Its error texts live in one module: a second copy of the picker would bring a second copy of them."""
    texts = ("is given twice", "known run ids", "use --condition or --runs")
    for text in texts:
        holders = sorted(str(p.relative_to(REPORTS)) for p in REPORTS.rglob("*.py")
                         if re.search(re.escape(text), p.read_text(encoding="utf-8")))
        assert holders == ["core/runs.py"], (text, holders)


def test_agenthop_runs_are_the_shared_pickers_with_their_model_summary_row(built_warehouse) -> None:  # type: ignore[no-untyped-def]
    """AgentHop's pages start from the shared picker's runs (run_summary) and only add model_summary's row:
    the same runs in the same order, each with Table 2's columns; a run model_summary lacks is a user
    error naming it."""
    import duckdb

    from agenthop.reports.agenthop.queries import all_runs, with_summary
    from agenthop.reports.core.runs import select_runs
    from agenthop.reports.warehouse import Warehouse

    con = duckdb.connect(str(built_warehouse.db), read_only=True)
    try:
        expected = [r for (r,) in con.execute(
            "SELECT run_id FROM model_summary ORDER BY model, condition, replicate, run_id").fetchall()]
        recall = dict(con.execute("SELECT run_id, recall_st FROM model_summary").fetchall())
    finally:
        con.close()
    with Warehouse(built_warehouse.db) as wh:
        runs = all_runs(wh)
        assert [r.run_id for r in runs] == expected
        assert all(r.benchmark == "agenthop" and r.summary["recall_st"] == recall[r.run_id] for r in runs)
        picked = select_runs(wh, models=["verifier", "balanced"])
        mine = with_summary(wh, picked)
        assert [r.run_id for r in mine] == [r.run_id for r in picked]
        assert all("recall_st" in r.summary and "recall_st" not in p.summary for r, p in zip(mine, picked))
        with pytest.raises(AgentHopError, match=r"^run ghost-run \(ghost\) is not in model_summary"):
            with_summary(wh, [RunInfo("ghost-run", "ghost", "full", 0)])
