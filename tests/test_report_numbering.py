"""Item pages number turns, calls and messages from 1, as the agent's own status line does: the row of a
call's turn reads the same number as the "Turn: N" the tool's reply ends with (the harness's footer)."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
from bs4 import BeautifulSoup

from agenthop.reports.core.runs import RunInfo
from agenthop.reports.trajectories import align, budget_curve
from tests.report_fixtures import run

FOOTER = re.compile(r"Turn: (\d+)\s+\|")


def test_align_and_the_budget_curve_number_from_one() -> None:
    runs = [RunInfo("r", "m", "full", 0)]
    calls = [{"run_id": "r", "sample_id": "s", "turn": 0, "seq": 0, "cost": 1, "tool": "a"},
             {"run_id": "r", "sample_id": "s", "turn": 0, "seq": 1, "cost": 2, "tool": "b"},
             {"run_id": "r", "sample_id": "s", "turn": 3, "seq": 2, "cost": 0, "tool": "c"}]
    item = align("s", runs, [], calls)
    assert [t for t, _ in item.rows] == [1, 4]
    assert [len(c[0]) for _, c in item.rows] == [2, 1]
    curve = budget_curve(calls, runs)
    assert [(p["seq"], p["turn"], p["spent"]) for p in curve] == [(1, 1, 1), (2, 1, 3), (3, 4, 3)]


def test_turn_column_agrees_with_the_turn_the_agent_was_told(messages_warehouse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = messages_warehouse.db
    con = duckdb.connect(str(db), read_only=True)
    sample = con.execute(
        "SELECT sample_id FROM fct_tool_call WHERE run_id = ? AND output_text LIKE '%Turn: %' GROUP BY sample_id "
        "HAVING count(DISTINCT turn) >= 3 ORDER BY sample_id LIMIT 1", [messages_warehouse.run_ids[0]]).fetchone()[0]
    con.close()
    out = tmp_path / "item.html"
    code, _, err = run("item", sample, "--runs", ",".join(messages_warehouse.run_ids), "--db", str(db), "--out", str(out))
    assert code == 0, err
    soup = BeautifulSoup(out.read_text(encoding="utf-8"), "html.parser")
    checked = 0
    for tr in soup.select("table.calls:not(.transcripts) tbody tr"):  # the calls, not the transcript beneath
        shown = tr.select_one("td.turn").get_text(strip=True)
        for pre in tr.select("pre.received-text"):
            told = FOOTER.findall(pre.get_text())
            if told:
                assert told[-1] == shown, (shown, told)
                checked += 1
    assert checked >= 3
    first = soup.select_one("table.calls tbody tr td.turn").get_text(strip=True)
    assert first == "1"
    seqs = [int(s.get_text(strip=True).lstrip("#")) for s in soup.select("table.calls .call-head .meta")]
    assert min(seqs) == 1 and 0 not in seqs
