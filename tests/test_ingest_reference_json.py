"""Reference-harness trajectory JSON (the reference harness) -> raw run tables, rows checked by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from agenthop.ingest.cli import main
from agenthop.ingest.reference_json import status_of
from ingest_fixtures import (
    GOLD1,
    GOLD3A,
    GOLD3B,
    META1,
    SEED1,
    SEED2,
    ref_trajectory,
    ref_turn,
    write_json,
    write_release,
)

REJECT = (
    "REJECTED: Insufficient budget (0 remaining, read_section costs 5). You cannot use this tool. "
    "Call submit_answer immediately with your best guess based on evidence gathered so far."
)
RESULTS_TEXT = "Accuracy rises by 5 points. Ablation Study we remove Y."
O_INFO = "Title: Seed One\nAuthors: Unknown\nYear: 2023\nAbstract: x\nFull text available: Yes"
O_REFS = f"References for paper '{SEED1}' (3 papers):\n\n  [1] ..."
O_SECS = f"Sections for paper '{GOLD1}' (4 sections):\n\n  (A) Introduction (11 chars)"
O_NOFT = f"Full text not available for paper '{META1}'."
O_NOSEC = (f"Section 'Conclusion' not found in paper '{GOLD1}'.\nAvailable sections: (A) Introduction; "
           "(B) Results; (C) Results; (D) Apdx_A: Proofs")
O_NOPAPER = "Paper 'nope' not found in the available paper pool."
O_UNKNOWN = "Unknown tool: browse"
O_ARGS = "Error calling search_papers: Missing or invalid parameter — 'query'"


def ingest(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def q(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.sql(sql).fetchall()
    finally:
        con.close()


def write_experiments(root: Path, sha: str) -> None:
    m = root / "ref-model"
    # st_0001: parallel calls, successful and failed reads, every error kind, think + submit
    st1 = ref_trajectory(
        "st_0001",
        [
            ref_turn(0, [("get_paper_info", {"paper_id": SEED1}), ("get_references", {"paper_id": SEED1})],
                     [(O_INFO, 1), (O_REFS, 1)],
                     before=30, after=28, prompt=1000, completion=50, ts_=1.0),
            ref_turn(1, [("list_sections", {"paper_id": GOLD1}), ("read_section", {"paper_id": GOLD1, "section": "B"})],
                     [(O_SECS, 1), (f"=== Results ===\n\n{RESULTS_TEXT[:20]}...", 5)],
                     before=28, after=22, prompt=1500, completion=60, ts_=2.0),
            ref_turn(2, [("read_section", {"paper_id": META1, "section": "Intro"}),
                         ("read_section", {"paper_id": GOLD1, "section": "Conclusion"})],
                     [(O_NOFT, 5), (O_NOSEC, 5)],
                     before=22, after=12, prompt=2000, completion=70, ts_=3.0),
            ref_turn(3, [("get_paper_info", {"paper_id": "nope"}), ("browse", {"url": "x"}),
                         ("search_papers", {"_raw": "{bad json"})],
                     [(O_NOPAPER, 1), (O_UNKNOWN, 0), (O_ARGS, 1)],
                     before=12, after=10, prompt=2500, completion=80, ts_=4.0),
            ref_turn(4, [("think", {"reasoning": "gold says 5"}),
                         ("submit_answer", {"answer": "B", "reasoning": "5 points"})],
                     [("Noted.", 0), ("Answer submitted: B", 0)],
                     before=10, after=10, prompt=3000, completion=90, ts_=5.0),
        ],
        predicted_answer="B", predicted_index=1, is_correct=True, reasoning="5 points", budget_used=20,
        cache_read_tokens=700, tool_errors=2,
        messages=[
            {"role": "system", "content": "You are a research assistant."},
            {"role": "user", "content": "Please solve the question."},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c0_0", "type": "function"}]},
            {"role": "tool", "tool_call_id": "c0_0", "content": "Title: Seed One"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "Noted."}]},
        ],
    )
    write_json(m / "st_0001.json", st1)

    # st_0002: one failed attempt (error), then a final attempt that runs out of budget
    failed = ref_trajectory(
        "st_0002",
        [ref_turn(0, [("get_paper_info", {"paper_id": SEED2})], [("Title: Seed Two", 1)], before=30, after=29,
                  prompt=300, completion=30),
         {"turn": 1, "role": "error", "content": "Error code: 400 - bad request", "timestamp": 9.0}],
        terminated_by="error", api_error_count=1, budget_used=1, cache_read_tokens=40, cache_creation_tokens=10,
        wall_time_s=9.5,
    )
    write_json(m / "_failed_attempts" / "st_0002.attempt_0.json", failed)
    final_turns = [
        ref_turn(0, [("read_section", {"paper_id": SEED2, "section": "A"})] * 5,
                 [("=== Intro ===\n\nSeed two intro.", 5)] * 5, before=30, after=5, prompt=400, completion=40),
        ref_turn(1, [("read_section", {"paper_id": SEED2, "section": "Intro"})],
                 [("=== Intro ===\n\nSeed two intro.", 5)], before=5, after=0, prompt=500, completion=50),
        ref_turn(2, [("read_section", {"paper_id": SEED2, "section": "A"})] * 2, [(REJECT, 0)] * 2,
                 before=0, after=0, prompt=600, completion=60),
    ]
    final = ref_trajectory(
        "st_0002", final_turns, terminated_by="budget", budget_used=30, retry_count=1,
        # the reference adds the failed attempt's tokens and error counts into the final record
        total_prompt_tokens=1500 + 300, total_completion_tokens=150 + 30, cache_read_tokens=100 + 40,
        cache_creation_tokens=20 + 10, api_error_count=0 + 1, transient_retry_count=2,
    )
    write_json(m / "st_0002.json", final)

    # mt_0001: a disabled tool, then the token-limit turn whose calls never ran
    mt = ref_trajectory(
        "mt_0001",
        [
            ref_turn(0, [("search_papers", {"query": "method"}), ("list_sections", {"paper_id": GOLD3A})],
                     [("REJECTED: Tool 'search_papers' is disabled in this run. Use only the tools listed in the "
                       "system prompt.", 0),
                      (f"Sections for paper '{GOLD3A}' (1 sections):\n\n  (A) Method (9 chars)", 1)],
                     before=30, after=29, prompt=90_000, completion=1000),
            {"turn": 1, "role": "assistant",
             "content": "[HARNESS] Token limit reached (201,000 > 200,000). Forcing termination.",
             "tool_calls": [{"id": "x1", "name": "read_section", "args": {"paper_id": GOLD3A, "section": "Method"}},
                            {"id": "x2", "name": "read_section", "args": {"paper_id": GOLD3B, "section": "A"}}],
             "tool_results": [], "budget_before": 0, "budget_after": 0, "timestamp": 7.0,
             "prompt_tokens": 109_000, "completion_tokens": 1000},
        ],
        terminated_by="token_limit", budget_used=1,
    )
    write_json(m / "mt_0001.json", mt)
    write_json(m / "summary.json", {
        "fingerprint": {"schema_version": "agenthop-eval-v1", "model": "ref-model", "backend": "openai",
                        "strategy": "direct", "started_at": "", "completed_at": "2026-05-04T10:00:00+00:00",
                        "benchmark_sha256": sha},
        "config": {"model": "ref-model", "budget": 30, "max_turns": 20, "max_total_tokens": 200000},
        "total": 3, "correct": 1,
    })

    # a closed-book folder without summary.json
    nb = root / "ref-model_noretrieval"
    write_json(nb / "st_0001.json", ref_trajectory(
        "st_0001", [ref_turn(0, [("submit_answer", {"answer": " (c). "})], [("Answer submitted:  (c). ", 0)],
                             before=30, after=30)],
        predicted_answer=" (c). ", predicted_index=2))


@pytest.fixture()
def imported(tmp_path: Path) -> dict:
    root = tmp_path / "bench"
    sha = write_release(root)
    exp = tmp_path / "experiments"
    write_experiments(exp, sha)
    db = tmp_path / "w.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(root), "--reference-json", str(exp))
    assert res.exit_code == 0, res.output
    return {"db": db, "exp": exp, "sha": sha, "bench": root, "output": res.output}


RID = "ref__ref-model__full"


def test_runs_rows(imported: dict) -> None:
    rows = q(imported["db"], "SELECT run_id, model, backend, condition, replicate, benchmark_sha256, budget_total, "
                             "max_turns, max_total_tokens, harness_version, started_at, epoch(finished_at)::BIGINT, "
                             "_partial, _source FROM raw.runs ORDER BY run_id")
    exp = imported["exp"].resolve()
    assert rows == [
        ("ref__ref-model__full", "ref-model", "reference-json", "full", 0, imported["sha"], 30, 20, 200000,
         "reference:agenthop-eval-v1", None, 1777888800, False, str(exp / "ref-model")),
        ("ref__ref-model_noretrieval__closed_book", "ref-model_noretrieval", "reference-json", "closed_book", 0,
         imported["sha"], 30, 20, 200000, "reference:unknown", None, None, False, str(exp / "ref-model_noretrieval")),
    ]
    cfg = json.loads(q(imported["db"], f"SELECT config_json FROM raw.runs WHERE run_id='{RID}'")[0][0])
    assert cfg["config"]["budget"] == 30 and cfg["file_models"] == ["ref-model"]


def test_tool_call_statuses_and_resolution(imported: dict) -> None:
    rows = q(imported["db"], f"""
        SELECT seq, turn, call_index, tool, status, cost, budget_after, paper_id, section_query,
               resolved_header, resolved_section_index, search_query, answer, output_chars
        FROM raw.tool_calls WHERE run_id='{RID}' AND sample_id='st_0001' ORDER BY seq""")
    assert rows == [
        (0, 0, 0, "get_paper_info", "ok", 1, 29, SEED1, None, None, None, None, None, len(O_INFO)),
        (1, 0, 1, "get_references", "ok", 1, 28, SEED1, None, None, None, None, None, len(O_REFS)),
        (2, 1, 0, "list_sections", "ok", 1, 27, GOLD1, None, None, None, None, None, len(O_SECS)),
        # header 'Results' is ambiguous (sections 1 and 2); the alias query 'B' picks index 1;
        # output_chars is the full result, not the recorded truncation: '=== Results ===\n\n' + 55 chars
        (3, 1, 1, "read_section", "ok", 5, 22, GOLD1, "B", "Results", 1, None, None, 17 + 55),
        (4, 2, 0, "read_section", "no_full_text", 5, 17, META1, "Intro", None, None, None, None, len(O_NOFT)),
        (5, 2, 1, "read_section", "section_not_found", 5, 12, GOLD1, "Conclusion", None, None, None, None,
         len(O_NOSEC)),
        (6, 3, 0, "get_paper_info", "unknown_paper", 1, 11, "nope", None, None, None, None, None, len(O_NOPAPER)),
        (7, 3, 1, "browse", "unknown_tool", 0, 11, None, None, None, None, None, None, len(O_UNKNOWN)),
        (8, 3, 2, "search_papers", "invalid_args", 1, 10, None, None, None, None, None, None, len(O_ARGS)),
        (9, 4, 0, "think", "ok", 0, 10, None, None, None, None, None, None, len("Noted.")),
        (10, 4, 1, "submit_answer", "ok", 0, 10, None, None, None, None, None, "B", len("Answer submitted: B")),
    ]
    assert q(imported["db"], f"SELECT args_json FROM raw.tool_calls WHERE run_id='{RID}' AND sample_id='st_0001' "
                             "AND seq IN (8, 10) ORDER BY seq") == [
        ('{"_raw": "{bad json"}',), ('{"answer": "B", "reasoning": "5 points"}',),
    ]


def test_budget_rejections_and_failed_attempt(imported: dict) -> None:
    db = imported["db"]
    calls = q(db, f"SELECT attempt, seq, turn, call_index, status, cost, budget_after, resolved_header, "
                  f"resolved_section_index FROM raw.tool_calls WHERE run_id='{RID}' AND sample_id='st_0002' "
                  "ORDER BY attempt, seq")
    assert calls == [
        (0, 0, 0, 0, "ok", 1, 29, None, None),
        *[(1, i, 0, i, "ok", 5, 25 - 5 * i, "Intro", 0) for i in range(5)],
        (1, 5, 1, 0, "ok", 5, 0, "Intro", 0),
        (1, 6, 2, 0, "rejected_budget", 0, 0, None, None),
        (1, 7, 2, 1, "rejected_budget", 0, 0, None, None),
    ]
    traj = q(db, f"""SELECT attempt, is_final, terminated_by, predicted_answer, predicted_index, is_correct,
                     total_turns, budget_used, total_prompt_tokens, total_completion_tokens, cache_read_tokens,
                     cache_creation_tokens, total_tokens, api_error_count, transient_retry_count, wall_time_s
                     FROM raw.trajectories WHERE run_id='{RID}' AND sample_id='st_0002' ORDER BY attempt""")
    assert traj == [
        (0, False, "error", None, -1, False, 2, 1, 300, 30, 40, 10, 340, 1, 0, 9.5),
        # failed attempt's totals subtracted: tokens are never counted twice
        (1, True, "budget", None, -1, False, 3, 30, 1500, 150, 100, 20, 1670, 0, 2, 2.0),
    ]
    turns = q(db, f"SELECT attempt, turn, role, n_tool_calls, prompt_tokens, cumulative_tokens, budget_before, "
                  f"budget_after, content_chars FROM raw.turns WHERE run_id='{RID}' AND sample_id='st_0002' "
                  "ORDER BY attempt, turn")
    assert turns == [
        (0, 0, "assistant", 1, 300, 330, 30, 29, 8),
        # error turn: budget carried from the previous turn, no tokens
        (0, 1, "error", 0, 0, 330, 29, 29, len("Error code: 400 - bad request")),
        (1, 0, "assistant", 5, 400, 440, 30, 5, 8),
        (1, 1, "assistant", 1, 500, 990, 5, 0, 8),
        (1, 2, "assistant", 2, 600, 1650, 0, 0, 8),
    ]


def test_token_limit_and_disabled(imported: dict) -> None:
    db = imported["db"]
    assert q(db, f"SELECT seq, turn, tool, status, cost, budget_after, section_query FROM raw.tool_calls "
                 f"WHERE run_id='{RID}' AND sample_id='mt_0001' ORDER BY seq") == [
        (0, 0, "search_papers", "rejected_disabled", 0, 30, None),
        (1, 0, "list_sections", "ok", 1, 29, None),
        (2, 1, "read_section", "not_executed", 0, 29, "Method"),
        (3, 1, "read_section", "not_executed", 0, 29, "A"),
    ]
    assert q(db, f"SELECT turn, role, n_tool_calls, budget_before, budget_after, cumulative_tokens FROM raw.turns "
                 f"WHERE run_id='{RID}' AND sample_id='mt_0001' ORDER BY turn") == [
        (0, "assistant", 2, 30, 29, 91_000), (1, "assistant", 2, 29, 29, 201_000),
    ]
    assert q(db, f"SELECT terminated_by, total_tokens, tool_errors FROM raw.trajectories "
                 f"WHERE run_id='{RID}' AND sample_id='mt_0001'") == [("token_limit", 201_000, 0)]


def test_trajectory_outcomes_and_messages(imported: dict) -> None:
    db = imported["db"]
    assert q(db, "SELECT run_id, sample_id, attempt, is_final, predicted_answer, predicted_index, is_correct, "
                 "reasoning, tool_errors, cache_read_tokens FROM raw.trajectories WHERE is_final "
                 "AND sample_id='st_0001' ORDER BY run_id") == [
        (RID, "st_0001", 0, True, "B", 1, True, "5 points", 2, 700),
        ("ref__ref-model_noretrieval__closed_book", "st_0001", 0, True, " (c). ", 2, False, None, 0, 0),
    ]
    assert q(db, f"SELECT idx, role, name, tool_call_id, content FROM raw.messages WHERE run_id='{RID}' "
                 "ORDER BY sample_id, idx") == [
        (0, "system", None, None, "You are a research assistant."),
        (1, "user", None, None, "Please solve the question."),
        (2, "assistant", None, None, None),
        (3, "tool", None, "c0_0", "Title: Seed One"),
        (4, "user", None, None, '[{"type": "tool_result", "tool_use_id": "t1", "content": "Noted."}]'),
    ]
    assert q(db, "SELECT count(*) FROM raw.trajectories") == [(5,)]


def test_reimport_is_idempotent_and_changes_replace(imported: dict) -> None:
    db, exp = imported["db"], imported["exp"]
    before = q(db, "SELECT count(*), sum(hash(t::VARCHAR)) FROM raw.tool_calls t")
    res = ingest("--db", str(db), "--reference-json", str(exp))
    assert res.exit_code == 0 and "runs 0 inserted, 0 replaced, 2 unchanged" in res.output
    assert q(db, "SELECT count(*), sum(hash(t::VARCHAR)) FROM raw.tool_calls t") == before
    # one model folder changes: only that run is replaced (stable run_id per folder and condition)
    (exp / "ref-model" / "mt_0001.json").unlink()
    res = ingest("--db", str(db), "--reference-json", str(exp / "ref-model"))
    assert res.exit_code == 0 and "runs 0 inserted, 1 replaced, 0 unchanged" in res.output
    assert q(db, f"SELECT sample_id, count(*) FROM raw.trajectories WHERE run_id='{RID}' GROUP BY ALL ORDER BY 1") == [
        ("st_0001", 1), ("st_0002", 2),
    ]
    assert q(db, f"SELECT count(*) FROM raw.tool_calls WHERE run_id='{RID}' AND sample_id='mt_0001'") == [(0,)]


def test_all_attempts_failed_counts_final_once(tmp_path: Path) -> None:
    """When every attempt failed, the reference harness also saves the last one in _failed_attempts/, so
    its tokens are in the final record twice; ingest keeps one row per attempt and subtracts both."""
    root = tmp_path / "bench"
    sha = write_release(root)
    m = tmp_path / "ref-x"
    err = {"turn": 0, "role": "error", "content": "boom", "timestamp": 1.0}
    for k in range(3):
        rec = ref_trajectory("st_0001", [ref_turn(0, [("think", {"reasoning": "r"})], [("Noted.", 0)], before=30,
                                                  after=30, prompt=100 * (k + 1), completion=10), err],
                             terminated_by="error", api_error_count=1)
        write_json(m / "_failed_attempts" / f"st_0001.attempt_{k}.json", rec)
    final = ref_trajectory("st_0001", [ref_turn(0, [("think", {"reasoning": "r"})], [("Noted.", 0)], before=30,
                                                after=30, prompt=300, completion=10), err],
                           terminated_by="error", retry_count=2, api_error_count=1 + 3,
                           total_prompt_tokens=300 + 100 + 200 + 300, total_completion_tokens=10 + 30)
    write_json(m / "st_0001.json", final)
    db = tmp_path / "w.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(root), "--reference-json", str(m))
    assert res.exit_code == 0, res.output
    assert q(db, "SELECT attempt, is_final, total_prompt_tokens, total_completion_tokens, api_error_count "
                 "FROM raw.trajectories ORDER BY attempt") == [
        (0, False, 100, 10, 1), (1, False, 200, 10, 1), (2, True, 300, 10, 1),
    ]


@pytest.mark.parametrize(
    ("output", "status"),
    [
        ("REJECTED: Insufficient budget (3 remaining, read_section costs 5). You cannot ...", "rejected_budget"),
        ("REJECTED: Tool 'think' is disabled in this run. Use only the tools listed in the system prompt.",
         "rejected_disabled"),
        ("Paper 'abc' not found in the available paper pool.", "unknown_paper"),
        ("Full text not available for paper 'abc'. Only abstract is available via get_paper_info.", "no_full_text"),
        ("Section 'X' not found in paper 'abc'.\nAvailable sections: (A) Intro", "section_not_found"),
        ("Error calling read_section: Missing or invalid parameter — 'section'", "invalid_args"),
        ("Unknown tool: fly", "unknown_tool"),
        ("No references found for this paper (or references not available in pool).", "ok"),
        ("No papers found matching 'zzz'.", "ok"),
        ("No sections found for paper 'abc'.", "no_full_text"),
        ("Empty query. Please provide search keywords.", "invalid_args"),
        ("=== Section 'A' not found in paper ===\n\ntext", "ok"),
    ],
)
def test_status_of(output: str, status: str) -> None:
    assert status_of(output) == status


def test_status_of_agrees_with_the_sandbox_on_every_tool_outcome() -> None:
    """A run imported from reference JSON and a run of our harness classify the same output text the
    same way: every outcome the sandbox produces (truncated to 500 characters, as the reference
    records it) maps back to the status the sandbox gave it."""
    from agenthop.harness.benchmarks.agenthop.model import Graph, Item, Node, Paper, Section
    from agenthop.harness.benchmarks.agenthop.tools import Sandbox

    papers = {"1": Paper("1", "P", (Section("Intro", "text " * 200), Section("Method", "m"))),
              "2": Paper("2", "Empty", ())}
    nodes = {"S": Node("S", "Seed", "1", 2024, "abstract"), "E": Node("E", "Empty", "2", 2024, ""),
             "M": Node("M", "Meta only", "", 2020, "meta")}
    item = Item(id="st_1", question_type="single-target", depth=1, reasoning_type="GROUND",
                cognitive_skill=None, venue=None, consensus_tier=None, question="q?", options=("a", "b", "c", "d"),
                correct_index=0, distractor_types=None, seed_paper_id="S", seed_arxiv_id="1", seed_title="Seed",
                gold_paper_ids=("S",), gold_arxiv_ids=("1",))
    box = Sandbox(item, Graph("st_1", nodes, {"S": ("E", "M")}), papers)
    calls = [
        ("get_paper_info", {"paper_id": "S"}), ("get_paper_info", {"paper_id": "nope"}),
        ("get_references", {"paper_id": "S"}), ("get_references", {"paper_id": "M"}),
        ("search_papers", {"query": "seed"}), ("search_papers", {"query": "zzz"}), ("search_papers", {"query": "!!"}),
        ("list_sections", {"paper_id": "S"}), ("list_sections", {"paper_id": "M"}), ("list_sections", {"paper_id": "E"}),
        ("read_section", {"paper_id": "S", "section": "A"}), ("read_section", {"paper_id": "S", "section": "Zebra"}),
        ("read_section", {"paper_id": "M", "section": "A"}), ("read_section", {"paper_id": "E", "section": "A"}),
        ("read_section", {"paper_id": "nope", "section": "A"}), ("read_section", {"paper_id": "S"}),
        ("think", {"reasoning": "hm"}), ("submit_answer", {"answer": "A", "reasoning": "r"}), ("fly", {}),
    ]
    seen = set()
    for name, args in calls:
        out = box.execute(name, args)
        text = out.text if len(out.text) <= 500 else out.text[:500] + "..."
        assert status_of(text) == out.status, (name, args, out.text[:80])
        seen.add(out.status)
    assert seen == {"ok", "unknown_paper", "no_full_text", "section_not_found", "invalid_args", "unknown_tool"}


def _fork_servers() -> list[int]:
    """Child processes of this one that are multiprocessing fork servers."""
    import os

    out = []
    for d in Path("/proc").iterdir():
        try:
            stat = (d / "stat").read_text().rsplit(")", 1)[1].split()
            if int(stat[1]) == os.getpid() and b"forkserver" in (d / "cmdline").read_bytes():
                out.append(int(d.name))
        except (OSError, ValueError, IndexError):
            continue
    return out


def test_process_pool_gives_the_same_rows(imported: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Big imports parse in worker processes (forked from a fork server), one task per sample here; same rows, same order."""
    from agenthop.ingest import reference_json as refjson

    monkeypatch.setattr(refjson, "POOL_MIN_SAMPLES", 0)
    monkeypatch.setattr(refjson, "TASK_SAMPLES", 1)
    db = tmp_path / "pool.duckdb"
    res = ingest("--db", str(db), "--benchmark", str(imported["bench"]), "--reference-json", str(imported["exp"]))
    assert res.exit_code == 0, res.output
    for table in ("trajectories", "turns", "tool_calls", "messages"):
        sql = f"SELECT * FROM raw.{table} ORDER BY ALL"
        assert q(db, sql) == q(imported["db"], sql), table
    assert not _fork_servers(), "the workers' fork server is stopped and reaped after the import"
    # an error found in a worker is the same one line
    bad = tmp_path / "bad" / "ref-model"
    shutil.copytree(imported["exp"] / "ref-model", bad)
    (bad / "st_0002.json").write_text('{"sample_id": "st_0002", "turns": [', encoding="utf-8")
    res = ingest("--db", str(db), "--reference-json", str(bad))
    assert res.exit_code == 2 and res.stderr.startswith(f"error: {bad / 'st_0002.json'}: malformed JSON at line 1")
