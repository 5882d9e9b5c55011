"""The benchmark's yardstick (bench/handwritten.sql) must compute the same numbers as the marts,
otherwise the dbt-vs-handwritten ratio in the README would compare different work."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from run_bench import handwritten_query  # noqa: E402

SUMMARY_COLS = ("accuracy recall_st recall_mt secrec_st secrec_mt conversion_st conversion_mt calls_per_turn "
                "avg_tokens_k avg_turns avg_budget max_tokens_rate max_turns_rate max_budget_rate error_rate "
                "na_rate n_items").split()


def test_handwritten_query_equals_marts(built_warehouse, tmp_path: Path) -> None:
    elapsed, counts = handwritten_query(built_warehouse.runs, built_warehouse.db, keep=tmp_path / "hw.duckdb")
    assert elapsed > 0 and counts["hw_model_summary"] > 0
    con = duckdb.connect(str(tmp_path / "hw.duckdb"), read_only=True)
    con.execute(f"ATTACH '{built_warehouse.db}' AS m (READ_ONLY)")
    n_runs = con.execute("select count(*) from m.main.model_summary").fetchone()[0]
    assert counts["hw_model_summary"] == n_runs
    for col in SUMMARY_COLS:
        bad = con.execute(
            f"select count(*) from hw_model_summary h full join m.main.model_summary s using (run_id) "
            f"where h.{col} is distinct from s.{col} and not abs(h.{col} - s.{col}) <= 1e-9").fetchone()[0]
        assert bad == 0, col
    assert con.execute(
        "select count(*) from hw_stopping_behavior h full join (select * from m.main.stopping_behavior where n > 0) s "
        "using (run_id, scope, category) where h.n is distinct from s.n or h.n_scope is distinct from s.n_scope"
    ).fetchone()[0] == 0
    assert con.execute(
        "select count(*) from hw_tool_transitions h full join (select * from m.main.tool_transitions where n > 0) s "
        "using (run_id, prev_tool, next_tool) where h.n is distinct from s.n or abs(h.p_next - s.p_next) > 1e-9"
    ).fetchone()[0] == 0
