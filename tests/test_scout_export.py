"""`agenthop-report export --format scout` and the round trip through Inspect Scout itself (docs/interchange.md#inspect-scout):
the hand-built transcripts of tests/search_fixtures.py exported as a transcript database, validated and scanned by a
pinned Scout with grep scanners (no model), its results imported and joined to outcomes in ``behaviour_outcomes``;
every expected value is worked out from that file."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from conftest import _check, cli, run_dbt_build
from interchange_validators import EeeValidator, scout_cli
from search_fixtures import CORRECT, SYSTEM, TRANSCRIPTS, USER, shared_warehouse

SCANNERS = '''
from inspect_scout import Scanner, Transcript, grep_scanner, scanner


@scanner(messages="all")
def timeouts() -> Scanner[Transcript]:
    return grep_scanner("timeout")


@scanner(messages="all")
def labelled() -> Scanner[Transcript]:
    return grep_scanner({"timeout": ["timeout"], "answer_b": ["answer is b"]})
'''


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_warehouse(tmp_path_factory, "scout")


@pytest.fixture(scope="session")
def scout() -> EeeValidator:
    return scout_cli()


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd, timeout=900)


def export(db: Path, out: Path, *extra: str) -> list[Path]:
    r = run(cli("agenthop-report"), "export", "--format", "scout", "--out", out, "--db", db, *extra)
    assert r.returncode == 0, r.stderr[-2000:]
    return sorted(out.iterdir())


def texts(run_id: str, sample_id: str) -> list[str]:
    t = TRANSCRIPTS[(run_id, sample_id)]
    return [SYSTEM, USER, t["a0"], *t["outs"], t["a1"], "recorded"]


def test_export_writes_one_transcript_per_final_attempt(wh: Path, tmp_path: Path) -> None:
    files = export(wh, tmp_path / "tdb")
    assert len(files) == 1 and re.fullmatch(r"transcripts_\d{8}T\d{6}_[0-9a-f]{8}\.parquet", files[0].name)
    rows = {(r["run_id"], r["sample_id"]): r for r in pq.read_table(files[0]).to_pylist()}
    assert set(rows) == set(TRANSCRIPTS)
    r = rows[("run-c", "st_0002")]
    assert (r["task_set"], r["task_id"], r["task_repeat"], r["model"], r["source_id"], r["attempt"]) == (
        "agenthop", "st_0002", 2, "m1", "run-c", 0)
    assert (r["score"], r["success"], r["message_count"], r["total_tokens"], r["limit"]) == ("1.0", True, 7, 1100, None)
    assert rows[("run-b", "st_0002")]["limit"] == "turns" and rows[("run-b", "st_0002")]["success"] is False
    msgs = json.loads(r["messages"])
    assert [m["content"] for m in msgs] == texts("run-c", "st_0002")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "tool", "assistant", "tool"]
    assert msgs[3]["function"] == "list_sections" and msgs[3]["tool_call_id"] == "c3"
    assert [m["id"] for m in msgs] == [f"{r['transcript_id']}-{i}" for i in range(1, 8)]
    # the same export again: the same file, the same bytes; one run alone: its three transcripts
    again = export(wh, tmp_path / "again")
    assert [f.name for f in again] == [files[0].name] and again[0].read_bytes() == files[0].read_bytes()
    one = pq.read_table(export(wh, tmp_path / "one", "--runs", "run-b")[0]).to_pylist()
    assert sorted(x["sample_id"] for x in one) == ["mt_0001", "st_0001", "st_0002"]
    assert {x["transcript_id"] for x in one} == {rows[("run-b", s)]["transcript_id"] for s in ("mt_0001", "st_0001", "st_0002")}


def test_scout_round_trip_joins_findings_to_outcomes(wh: Path, tmp_path: Path, scout: EeeValidator) -> None:
    if scout.cli is None:
        pytest.skip(scout.reason)
    tdb = tmp_path / "tdb"
    export(wh, tdb)
    v = run(scout.cli, "db", "validate", tdb)
    assert v.returncode == 0, v.stdout + v.stderr
    (tmp_path / "scanners.py").write_text(SCANNERS)
    s = run(scout.cli, "scan", "scanners.py", "-T", tdb, "--scans", tmp_path / "scans", "--display", "plain",
            cwd=tmp_path)
    assert s.returncode == 0, s.stdout[-3000:] + s.stderr[-3000:]
    (scan,) = (tmp_path / "scans").glob("scan_id=*")
    r = run(cli("agenthop-ingest"), "--db", wh, "--scout-results", scan)
    assert r.returncode == 0 and "loaded 18 Inspect Scout result(s) of 2 scanner(s)" in r.stdout, r.stdout + r.stderr
    _check(run_dbt_build(wh, tmp_path), "dbt build")

    # by hand: grep counts every case-insensitive match in every message of the transcript
    def count(rid: str, sid: str, pattern: str) -> int:
        return sum(len(re.findall(pattern, t, re.IGNORECASE)) for t in texts(rid, sid))

    want_counts = {k: float(count(*k, "timeout")) for k in TRANSCRIPTS}
    assert want_counts[("run-c", "st_0002")] == 2.0 and want_counts[("run-a", "st_0002")] == 2.0
    con = duckdb.connect(str(wh), read_only=True)
    try:
        got = {(rid, sid): v for rid, sid, v in con.execute(
            "SELECT run_id, sample_id, value FROM raw.scanner_results WHERE scanner = 'timeouts'").fetchall()}
        found_in = {(rid, sid): [(e["turn"], e["seq"]) for e in ev] for rid, sid, ev in con.execute(
            "SELECT run_id, sample_id, evidence FROM raw.scanner_results WHERE scanner = 'timeouts'").fetchall()}
        versions = {v for (v,) in con.execute("SELECT DISTINCT scanner_version FROM raw.scanner_results").fetchall()}
        (why,) = con.execute("SELECT explanation FROM raw.scanner_results WHERE scanner = 'labelled' "
                             "AND run_id = 'run-c' AND sample_id = 'st_0001'").fetchone()
        labelled = {(rid, sid): v for rid, sid, v in con.execute(
            "SELECT run_id, sample_id, value FROM raw.scanner_results WHERE scanner = 'labelled'").fetchall()}
        outcomes = {(r[0], r[1]): r[2:] for r in con.execute(
            "SELECT run_id, scanner, n_with, n_without, mean_with, mean_without FROM main.behaviour_outcomes "
            "WHERE metric = 'correct' ORDER BY ALL").fetchall()}
    finally:
        con.close()
    assert got == want_counts
    # evidence: the (turn, tool call) of every message that matched; the fixture's seven messages are system,
    # user, turn 0's text and its calls 0 and 1, turn 1's text and its call 2
    layout = [None, None, (0, None), (0, 0), (0, 1), (1, None), (1, 2)]
    assert found_in == {k: [layout[i] for i, t in enumerate(texts(*k)) if re.search("timeout", t, re.IGNORECASE)]
                        for k in TRANSCRIPTS}
    assert found_in[("run-a", "st_0002")] == [(0, None), (0, 0)]  # "timeout" in the text, "TIMEOUT" in a result
    assert versions == {f"scout 0 {scan.name.replace('_id=', ':')}"}  # Scout writes the version as a number
    assert why.startswith("answer_b: [M6]: ASSISTANT: The **answer is B**.")
    # a labelled grep is one result set per transcript: its value is how many of its labels matched
    assert labelled == {k: float((count(*k, "timeout") > 0) + (count(*k, "answer is b") > 0)) for k in TRANSCRIPTS}

    def expected(found: set[tuple[str, str]], rid: str) -> tuple:
        with_ = [float(k in CORRECT) for k in TRANSCRIPTS if k[0] == rid and k in found]
        without = [float(k in CORRECT) for k in TRANSCRIPTS if k[0] == rid and k not in found]
        mean = lambda xs: round(sum(xs) / len(xs), 12) if xs else None  # noqa: E731
        return (len(with_), len(without), mean(with_), mean(without))

    for scanner, values in (("timeouts", got), ("labelled", labelled)):
        found = {k for k, v in values.items() if v > 0}
        for rid in ("run-a", "run-b", "run-c"):
            assert outcomes[(rid, scanner)] == expected(found, rid), (rid, scanner)
    # run-a: flagged st_0001 (right) and st_0002 (wrong); not flagged mt_0001 (wrong)
    assert outcomes[("run-a", "timeouts")] == (2, 1, 0.5, 0.0)


def test_messages_built_from_turns_carry_calls_and_turns() -> None:
    """A run that kept no messages: the input, each turn with its calls, each call's status as its result."""
    from agenthop.reports.interchange.scout import transcripts
    from agenthop.reports.interchange.source import RunExport

    def call(turn: int, index: int, seq: int, tool: str) -> dict:
        return {"turn": turn, "call_index": index, "seq": seq, "tool": tool, "args_json": '{"q": 1}', "status": "ok"}

    turn = {"error_text": None}
    ex = RunExport(
        run={"run_id": "r", "benchmark": "b", "model": "m", "epoch": 1, "backend": "sim", "started_at": None},
        metrics=[], values={},
        trajectories=[{"sample_id": "s", "attempt": 1, "is_final": True, "predicted_answer": "A", "score": 0.0,
                       "is_correct": False, "total_tokens": 10, "wall_time_s": 2.0, "terminated_by": "budget"},
                      {"sample_id": "s", "attempt": 0, "is_final": False}],
        details={"messages": {}, "turns": {("s", 1): [{**turn, "turn": 0}, {**turn, "turn": 1}]},
                 "tool_calls": {("s", 1): [call(0, 0, 0, "look"), call(0, 1, 1, "read"), call(1, 0, 2, "submit")]}},
        scores={}, inputs={"s": ("Q?", ["A"])})
    (row,) = transcripts(ex)
    msgs = json.loads(row["messages"])
    assert [(m["role"], m["content"]) for m in msgs] == [
        ("user", "Q?"), ("assistant", ""), ("tool", "ok"), ("tool", "ok"), ("assistant", ""), ("tool", "ok"),
        ("assistant", "A")]
    assert [c["function"] for c in msgs[1]["tool_calls"]] == ["look", "read"]
    assert msgs[1]["tool_calls"][0] == {"id": "call-0-0", "function": "look", "arguments": {"q": "1"}, "type": "function"}
    assert [m.get("tool_call_id") for m in msgs] == [None, None, "call-0-0", "call-0-1", None, "call-1-0", None]
    assert json.loads(row["message_turns"]) == [None, [0, None], [0, 0], [0, 1], [1, None], [1, 2], None]  # the answer: no turn of its own
    assert (row["attempt"], row["limit"], row["score"], row["success"], row["task_repeat"], row["message_count"]) == (
        1, "budget", "0.0", False, 1, 7)
