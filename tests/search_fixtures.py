"""Hand-built transcripts for the search tests: three runs of the tiny release's three items, each
attempt two assistant turns, three calls and seven messages, written out so that every expected match
can be worked out by reading this file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agenthop.ingest.core import run_ingest
from conftest import _check, built_once, run_dbt_build, worker_copy
from ingest_fixtures import run_rows, write_release, write_run

SYSTEM = "You are a careful research agent."
USER = "Which section reports the result?"

# (turn, tool, args_json, status) per call; the calls' seq is their order here
Calls = list[tuple[int, str, str, str]]


def _calls_default(paper: str) -> Calls:
    return [(0, "list_sections", f'{{"paper_id": "{paper}"}}', "ok"),
            (0, "read_section", f'{{"paper_id": "{paper}", "section": "Results"}}', "ok"),
            (1, "submit_answer", '{"answer": "B"}', "ok")]


#: (run_id, sample_id) -> assistant text of turn 0, the two tool outputs of turn 0, assistant text of turn 1,
#: the calls, terminated_by
TRANSCRIPTS: dict[tuple[str, str], dict[str, Any]] = {
    ("run-a", "st_0001"): dict(
        a0="I will read the Results section of the Timeout paper.",
        outs=("Sections: Intro, Results", "Accuracy rises by 5 points."),
        a1="The answer is B.", calls=_calls_default("P1"), term="answer"),
    ("run-a", "st_0002"): dict(
        a0="Reading the intro; a timeout may happen.",
        outs=("TIMEOUT while reading", "Intro text."),
        a1="Answer B after the retry.",
        calls=[(0, "read_section", '{"paper_id": "P2", "section": "Intro"}', "tool_error"),
               (0, "read_section", '{"paper_id": "P2", "section": "Intro"}', "ok"),
               (1, "submit_answer", '{"answer": "B"}', "ok")], term="answer"),
    ("run-a", "mt_0001"): dict(
        a0="Listing sections twice.",
        outs=("Sections: Method", "Sections: Method"),
        a1="Out of turns.",
        calls=[(0, "list_sections", '{"paper_id": "P3"}', "ok"),
               (0, "list_sections", '{"paper_id": "P4"}', "ok"),
               (1, "read_section", '{"paper_id": "P4", "section": "Method"}', "section_not_found")], term="max_turns"),
    ("run-b", "st_0001"): dict(
        a0="Größe und ÄRGER: the Results matter.",
        outs=("Sections: Größe", "<script>alert(1)</script> & more"),
        a1="Answer: B (timeout-free).", calls=_calls_default("P1"), term="answer"),
    ("run-b", "st_0002"): dict(
        a0="Plain reading.",
        outs=("Sections: Intro", "Intro text."),
        a1="The answer is A.",
        calls=[(0, "read_section", '{"paper_id": "P2", "section": "Intro"}', "ok"),
               (0, "read_section", '{"paper_id": "P2", "section": "Intro"}', "ok"),
               (1, "read_section", '{"paper_id": "P2", "section": "Intro"}', "ok")], term="max_turns"),
    ("run-b", "mt_0001"): dict(
        a0="Nothing special here.",
        outs=("Sections: Method", "Method text 42."),
        a1="The answer is C.", calls=_calls_default("P3"), term="answer"),
    ("run-c", "st_0001"): dict(
        a0="Second epoch: read Results again.",
        outs=("Sections: Intro, Results", "Accuracy rises by 5 points."),
        a1="The answer is B.", calls=_calls_default("P1"), term="answer"),
    ("run-c", "st_0002"): dict(
        a0="A timeout, then a TimeOut.",
        outs=("Sections: Intro", "Intro text."),
        a1="The answer is B.", calls=_calls_default("P2"), term="answer"),
    ("run-c", "mt_0001"): dict(
        a0="Read the method.",
        outs=("Sections: Method", "Method text."),
        a1="The answer is A.", calls=_calls_default("P3"), term="answer"),
}

RUNS: dict[str, tuple[str, int]] = {"run-a": ("m1", 0), "run-b": ("m2", 0), "run-c": ("m1", 1)}
#: items per run whose answer is right (is_correct)
CORRECT = {("run-a", "st_0001"), ("run-b", "st_0001"), ("run-c", "st_0001"), ("run-c", "st_0002")}


def messages_of(run_id: str, sample_id: str, t: dict[str, Any]) -> list[dict[str, Any]]:
    names = [c[1] for c in t["calls"]]
    rows = [("system", None, SYSTEM), ("user", None, USER), ("assistant", None, t["a0"]),
            ("tool", names[0], t["outs"][0]), ("tool", names[1], t["outs"][1]), ("assistant", None, t["a1"]),
            ("tool", names[2], "recorded")]
    return [{"run_id": run_id, "sample_id": sample_id, "attempt": 0, "idx": i, "role": role, "name": name,
             "tool_call_id": f"c{i}" if role == "tool" else None, "content": content}
            for i, (role, name, content) in enumerate(rows)]


def rows_of(run_id: str, bench_sha: str, transcripts: dict[tuple[str, str], dict[str, Any]] | None = None,
            ) -> dict[str, list[dict[str, Any]]]:
    model, replicate = RUNS.get(run_id, ("m1", 0))
    mine = {sid: t for (rid, sid), t in (transcripts or TRANSCRIPTS).items() if rid == run_id}
    rows = run_rows(run_id, bench_sha, list(mine), model=model, replicate=replicate)
    rows["messages"], rows["tool_calls"] = [], []
    for traj in rows["trajectories"]:
        sid = traj["sample_id"]
        t = mine[sid]
        traj["terminated_by"] = t["term"]
        traj["is_correct"] = (run_id, sid) in CORRECT
        traj["tool_errors"] = sum(1 for c in t["calls"] if c[3] == "tool_error")
        traj["budget_used"] = 0  # the calls cost nothing
        traj["total_prompt_tokens"], traj["total_tokens"] = 1000, 1100  # the sums of the two turns
        rows["messages"] += messages_of(run_id, sid, t)
        for seq, (turn, tool, args, status) in enumerate(t["calls"]):
            rows["tool_calls"].append({
                "run_id": run_id, "sample_id": sid, "attempt": 0, "turn": turn,
                "call_index": sum(1 for c in t["calls"][:seq] if c[0] == turn), "seq": seq, "tool": tool,
                "args_json": args, "paper_id": None, "section_query": None, "resolved_header": None,
                "resolved_section_index": None, "search_query": None,
                "answer": "B" if tool == "submit_answer" else None, "cost": 0, "status": status,
                "output_chars": 10, "budget_after": 24})
    for turn in rows["turns"]:
        t = mine[turn["sample_id"]]
        turn["n_tool_calls"] = sum(1 for c in t["calls"] if c[0] == turn["turn"])
    return rows


def write_runs(out: Path, bench_sha: str, run_ids: tuple[str, ...] = tuple(RUNS),
               transcripts: dict[tuple[str, str], dict[str, Any]] | None = None) -> list[Path]:
    return [write_run(out, rows_of(r, bench_sha, transcripts)) for r in run_ids]


def build_warehouse(work: Path) -> Path:
    """The three hand-built runs with the tiny release, ingested and dbt-built under ``work``."""
    sha = write_release(work / "bench")
    write_runs(work / "runs", sha)
    db = work / "w.duckdb"
    run_ingest(db, benchmark=work / "bench", runs=[work / "runs"], accept_dq=True)
    _check(run_dbt_build(db, work), "dbt build")
    return db


def shared_warehouse(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """build_warehouse's warehouse, built once per test run (conftest.built_once: test_search.py and
    test_scout_export.py share it), as a copy of its own in a new folder `name` (a test may change it)."""
    return worker_copy(tmp_path_factory, built_once(tmp_path_factory, "search", build_warehouse) / "w.duckdb", name)
