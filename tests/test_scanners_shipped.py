"""The scanners the project ships (ingest/scanners/shipped/), run over the hand-built warehouse of
scanner_fixtures.py: every result worked out by hand from that file."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
import scanner_fixtures as fx
from click.testing import CliRunner

from agenthop.ingest.scanners.cli import main as scan_main
from agenthop.ingest.scanners.definitions import SHIPPED, load_scanners

UNITS = [("r1", "s1", 0), ("r1", "s2", 0), ("r1", "s3", 0), ("r1", "s3", 1), ("r2", "s1", 0), ("r2", "s2", 0)]


def _found(db: Path) -> dict[str, dict[tuple, tuple]]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT scanner, run_id, sample_id, attempt, value, label, evidence FROM raw.scanner_results "
                           "ORDER BY ALL").fetchall()
    out: dict[str, dict[tuple, tuple]] = {}
    for scanner, *unit, value, label, evidence in rows:
        out.setdefault(scanner, {})[tuple(unit)] = (value, label, evidence)
    return out


def test_every_shipped_file_loads() -> None:
    names = sorted(p.stem for p in SHIPPED.glob("*.yml"))
    assert names == ["agenthop", "common", "sciexplore"]
    for name in names:
        assert load_scanners(SHIPPED / f"{name}.yml")


def test_common_scanners_by_hand(tmp_path: Path) -> None:
    db = fx.build(tmp_path / "w.duckdb")
    r = CliRunner().invoke(scan_main, ["--scanners", "shipped:common", "--db", str(db)])
    assert r.exit_code == 0, r.output
    found = _found(db)

    def flagged(scanner: str) -> dict[tuple, tuple]:
        assert set(found[scanner]) == set(UNITS)  # every attempt classified, zeros included
        return {u: v for u, v in found[scanner].items() if v[0]}

    assert flagged("repeated_call") == {("r1", "s1", 0): (1.0, None, [{"turn": 1, "seq": 0}]),
                                        ("r1", "s3", 0): (1.0, None, [{"turn": 1, "seq": 0}])}
    # the failed fetch of r1/s3 attempt 0 is retried identically as the next call (turn 2, seq 1)
    assert flagged("retry_after_error") == {("r1", "s3", 0): (1.0, None, [{"turn": 2, "seq": 1}])}
    assert flagged("answer_without_tool_call") == {("r1", "s2", 0): (1.0, None, None)}
    assert flagged("limit_reached") == {("r1", "s3", 1): (1.0, "max_turns", None), ("r2", "s2", 0): (1.0, "budget", None)}
    assert flagged("give_up_or_hedge") == {("r1", "s1", 0): (1.0, None, None)}
    assert flagged("unknown_tool_call") == {("r1", "s3", 1): (1.0, "teleport", [{"turn": 1, "seq": 0}])}


def test_agenthop_scanners_by_hand(tmp_path: Path) -> None:
    db = fx.build(tmp_path / "w.duckdb")
    con = duckdb.connect(str(db))
    # r3 (AgentHop): a metadata loop, three reads in a row, a submit after think, a budget rejection;
    # r4 (another benchmark) is left alone by AgentHop's scanners
    fx.insert(con, "runs", [{"run_id": "r3", "model": "m3", "backend": "sim", "condition": "full",
                             "benchmark": "agenthop", "config_json": "{}"},
                            {"run_id": "r4", "model": "m4", "backend": "sim", "condition": "",
                             "benchmark": "inspect_task", "config_json": "{}"}])
    fx.insert(con, "trajectories", [{"run_id": r, "sample_id": "s1", "attempt": 0, "is_final": True,
                                     "terminated_by": "answer"} for r in ("r3", "r4")])
    tools = ["get_paper_info", "get_references", "get_paper_info", "read_section", "read_section", "read_section",
             "think", "submit_answer"]
    calls = [{"run_id": "r3", "sample_id": "s1", "attempt": 0, "turn": i + 1, "seq": i, "tool": t, "args_json": "{}",
              "status": "ok"} for i, t in enumerate(tools)]
    calls.append({"run_id": "r3", "sample_id": "s1", "attempt": 0, "turn": 9, "seq": 8, "tool": "read_section",
                  "args_json": '{"x": 1}', "status": "rejected_budget"})
    fx.insert(con, "tool_calls", calls)
    con.close()
    r = CliRunner().invoke(scan_main, ["--scanners", "shipped:agenthop", "--db", str(db), "--runs", "r3",
                                       "--runs", "r4", "--runs", "r2"])
    assert r.exit_code == 0, r.output
    found = _found(db)
    r3 = ("r3", "s1", 0)
    assert {s: v[r3][0] for s, v in found.items()} == {
        "agenthop_never_read": 0.0, "agenthop_submit_without_think": 0.0,
        "agenthop_back_to_back_reads": 2.0,  # reads 3 -> 4 and 4 -> 5 (5 is followed by think)
        "agenthop_greedy_read_chain": 1.0, "agenthop_metadata_loop": 1.0, "agenthop_budget_rejection": 1.0}
    # r2 is an AgentHop run of the fixture (search and submit tools): it never reads; r4 is not scanned
    assert found["agenthop_never_read"][("r2", "s1", 0)][0] == 1.0
    assert not any(u[0] == "r4" for v in found.values() for u in v)


@pytest.mark.parametrize("name", ["sciexplore"])
def test_benchmark_scanners_skip_runs_of_other_benchmarks(tmp_path: Path, name: str) -> None:
    db = fx.build(tmp_path / "w.duckdb")
    r = CliRunner().invoke(scan_main, ["--scanners", f"shipped:{name}", "--db", str(db)])
    assert r.exit_code == 0 and "0 run scan(s) written" in r.output, r.output
