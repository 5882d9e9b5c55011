"""End-to-end test of the dbt project: hand-built raw tables -> `dbt build` -> marts compared with
values computed by hand.

The fixture is independent of ingest: the raw tables are created from the Arrow schemas in
`schemas/` (plus the two extra `raw.runs` columns ingest adds) and filled with a small benchmark
(8 items: ST/MT x d1/d2, five gold papers with sections and labels) and four runs whose call
sequences exercise every metric category. ONE `dbt build` (models + data tests) runs per module; every
test below reads the built warehouse (the unit tests run in test_every_unit_test_passes).

Fixture summary (papers are graph node ids; arXiv ids in brackets):
  seed P_S [seed-1], bridge P_B [bridge-1], distractor P_X [x1], metadata-only P_M [none]
  gold P_G1 [g1]: 0 Introduction | 1 "3 Method" (text has "3.1 Graph Encoder") | 2 Results
  gold P_G2 [g2]: 0 Introduction | 1 Experiments (text has "4.2 Ablation Study") | 2 "Apdx_A: Proofs"
  gold P_G3a [g3a]: 0 Background | 1 Method | 2 Evaluation
  gold P_G3b [g3b]: 0 Introduction | 1 Analysis (text has "Error Analysis") | 2 Conclusion
  gold P_G4 [g4]: 0 Introduction | 1 Approach | 2 Discussion
  items: st_a ST/d1 GROUND gold G1 | st_b ST/d2 RESULT gold G2 | st_c ST/d1 MOTIVE gold G1 |
         st_d ST/d2 METHOD gold G2 | mt_a MT/d1 GROUND G3a+G3b | mt_b MT/d2 RESULT G3a+G4 |
         mt_c MT/d1 MOTIVE G3b+G4 | mt_d MT/d1 METHOD G3a+G3b
  direct label sections (docs/metrics.md#label-resolution):
    st_a G1 {1 header}            st_b G2 {1 containment "4.2 Ablation   Study"}
    st_c G1 {0 header, 1 containment "Graph Encoder"}   st_d G2 {1 header}
    mt_a G3a {1 header} (after a supporting "Method Overview" that resolves to nothing),
         G3b {1 containment "Error Analysis"}
    mt_b G3a {1 header}, G4 {1 header}     mt_c G3b {1 header}, G4 {2 header}
    mt_d G3a {2 header}, G3b none (only a supporting label)
  runs: r1 sim-alpha full rep 0 | r2 sim-alpha full rep 1 | r3 sim-alpha closed_book rep 0 (2 items)
        r4 team-mini (openai, model_id gpt-4.1-mini-2025-04-14) full rep 0 (1 item, 2 attempts, deliberate budget error)
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from agenthop.ingest import ddl
from agenthop.schemas import agenthop as bschema
from agenthop.schemas import trajectory as tschema
from agenthop.schemas.evolution import absent, absent_column
from conftest import run_dbt, run_dbt_build

# ----------------------------------------------------------------------------------------------
# Benchmark fixture
# ----------------------------------------------------------------------------------------------

NODE_ARXIV = {
    "P_S": "seed-1", "P_B": "bridge-1", "P_X": "x1", "P_M": None,
    "P_G1": "g1", "P_G2": "g2", "P_G3a": "g3a", "P_G3b": "g3b", "P_G4": "g4",
}

SECTIONS: dict[str, list[tuple[str, str]]] = {
    "seed-1": [("Introduction", "Seed intro."), ("Related Work", "Refs.")],
    "bridge-1": [("Introduction", "Bridge intro."), ("Method", "Bridge method.")],
    "x1": [("Introduction", "Unrelated."), ("Method", "Other method.")],
    "g1": [("Introduction", "We study citation graphs."),
           ("3 Method", "Our approach has parts. 3.1 Graph\u00a0Encoder The encoder maps nodes to vectors."),
           ("Results", "Accuracy improves by 5 points.")],
    "g2": [("Introduction", "Motivation text."),
           ("Experiments", "Setup first.\n4.2 Ablation Study We remove parts."),
           ("Apdx_A: Proofs", "Proof details.")],
    "g3a": [("Background", "Prior work."), ("Method", "We propose X."), ("Evaluation", "We evaluate X.")],
    "g3b": [("Introduction", "Intro."), ("Analysis", "We analyse. Error  Analysis Most errors are parsing errors."),
            ("Conclusion", "Done.")],
    "g4": [("Introduction", "Intro four."), ("Approach", "Details."), ("Discussion", "Talk.")],
}

# sample_id -> (question_type, depth, reasoning_type, gold node ids, has bridge)
ITEMS: dict[str, tuple[str, int, str, list[str], bool]] = {
    "st_a": ("single-target", 1, "GROUND", ["P_G1"], False),
    "st_b": ("single-target", 2, "RESULT", ["P_G2"], True),
    "st_c": ("single-target", 1, "MOTIVE", ["P_G1"], False),
    "st_d": ("single-target", 2, "METHOD", ["P_G2"], True),
    "mt_a": ("multi-target", 1, "GROUND", ["P_G3a", "P_G3b"], False),
    "mt_b": ("multi-target", 2, "RESULT", ["P_G3a", "P_G4"], True),
    "mt_c": ("multi-target", 1, "MOTIVE", ["P_G3b", "P_G4"], False),
    "mt_d": ("multi-target", 1, "METHOD", ["P_G3a", "P_G3b"], False),
}

# sample_id -> labels in release order: (arxiv_id, label_section, relevance)
LABELS: dict[str, list[tuple[str, str, str]]] = {
    "st_a": [("g1", "3. Method", "direct"), ("g1", "Results", "supporting"), ("seed-1", "Introduction", "direct")],
    "st_b": [("g2", "4.2 Ablation   Study", "direct"), ("g2", "Apdx_A: Proofs", "supporting"),
             ("", "Some Section", "direct")],
    "st_c": [("g1", "Graph Encoder", "direct"), ("g1", "Introduction", "direct")],
    "st_d": [("g2", "Experiments", "direct"), ("zz-unknown", "Method", "supporting")],
    "mt_a": [("g3a", "Method Overview", "supporting"), ("g3a", "Method", "direct"),
             ("g3b", "Error Analysis", "direct")],
    "mt_b": [("g3a", "Method", "direct"), ("g4", "Approach", "direct")],
    "mt_c": [("g3b", "Analysis", "direct"), ("g4", "Discussion", "direct")],
    "mt_d": [("g3a", "Evaluation", "direct"), ("g3b", "Conclusion", "supporting")],
}


def benchmark_rows() -> dict[str, list[dict[str, Any]]]:
    items, item_papers, nodes, edges, labels = [], [], [], [], []
    for order, (sid, (qtype, depth, rtype, golds, has_bridge)) in enumerate(ITEMS.items()):
        items.append(dict(
            sample_id=sid, question_type=qtype, depth=depth, reasoning_type=rtype, cognitive_skill="reason",
            venue="ACL", consensus_tier="gold", question=f"Question {sid}?", options=["a", "b", "c", "d"],
            correct_index=0, distractor_types=["correct", "seed_only", "wrong_paper", "no_context"],
            seed_paper_id="P_S", seed_arxiv_id="seed-1", seed_title="Seed paper", filter_agreement=None,
            bridge_necessary=None, item_order=order,
        ))
        item_papers.append(dict(sample_id=sid, paper_id="P_S", arxiv_id="seed-1", role="seed", rank=0))
        if has_bridge:
            item_papers.append(dict(sample_id=sid, paper_id="P_B", arxiv_id="bridge-1", role="bridge", rank=0))
        for rank, g in enumerate(golds):
            item_papers.append(dict(sample_id=sid, paper_id=g, arxiv_id=NODE_ARXIV[g], role="gold", rank=rank))
        members = ["P_S", "P_B", "P_X", "P_M", *golds]
        for k, pid in enumerate(members):
            arxiv = NODE_ARXIV[pid]
            nodes.append(dict(sample_id=sid, paper_id=pid, node_order=k, arxiv_id=arxiv or "", title=f"T {pid}",
                              year=2024, abstract="", has_full_text=arxiv is not None))
        for rank, dst in enumerate(m for m in members if m != "P_S"):
            edges.append(dict(sample_id=sid, src_paper_id="P_S", dst_paper_id=dst, rank=rank))
        for idx, (arxiv, section, relevance) in enumerate(LABELS[sid]):
            labels.append(dict(sample_id=sid, label_index=idx, paper_title=None, arxiv_id=arxiv,
                               label_section=section, relevance=relevance))
    papers = [dict(arxiv_id=a, title=f"Paper {a}", n_sections=len(s)) for a, s in SECTIONS.items()]
    sections = [
        dict(arxiv_id=a, section_index=i, alias=chr(65 + i), header=h, n_chars=len(t), text=t)
        for a, secs in SECTIONS.items() for i, (h, t) in enumerate(secs)
    ]
    return dict(items=items, item_papers=item_papers, graph_nodes=nodes, graph_edges=edges, papers=papers,
                sections=sections, recall_labels=labels)


# ----------------------------------------------------------------------------------------------
# Trajectory fixture
# ----------------------------------------------------------------------------------------------

COSTS = {"get_paper_info": 1, "get_references": 1, "search_papers": 1, "list_sections": 1,
         "read_section": 5, "think": 0, "submit_answer": 0}
UNCHARGED = {"rejected_budget", "rejected_disabled", "not_executed", "unknown_tool"}


def C(tool: str, paper: str | None = None, sec: int | None = None, status: str = "ok",
      query: str | None = None, answer: str | None = None) -> dict[str, Any]:
    """One emitted call. For a delivered read, `sec` is the resolved section index."""
    return dict(tool=tool, paper=paper, sec=sec, status=status, query=query, answer=answer)


TEXT = "text"    # an assistant turn without tool calls
ERROR = "error"  # an error turn (no calls, no tokens)

#: config_json per run (default "{}"): r4 is priced by its provider model id, not its display name
RUN_CONFIG = {"r4": '{"model_id": "gpt-4.1-mini-2025-04-14"}'}

RUNS = {
    "r1": ("sim-alpha", "sim", "full", 0),
    "r2": ("sim-alpha", "sim", "full", 1),
    "r3": ("sim-alpha", "sim", "closed_book", 0),
    "r4": ("team-mini", "openai", "full", 0),  # display name; provider model id in config_json (RUN_CONFIG)
}

# (run, sample) -> (turns, is_correct, predicted_index, terminated_by). Comments: what each one exercises.
TRAJ: dict[tuple[str, str], tuple[list[Any], bool, int, str]] = {
    # r1 ----------------------------------------------------------------------------------------
    # ST scope 'read': anchor = read G1 sec 1 (seq 2), then another read. contact header. ref hard.
    ("r1", "st_a"): ([[C("get_paper_info", "P_S")], [C("get_references", "P_S")], [C("read_section", "P_G1", 1)],
                      [C("read_section", "P_G1", 2)], [C("submit_answer", answer="A")]], True, 0, "answer"),
    # wrong read on the bridge -> 'recover'; ST 'immediate'; section recall by containment -> 'parent';
    # reference misses it (no fuzzy match of "Experiments"); early submit (wrong read pos 0, submit pos 2).
    ("r1", "st_b"): ([[C("read_section", "P_B", 1)], [C("read_section", "P_G2", 1)],
                      [C("submit_answer", answer="B")]], False, 1, "answer"),
    # three calls in one turn, anchor mid-turn (seq 1): S = think, think, submit -> 'think'. header.
    ("r1", "st_c"): ([[C("list_sections", "P_G1"), C("read_section", "P_G1", 0), C("think")], [C("think")],
                      [C("submit_answer", answer="A")]], True, 0, "answer"),
    # failed gold read first (section_not_found: counts for any_gold_read, not delivered); S = refs,
    # submit -> 'other'.
    ("r1", "st_d"): ([[C("read_section", "P_G2", status="section_not_found", query="Ablation")],
                      [C("read_section", "P_G2", 1)], [C("get_references", "P_G2")],
                      [C("submit_answer", answer="C")]], False, 2, "answer"),
    # MT-both anchor = third read (first read after which both G3a and G3b are covered, seq 2), not the
    # first gold read; S has a read -> 'read'. G3b hit only by containment -> 'parent'.
    ("r1", "mt_a"): ([[C("read_section", "P_G3a", 1)], [C("read_section", "P_G3a", 2)],
                      [C("read_section", "P_G3b", 1)], [C("read_section", "P_G3b", 0)],
                      [C("submit_answer", answer="A")]], True, 0, "answer"),
    # wrong read -> 'recover'; MT-both 'immediate'; both header; early submit (pos 0 -> submit pos 3).
    ("r1", "mt_b"): ([[C("read_section", "P_B", 0)], [C("read_section", "P_G3a", 1)],
                      [C("read_section", "P_G4", 1)], [C("submit_answer", answer="D")]], False, 3, "answer"),
    # MT-fail 'zero_gold': only rejected_budget gold reads (not any_gold_read); wrong reads -> think,
    # stay x3, recover (next is a rejected read on a gold paper); ends by budget with no answer.
    ("r1", "mt_c"): ([[C("search_papers", query="graphs")], [C("read_section", "P_X", 1)], [C("think")],
                      [C("read_section", "P_S", 0), C("read_section", "P_B", 0), C("read_section", "P_X", 0),
                       C("read_section", "P_B", 1)],
                      [C("read_section", "P_G3b", status="rejected_budget", query="Analysis"),
                       C("read_section", "P_G4", status="rejected_budget", query="Approach")]], False, -1, "budget"),
    # MT-fail 'explored': anchor = G3a read; S has a (failed) read on G3b. An error turn (not a tool turn).
    ("r1", "mt_d"): ([[C("read_section", "P_G3a", 2)],
                      [C("read_section", "P_G3b", status="section_not_found", query="Results")], ERROR,
                      [C("submit_answer", answer="A")]], True, 0, "answer"),
    # r2 ----------------------------------------------------------------------------------------
    # ST without recall (no scope): wrong reads -> 'stay' then 'submit'; a text-only turn; early submit.
    ("r2", "st_a"): ([[C("read_section", "P_X", 0)], [C("read_section", "P_S", 0)], TEXT,
                      [C("submit_answer", answer="C")]], False, 2, "answer"),
    # wrong read -> 'renav'; ST 'read' via a FAILED read after the anchor (any status counts); parent.
    ("r2", "st_b"): ([[C("read_section", "P_B", 1)], [C("get_paper_info", "P_G2")], [C("read_section", "P_G2", 1)],
                      [C("read_section", "P_G2", status="section_not_found", query="Nonexistent")],
                      [C("submit_answer", answer="A")]], True, 0, "answer"),
    # ST 'other' with EMPTY S (anchor is the last call); ends by max_turns; section 1 of st_c is
    # matched only by containment -> 'parent'.
    ("r2", "st_c"): ([[C("read_section", "P_G1", 1)], TEXT], False, -1, "max_turns"),
    # wrong read -> 'other' (unknown tool); anchor and submit in the same turn -> 'immediate'; header.
    ("r2", "st_d"): ([[C("read_section", "P_B", 0)], [C("browse_web", status="unknown_tool")],
                      [C("read_section", "P_G2", 1), C("submit_answer", answer="A")]], True, 0, "answer"),
    # MT-both 'think'; G3b read on a non-labelled section -> section recall fails -> 'none'. Reference:
    # "Method" first matches the supporting "Method Overview" label -> soft only (the quirk).
    ("r2", "mt_a"): ([[C("read_section", "P_G3b", 0)], [C("read_section", "P_G3a", 1)], [C("think")],
                      [C("submit_answer", answer="A")]], True, 0, "answer"),
    # MT-both 'other': think and a navigation call after the anchor.
    ("r2", "mt_b"): ([[C("read_section", "P_G4", 1)], [C("read_section", "P_G3a", 1)], [C("think")],
                      [C("list_sections", "P_G4")], [C("submit_answer", answer="B")]], False, 1, "answer"),
    # MT-fail 'stayed': second read on the anchor paper, no navigation.
    ("r2", "mt_c"): ([[C("read_section", "P_G4", 2)], [C("read_section", "P_G4", 1)],
                      [C("submit_answer", answer="C")]], False, 2, "answer"),
    # MT-fail 'premature': think then submit.
    ("r2", "mt_d"): ([[C("read_section", "P_G3a", 2)], [C("think")], [C("submit_answer", answer="B")]],
                     False, 1, "answer"),
    # r3 (closed_book) ----------------------------------------------------------------------------
    # disabled read on the gold paper: not any_gold_read.
    ("r3", "st_a"): ([[C("read_section", "P_G1", status="rejected_disabled", query="3 Method")], [C("think")],
                      [C("submit_answer", answer="A")]], True, 0, "answer"),
    # the turn that crossed the token cap carried two not_executed calls: a tool turn, calls counted.
    ("r3", "mt_a"): ([[C("think")], [C("read_section", "P_G3a", status="not_executed", query="Method"),
                                     C("think", status="not_executed")]], False, -1, "token_limit"),
}

# r4: two attempts of st_a; attempt 0 failed with an empty response (one assistant turn, 1200 prompt
# tokens); attempt 1 is final and records budget_used 6 although its calls cost 5 (a DQ finding).
R4_FINAL = [[C("read_section", "P_G1", 1)], [C("submit_answer", answer="A")]]


def _call_rows(run: str, sid: str, attempt: int, turns: list[Any]) -> tuple[list[dict], list[dict], int]:
    calls, turn_rows = [], []
    seq, budget, cum = 0, 30, 0
    for t, turn in enumerate(turns):
        before = budget
        if turn == ERROR:
            tokens = (0, 0, 0, 0)
            role, emitted = "error", []
        else:
            tokens = (1000, 100, 0, 0) if run != "r4" else (1000, 200, 3000, 500)
            role, emitted = "assistant", ([] if turn == TEXT else turn)
        for k, c in enumerate(emitted):
            cost = 0 if c["status"] in UNCHARGED else COSTS[c["tool"]]
            budget -= cost
            args: dict[str, Any] = {}
            header = None
            if c["paper"] is not None:
                args["paper_id"] = c["paper"]
            if c["tool"] == "read_section":
                if c["sec"] is not None:
                    header = SECTIONS[NODE_ARXIV[c["paper"]]][c["sec"]][0]
                args["section"] = c["query"] if c["query"] is not None else header
            if c["tool"] == "submit_answer":
                args.update(answer=c["answer"], reasoning="because")
            calls.append(dict(
                run_id=run, sample_id=sid, attempt=attempt, turn=t, call_index=k, seq=seq, tool=c["tool"],
                args_json=json.dumps(args), paper_id=c["paper"],
                section_query=args.get("section") if c["tool"] == "read_section" else None,
                resolved_header=header, resolved_section_index=c["sec"],
                search_query=c["query"] if c["tool"] == "search_papers" else None, answer=c["answer"],
                cost=cost, status=c["status"], output_chars=100, budget_after=budget,
            ))
            seq += 1
        cum += tokens[0] + tokens[1] + tokens[3]
        turn_rows.append(dict(
            run_id=run, sample_id=sid, attempt=attempt, turn=t, role=role, n_tool_calls=len(emitted),
            prompt_tokens=tokens[0], completion_tokens=tokens[1], cache_read_tokens=tokens[2],
            cache_creation_tokens=tokens[3], cumulative_tokens=cum, budget_before=before, budget_after=budget,
            content_chars=10, t_offset_s=float(t),
        ))
    return calls, turn_rows, 30 - budget


def _traj_row(run: str, sid: str, attempt: int, is_final: bool, turn_rows: list[dict], budget_used: int,
              correct: bool, pred: int, term: str, **recorded: Any) -> dict[str, Any]:
    p = sum(r["prompt_tokens"] for r in turn_rows)
    c = sum(r["completion_tokens"] for r in turn_rows)
    cr = sum(r["cache_read_tokens"] for r in turn_rows)
    cc = sum(r["cache_creation_tokens"] for r in turn_rows)
    return dict(
        run_id=run, sample_id=sid, attempt=attempt, is_final=is_final,
        predicted_answer="ABCD"[pred] if pred >= 0 else None, predicted_index=pred, is_correct=correct,
        terminated_by=term, total_turns=len(turn_rows), budget_used=budget_used, total_prompt_tokens=p,
        total_completion_tokens=c, cache_read_tokens=cr, cache_creation_tokens=cc, total_tokens=p + c + cc,
        tool_errors=0, api_error_count=0, transient_retry_count=0, wall_time_s=1.0, reasoning=None,
        **{"wait_s": None, "repaired_chars": None, **recorded},
    )


def trajectory_rows() -> dict[str, list[dict[str, Any]]]:
    runs, trajs, turns, calls = [], [], [], []
    for run, (model, backend, condition, replicate) in RUNS.items():
        runs.append(dict(
            run_id=run, model=model, backend=backend, condition=condition, replicate=replicate,
            benchmark_sha256="0123456789abcdef", budget_total=30, max_turns=20, max_total_tokens=200_000,
            harness_version="test", config_json=RUN_CONFIG.get(run, "{}"), family=None, tier=None, started_at=None, finished_at=None,
        ))
    for (run, sid), (turn_list, correct, pred, term) in TRAJ.items():
        c, t, used = _call_rows(run, sid, 0, turn_list)
        calls += c
        turns += t
        trajs.append(_traj_row(run, sid, 0, True, t, used, correct, pred, term))
    # r4 attempt 0: one assistant turn with an empty response (1200 prompt tokens), terminated by error
    t0 = [dict(run_id="r4", sample_id="st_a", attempt=0, turn=0, role="assistant", n_tool_calls=0,
               prompt_tokens=1200, completion_tokens=0, cache_read_tokens=0, cache_creation_tokens=0,
               cumulative_tokens=1200, budget_before=30, budget_after=30, content_chars=0, t_offset_s=0.0)]
    turns += t0
    trajs.append(_traj_row("r4", "st_a", 0, False, t0, 0, False, -1, "error"))
    c, t, used = _call_rows("r4", "st_a", 1, R4_FINAL)
    calls += c
    turns += t
    assert used == 5
    trajs.append(_traj_row("r4", "st_a", 1, True, t, 6, True, 0, "answer",  # budget_used 6 != 5: DQ
                           wait_s=2.5, repaired_chars=3))  # a real backend records its waits and repairs
    # r4 recorded its transcript (a real backend): one `tool` message per executed call, in order;
    # attempt 0 (failed) has a tool message too, which must not be paired with attempt 1's calls
    msg = [("r4", 0, 0, "system", None, "sys"), ("r4", 0, 1, "tool", "think", "stale output"),
           ("r4", 1, 0, "system", None, "sys"), ("r4", 1, 1, "user", None, "go"), ("r4", 1, 2, "assistant", None, ""),
           ("r4", 1, 3, "tool", "read_section", "=== Method ===\n\n<b>text</b>"),
           ("r4", 1, 4, "assistant", None, ""), ("r4", 1, 5, "tool", "submit_answer", "Answer submitted: A")]
    messages = [dict(run_id=r, sample_id="st_a", attempt=a, idx=i, role=role, name=name, tool_call_id=None,
                     content=content) for r, a, i, role, name, content in msg]
    return dict(runs=runs, trajectories=trajs, turns=turns, tool_calls=calls, messages=messages)


# ----------------------------------------------------------------------------------------------
# Warehouse: raw tables from the Arrow schemas, then one dbt build
# ----------------------------------------------------------------------------------------------

def create_raw_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Empty raw.* tables with exactly the Arrow schemas' columns and types (+ runs._partial/_source)."""
    con.execute("create schema if not exists raw")
    for name, schema in {**bschema.TABLES, **tschema.TABLES}.items():
        empty = schema.empty_table()  # noqa: F841 (referenced by name in SQL)
        con.execute(f"create table raw.{name} as select * from empty")
    con.execute("alter table raw.runs add column _partial boolean")
    con.execute("alter table raw.runs add column _source varchar")
    con.execute(ddl.create_table_sql("ingest_log", ddl.INGEST_LOG))  # empty: build_info reads it


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, schema: pa.Schema, rows: list[dict]) -> None:
    if not rows:
        return
    # columns added to the format later that no row gives read as files without them do
    given = pa.schema([f for f in schema if absent(f) is None or any(f.name in r for r in rows)])
    data = pa.Table.from_pylist(rows, schema=given)
    for f in schema:
        if f.name not in given.names:
            data = data.append_column(f, absent_column(data, f))
    cols = ", ".join(schema.names)
    con.execute(f"insert into raw.{table} ({cols}) select {cols} from data")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("dbt_marts")
    db = work / "warehouse.duckdb"
    con = duckdb.connect(str(db))
    create_raw_tables(con)
    for name, rows in benchmark_rows().items():
        insert_rows(con, name, bschema.TABLES[name], rows)
    for name, rows in trajectory_rows().items():
        insert_rows(con, name, tschema.TABLES[name], rows)
    con.execute("update raw.runs set _partial = false, _source = 'fixture/' || run_id")
    con.close()
    # r4 holds impossible accounting on purpose (budget_used 6 for calls costing 5), which the dq tests
    # at severity error reject: they are left out here and run in test_dq_error_tests_fail_the_build.
    # Unit tests are left out as in the everyday build (selectors.yml): test_every_unit_test_passes
    proc = run_dbt(db, work, "build", "--exclude", "tag:dq_error", "resource_type:unit_test")
    if proc.returncode != 0:
        raise AssertionError(f"dbt build failed:\n{proc.stdout[-8000:]}\n{proc.stderr[-3000:]}")
    return db


def q(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def approx_rows(rows: list[tuple]) -> list[tuple]:
    return [tuple(pytest.approx(v, abs=1e-9) if isinstance(v, float) else v for v in r) for r in rows]


# ----------------------------------------------------------------------------------------------
# Expected values (computed by hand from the fixture above)
# ----------------------------------------------------------------------------------------------

# (run, sample) -> (is_correct, paper_recall, section_recall, evidence_contact, any_gold_read,
#                   section_hit_soft, section_hit_hard, stopping_scope, stopping_category,
#                   early_submit_after_wrong, n_tool_calls, n_tool_turns, total_tokens, total_turns, budget_used)
# Tokens: 1,100 per non-error turn (r4: 1,000 + 200 + 500 cache writes = 1,700); budget = 1 per navigation
# call and 5 per charged read.
FCT_TRAJECTORY = {
    ("r1", "st_a"): (True, True, True, "header", True, True, True, "ST", "read", False, 5, 5, 5500, 5, 12),
    # reference misses: "Experiments" does not fuzzy-match "4.2 Ablation   Study" nor "Apdx_A: Proofs"
    ("r1", "st_b"): (False, True, True, "parent", True, False, False, "ST", "immediate", True, 3, 3, 3300, 3, 10),
    # 5 calls over 3 tool turns (three parallel calls in turn 0)
    ("r1", "st_c"): (True, True, True, "header", True, True, True, "ST", "think", False, 5, 3, 3300, 3, 6),
    ("r1", "st_d"): (False, True, True, "header", True, True, True, "ST", "other", False, 4, 4, 4400, 4, 11),
    ("r1", "mt_a"): (True, True, True, "parent", True, True, True, "MT-both", "read", False, 5, 5, 5500, 5, 20),
    ("r1", "mt_b"): (False, True, True, "header", True, True, True, "MT-both", "immediate", True, 4, 4, 4400, 4, 15),
    # only rejected gold reads: not any_gold_read; 1 + 5 x 5 = 26 points
    ("r1", "mt_c"): (False, False, False, None, False, False, False, "MT-fail", "zero_gold", False, 9, 5, 5500, 5, 26),
    # the error turn counts in total_turns (4) but not as a tool turn (3) and has no tokens
    ("r1", "mt_d"): (True, False, False, None, True, True, True, "MT-fail", "explored", False, 3, 3, 3300, 4, 10),
    # text-only turn: 4 turns, 3 tool turns; wrong read at pos 1, submit at pos 2
    ("r2", "st_a"): (False, False, False, None, False, False, False, None, None, True, 3, 3, 4400, 4, 10),
    ("r2", "st_b"): (True, True, True, "parent", True, False, False, "ST", "read", False, 5, 5, 5500, 5, 16),
    ("r2", "st_c"): (False, True, True, "parent", True, False, False, "ST", "other", False, 1, 1, 2200, 2, 5),
    ("r2", "st_d"): (True, True, True, "header", True, True, True, "ST", "immediate", True, 4, 3, 3300, 3, 10),
    # section recall fails on G3b (section 0 unlabelled) -> 'none'; reference soft only (quirk)
    ("r2", "mt_a"): (True, True, False, "none", True, True, False, "MT-both", "think", False, 4, 4, 4400, 4, 10),
    ("r2", "mt_b"): (False, True, True, "header", True, True, True, "MT-both", "other", False, 5, 5, 5500, 5, 11),
    ("r2", "mt_c"): (False, False, False, None, True, True, True, "MT-fail", "stayed", False, 3, 3, 3300, 3, 10),
    ("r2", "mt_d"): (False, False, False, None, True, True, True, "MT-fail", "premature", False, 3, 3, 3300, 3, 5),
    ("r3", "st_a"): (True, False, False, None, False, False, False, None, None, False, 3, 3, 3300, 3, 0),
    # the token-limit turn carried 2 not_executed calls: 3 calls over 2 tool turns
    ("r3", "mt_a"): (False, False, False, None, False, False, False, "MT-fail", "zero_gold", False, 3, 2, 2200, 2, 0),
    # final attempt 1 only: 2 turns x 1,700 tokens; budget_used as recorded (6)
    ("r4", "st_a"): (True, True, True, "header", True, True, True, "ST", "immediate", False, 2, 2, 3400, 2, 6),
}


def test_fct_trajectory_matches_hand_computed_rows(warehouse: Path) -> None:
    rows = q(warehouse, """
        select run_id, sample_id, is_correct, paper_recall, section_recall, evidence_contact, any_gold_read,
               section_hit_soft, section_hit_hard, stopping_scope, stopping_category, early_submit_after_wrong,
               n_tool_calls, n_tool_turns, total_tokens, total_turns, budget_used
        from main.fct_trajectory order by run_id, sample_id""")
    assert {(r[0], r[1]): tuple(r[2:]) for r in rows} == FCT_TRAJECTORY
    # item attributes and the final-attempt choice
    assert q(warehouse, "select question_type, depth, cell, reasoning_type, attempt, n_attempts from main.fct_trajectory"
                        " where run_id = 'r4'") == [("ST", 1, "st_d1", "GROUND", 1, 2)]
    # what a real backend recorded reaches the mart; runs that did not record it have NULL
    assert q(warehouse, "select run_id, wait_s, repaired_chars from main.fct_trajectory"
                        " where wait_s is not null or repaired_chars is not null") == [("r4", 2.5, 3)]
    assert q(warehouse, "select distinct cell from main.fct_trajectory where sample_id = 'mt_b'") == [("mt_d2",)]


def test_model_summary_matches_hand_computed_metrics(warehouse: Path) -> None:
    cols = ("n_items accuracy recall_st recall_mt secrec_st secrec_mt conversion_st conversion_mt conversion "
            "calls_per_turn avg_tokens_k avg_turns avg_budget max_tokens_rate max_turns_rate max_budget_rate "
            "error_rate na_rate any_gold_read_rate section_hit_soft_rate section_hit_hard_rate "
            "trigram_concentration").split()
    rows = q(warehouse, f"select run_id, {', '.join(cols)} from main.model_summary order by run_id")
    expected = [
        # r1: 4/8 correct; ST all recalled (2 of 4 correct), MT 2 of 4 recalled (1 correct); 38 calls over
        # 32 tool turns; tokens 35,200 / 8; turns 33 / 8; budget 110 / 8; one budget stop, one -1 answer;
        # trigram read>read>read 7 of 22.
        ("r1", 8, 0.5, 1.0, 0.5, 1.0, 0.5, 0.5, 0.5, 0.5, 38 / 32, 4.4, 4.125, 13.75, 0.0, 0.0, 0.125, 0.0, 0.125,
         0.875, 0.75, 0.75, 7 / 22),
        # r2: 3/8; ST 3 of 4 recalled (2 correct), MT 2 of 4 (1 correct); section recall ST 3/4, MT 1/4;
        # conversion 3/5; 28 calls / 27 tool turns; tokens 31,900 / 8; turns 29 / 8; budget 77 / 8;
        # read>read>submit 3 of 13 trigrams.
        ("r2", 8, 0.375, 0.75, 0.5, 0.75, 0.25, 2 / 3, 0.5, 0.6, 28 / 27, 3.9875, 3.625, 9.625, 0.0, 0.125, 0.0,
         0.0, 0.125, 0.875, 0.625, 0.5, 3 / 13),
        # r3 (closed_book): nothing recalled -> conversions NULL; 6 calls / 5 tool turns; 1 of 2 trigrams
        ("r3", 2, 0.5, 0.0, 0.0, 0.0, 0.0, None, None, None, 1.2, 2.75, 2.5, 0.0, 0.5, 0.0, 0.0, 0.0, 0.5,
         0.0, 0.0, 0.0, 0.5),
        # r4: one ST item; no MT items -> MT columns NULL; two calls -> no trigram
        ("r4", 1, 1.0, 1.0, None, 1.0, None, 1.0, None, 1.0, 1.0, 3.4, 2.0, 6.0, 0.0, 0.0, 0.0, 0.0, 0.0,
         1.0, 1.0, 1.0, None),
    ]
    assert rows == approx_rows(expected)
    assert q(warehouse, "select model, condition, replicate, is_simulated from main.model_summary order by run_id") == [
        ("sim-alpha", "full", 0, True), ("sim-alpha", "full", 1, True), ("sim-alpha", "closed_book", 0, True),
        ("team-mini", "full", 0, False)]


def test_stopping_behavior(warehouse: Path) -> None:
    rows = q(warehouse, "select run_id, scope, category, n, n_scope from main.stopping_behavior "
                        "order by run_id, scope, category_order")
    expected = [
        ("r1", "MT-both", "read", 1, 2), ("r1", "MT-both", "immediate", 1, 2), ("r1", "MT-both", "think", 0, 2),
        ("r1", "MT-both", "other", 0, 2),
        ("r1", "MT-fail", "zero_gold", 1, 2), ("r1", "MT-fail", "explored", 1, 2), ("r1", "MT-fail", "stayed", 0, 2),
        ("r1", "MT-fail", "premature", 0, 2),
        ("r1", "ST", "read", 1, 4), ("r1", "ST", "immediate", 1, 4), ("r1", "ST", "think", 1, 4),
        ("r1", "ST", "other", 1, 4),
        ("r2", "MT-both", "read", 0, 2), ("r2", "MT-both", "immediate", 0, 2), ("r2", "MT-both", "think", 1, 2),
        ("r2", "MT-both", "other", 1, 2),
        ("r2", "MT-fail", "zero_gold", 0, 2), ("r2", "MT-fail", "explored", 0, 2), ("r2", "MT-fail", "stayed", 1, 2),
        ("r2", "MT-fail", "premature", 1, 2),
        # r2/st_a has no paper recall: ST scope holds st_b (read), st_d (immediate), st_c (other, empty S)
        ("r2", "ST", "read", 1, 3), ("r2", "ST", "immediate", 1, 3), ("r2", "ST", "think", 0, 3),
        ("r2", "ST", "other", 1, 3),
        # r3: only mt_a is in a scope (no ST recall); r4: one ST 'immediate'
        ("r3", "MT-fail", "zero_gold", 1, 1), ("r3", "MT-fail", "explored", 0, 1), ("r3", "MT-fail", "stayed", 0, 1),
        ("r3", "MT-fail", "premature", 0, 1),
        ("r4", "ST", "read", 0, 1), ("r4", "ST", "immediate", 1, 1), ("r4", "ST", "think", 0, 1),
        ("r4", "ST", "other", 0, 1),
    ]
    assert rows == expected
    assert q(warehouse, "select share from main.stopping_behavior where run_id = 'r2' and scope = 'ST' "
                        "and category = 'read'") == [(pytest.approx(1 / 3),)]


def test_wrong_read_actions(warehouse: Path) -> None:
    rows = q(warehouse, "select run_id, action, n, n_total, share from main.wrong_read_actions "
                        "order by run_id, action_order")
    expected = [
        # r1: st_b and mt_b bridge reads -> recover; mt_c: P_X -> think, three -> stay, P_B -> rejected
        # gold read -> recover
        ("r1", "recover", 3, 7, 3 / 7), ("r1", "stay", 3, 7, 3 / 7), ("r1", "think", 1, 7, 1 / 7),
        ("r1", "submit", 0, 7, 0.0), ("r1", "renav", 0, 7, 0.0), ("r1", "other", 0, 7, 0.0),
        # r2: st_a P_X -> stay, P_S -> submit; st_b P_B -> renav; st_d P_B -> unknown tool
        ("r2", "recover", 0, 4, 0.0), ("r2", "stay", 1, 4, 0.25), ("r2", "think", 0, 4, 0.0),
        ("r2", "submit", 1, 4, 0.25), ("r2", "renav", 1, 4, 0.25), ("r2", "other", 1, 4, 0.25),
    ]
    assert rows == approx_rows(expected)


def test_tool_transitions_and_trigrams(warehouse: Path) -> None:
    rows = q(warehouse, "select prev_tool, next_tool, n, p_next from main.tool_transitions where run_id = 'r1' "
                        "order by prev_tool, next_tool")
    expected = [
        ("get_paper_info", "get_references", 1, 1.0),
        ("get_references", "read_section", 1, 0.5), ("get_references", "submit_answer", 1, 0.5),
        ("list_sections", "read_section", 1, 1.0),
        # 22 transitions leave read_section: 14 to read_section, 5 to submit, 2 to think, 1 to get_references
        ("read_section", "get_references", 1, 1 / 22), ("read_section", "read_section", 14, 14 / 22),
        ("read_section", "submit_answer", 5, 5 / 22), ("read_section", "think", 2, 2 / 22),
        ("search_papers", "read_section", 1, 1.0),
        ("think", "read_section", 1, 1 / 3), ("think", "submit_answer", 1, 1 / 3), ("think", "think", 1, 1 / 3),
    ]
    assert rows == approx_rows(expected)
    # unknown tool names stay as emitted
    assert q(warehouse, "select n from main.tool_transitions where run_id = 'r2' and prev_tool = 'browse_web'") == [(1,)]
    top = q(warehouse, "select trigram, n, share from main.tool_trigrams where run_id = 'r1' and rank_in_run = 1")
    assert top == [("read_section>read_section>read_section", 7, pytest.approx(7 / 22))]
    assert q(warehouse, "select sum(n) from main.tool_trigrams group by run_id order by run_id") == [(22,), (13,), (2,)]


def test_bigram_effects(warehouse: Path) -> None:
    assert q(warehouse, "select count(*), count(distinct run_id) from main.bigram_effects") == [(196, 4)]
    rows = q(warehouse, """
        select bigram, n_with, correct_with, n_without, correct_without, acc_with, acc_without, effect_pp
        from main.bigram_effects where run_id = 'r1' and bigram in
          ('read_section>submit_answer', 'think>submit_answer', 'get_paper_info>get_paper_info')
        order by bigram""")
    expected = [
        # never observed: acc_with and effect NULL
        ("get_paper_info>get_paper_info", 0, 0, 8, 4, None, 0.5, None),
        # in st_a, st_b, mt_a, mt_b, mt_d (3 correct); not in st_c, st_d, mt_c (1 correct)
        ("read_section>submit_answer", 5, 3, 3, 1, 0.6, 1 / 3, 100 * (0.6 - 1 / 3)),
        # only st_c (correct)
        ("think>submit_answer", 1, 1, 7, 3, 1.0, 3 / 7, 100 * (1 - 3 / 7)),
    ]
    assert rows == approx_rows(expected)


# Wilson 95% (z = 1.959964): lo/hi = (p + z^2/2n -/+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)
#   2/2 -> (1 / (1 + z^2/2), 1) = (0.342380224, 1);  0/2 -> (0, z^2/2 / (1 + z^2/2)) = (0, 0.657619776)
#   2/3 -> (0.207659599, 0.938508056);  0/1 -> (0, z^2 / (1 + z^2)) = (0, 0.793450688)
#   1/2 -> (0.094531205, 0.905468795)
def test_cell_and_reasoning_type_accuracy(warehouse: Path) -> None:
    cells = q(warehouse, "select cell, n, correct, accuracy, wilson_lo, wilson_hi from main.cell_accuracy "
                         "where run_id = 'r1' order by cell")
    assert cells == approx_rows([
        ("mt_d1", 3, 2, 2 / 3, 0.2076595988078242, 0.9385080559790691),
        ("mt_d2", 1, 0, 0.0, 0.0, 0.7934506882081973),
        ("st_d1", 2, 2, 1.0, 0.34238022395464934, 1.0),
        ("st_d2", 2, 0, 0.0, 0.0, 0.6576197760453506),
    ])
    # the boundary bounds are exact (no 1 - 1e-16 from floating point)
    assert q(warehouse, "select wilson_hi from main.cell_accuracy where run_id = 'r1' and cell = 'st_d1'") == [(1.0,)]
    assert q(warehouse, "select wilson_lo from main.cell_accuracy where run_id = 'r1' and cell = 'st_d2'") == [(0.0,)]
    rtypes = q(warehouse, "select reasoning_type, n, correct, accuracy, wilson_lo from main.reasoning_type_accuracy "
                          "where run_id = 'r1' order by reasoning_type")
    assert rtypes == approx_rows([
        ("GROUND", 2, 2, 1.0, 0.34238022395464934), ("METHOD", 2, 1, 0.5, 0.09453120463920085),
        ("MOTIVE", 2, 1, 0.5, 0.09453120463920085), ("RESULT", 2, 0, 0.0, 0.0),
    ])


def test_termination_and_evidence_contact_summaries(warehouse: Path) -> None:
    term = q(warehouse, "select terminated_by, n, share, accuracy from main.termination_summary "
                        "where run_id = 'r1' order by termination_order")
    assert term == approx_rows([("answer", 7, 0.875, 4 / 7), ("max_turns", 0, 0.0, None), ("budget", 1, 0.125, 0.0),
                                ("token_limit", 0, 0.0, None), ("error", 0, 0.0, None)])
    contact = q(warehouse, "select run_id, evidence_contact, n, share, conversion from main.evidence_contact_summary "
                           "order by run_id, contact_order")
    assert contact == approx_rows([
        # r1 recalled: st_a, st_c, st_d, mt_b by header (2 correct); st_b, mt_a parent (1 correct)
        ("r1", "header", 4, 4 / 6, 0.5), ("r1", "parent", 2, 2 / 6, 0.5), ("r1", "none", 0, 0.0, None),
        # r2 recalled: st_d, mt_b header; st_b, st_c parent; mt_a none (correct)
        ("r2", "header", 2, 0.4, 0.5), ("r2", "parent", 2, 0.4, 0.5), ("r2", "none", 1, 0.2, 1.0),
        # r3 has no recalled trajectory -> no rows
        ("r4", "header", 1, 1.0, 1.0), ("r4", "parent", 0, 0.0, None), ("r4", "none", 0, 0.0, None),
    ])


def test_early_submit_after_wrong(warehouse: Path) -> None:
    rows = q(warehouse, "select run_id, n_items, n_with_wrong_read, n_early_submit, share, accuracy_early_submit, "
                        "accuracy_other from main.early_submit_after_wrong order by run_id")
    assert rows == approx_rows([
        # r1: st_b, mt_b (both wrong) of st_b, mt_b, mt_c with wrong reads; others 4/6 correct
        ("r1", 8, 3, 2, 0.25, 0.0, 4 / 6),
        # r2: st_a (wrong), st_d (correct) of st_a, st_b, st_d; others 2/6 correct
        ("r2", 8, 3, 2, 0.25, 0.5, 2 / 6),
        ("r3", 2, 0, 0, 0.0, None, 0.5),
        ("r4", 1, 0, 0, 0.0, None, 1.0),
    ])


def test_reruns(warehouse: Path) -> None:
    variance = q(warehouse, "select metric, n_runs, mean, std, range from main.rerun_variance "
                            "where model = 'sim-alpha' and condition = 'full' order by metric_order")
    assert variance == approx_rows([
        ("accuracy", 2, 0.4375, 0.0625, 0.125),                  # 0.5 and 0.375
        ("section_recall", 2, 0.625, 0.125, 0.25),              # 0.75 and 0.5
        ("conversion", 2, 0.55, 0.05, 0.1),                     # 3/6 and 3/5
        ("avg_tokens_k", 2, 4.19375, 0.20625, 0.4125),          # 4.4 and 3.9875
    ])
    # closed_book and the gpt run have one replicate each: no other group
    assert q(warehouse, "select count(distinct model || condition) from main.rerun_variance") == [(1,)]
    flips = q(warehouse, "select sample_id, n_runs, n_correct, flipped from main.rerun_item_flips order by sample_id")
    assert flips == [("mt_a", 2, 2, False), ("mt_b", 2, 0, False), ("mt_c", 2, 0, False), ("mt_d", 2, 1, True),
                     ("st_a", 2, 1, True), ("st_b", 2, 1, True), ("st_c", 2, 1, True), ("st_d", 2, 1, True)]


def test_condition_deltas(warehouse: Path) -> None:
    rows = q(warehouse, "select model, condition_from, condition_to, accuracy_from, accuracy_to, delta_pp, "
                        "n_runs_from, n_runs_to from main.condition_deltas")
    # closed_book r3 = 0.5; full = mean(r1 0.5, r2 0.375) = 0.4375; no no_search runs -> one pair only
    assert rows == approx_rows([("sim-alpha", "closed_book", "full", 0.5, 0.4375, -6.25, 1, 2)])


def test_model_cost(warehouse: Path) -> None:
    rows = q(warehouse, """
        select run_id, pricing_found, price_prefix, n_attempts, prompt_tokens, completion_tokens, cache_read_tokens,
               cache_creation_tokens, regular_input_usd, cache_read_usd, cache_creation_usd, output_usd, total_usd
        from main.model_cost order by run_id""")
    # sim runs are never priced. r4 ('team-mini', provider id gpt-4.1-mini-2025-04-14 in config_json) matches
    # 'gpt-4.1-mini' (listed before 'gpt-4.1'); tokens over BOTH
    # attempts: prompt 1,200 + 2 x 1,000, completion 2 x 200, cache read 2 x 3,000, cache write 2 x 500.
    # 3,200 x 0.40 / 1e6 = 0.00128; 6,000 x 0.40 x 0.5 / 1e6 = 0.0012; 1,000 x 0.40 x 1.0 / 1e6 = 0.0004;
    # 400 x 1.60 / 1e6 = 0.00064; total 0.00352.
    assert rows == approx_rows([
        ("r1", False, None, 8, 32000, 3200, 0, 0, None, None, None, None, None),
        ("r2", False, None, 8, 29000, 2900, 0, 0, None, None, None, None, None),
        ("r3", False, None, 2, 5000, 500, 0, 0, None, None, None, None, None),
        ("r4", True, "gpt-4.1-mini", 2, 3200, 400, 6000, 1000, 0.00128, 0.0012, 0.0004, 0.00064, 0.00352),
    ])
    # the seed holds the whole reference table, first matching prefix wins (case-sensitive)
    assert q(warehouse, "select count(*) from main.model_prices") == [(32,)]
    assert q(warehouse, """
        select (select prefix from main.model_prices where starts_with(m, prefix) order by price_order limit 1)
        from (values ('claude-opus-4-6-20260101'), ('claude-opus-4-20250514'), ('gpt-5.4-mini'), ('gpt-5-nano'),
                     ('moonshotai/Kimi-K2.5'), ('GPT-5'), ('sim-verifier')) t(m)""") == [
        ("claude-opus-4-6",), ("claude-opus-4",), ("gpt-5.4",), ("gpt-5",), ("moonshotai/Kimi-K2.5",), (None,), (None,)]


def test_label_resolution_and_data_quality(warehouse: Path) -> None:
    sections = q(warehouse, "select sample_id, label_index, paper_id, section_index, match_kind "
                            "from intermediate.int_label_sections order by sample_id, label_index")
    assert sections == [
        ("mt_a", 1, "P_G3a", 1, "header"), ("mt_a", 2, "P_G3b", 1, "containment"),
        ("mt_b", 0, "P_G3a", 1, "header"), ("mt_b", 1, "P_G4", 1, "header"),
        ("mt_c", 0, "P_G3b", 1, "header"), ("mt_c", 1, "P_G4", 2, "header"),
        ("mt_d", 0, "P_G3a", 2, "header"), ("mt_d", 1, "P_G3b", 2, "header"),
        ("st_a", 0, "P_G1", 1, "header"), ("st_a", 1, "P_G1", 2, "header"),    # "3. Method" = "3 Method"
        ("st_b", 0, "P_G2", 1, "containment"), ("st_b", 1, "P_G2", 2, "header"),
        ("st_c", 0, "P_G1", 1, "containment"), ("st_c", 1, "P_G1", 0, "header"),  # NBSP in the text
        ("st_d", 0, "P_G2", 1, "header"),
    ]
    dq = q(warehouse, "select sample_id, issue, label_index, paper_id from main.dq_label_resolution "
                      "order by sample_id, issue")
    assert dq == [
        ("mt_a", "no_matching_section", 0, "P_G3a"),           # "Method Overview" matches nothing
        ("mt_d", "gold_paper_without_direct_label", None, "P_G3b"),
        ("st_b", "empty_arxiv_id", 2, None),
        ("st_d", "unknown_arxiv_id", 1, None),                  # 'zz-unknown'
    ]
    acc = q(warehouse, "select run_id, sample_id, attempt, check_name, expected_value, observed_value, severity "
                       "from main.dq_trajectory_accounting")
    assert acc == [("r4", "st_a", 1, "budget_used_vs_call_costs", 5, 6, "error")]
    # the generic list: no raw.dq_issues in this warehouse (an older layout), so only the dbt check
    assert q(warehouse, "select detected_by, run_id, file, row_place, column_name, rule, severity, value "
                        "from main.dq_issues") == [
        ("dbt", "r4", "fixture/r4", "sample st_a attempt 1", "budget_used", "budget_used_vs_call_costs", "error", "6")]


def test_dq_error_tests_fail_the_build(warehouse: Path) -> None:
    """The dq tests at severity error fail on r4's impossible budget; the warn-level ones do not."""
    proc = run_dbt(warehouse, warehouse.parent / "dq", "test", "--select", "dq_issues", "dq_trajectory_accounting")
    assert proc.returncode != 0, proc.stdout[-3000:]
    failed = set(re.findall(r"Failure in test (\w+)", proc.stdout))
    assert failed == {"dq_issues_no_error_rows"}, proc.stdout[-3000:]
    assert "WARN=1 ERROR=1" in proc.stdout, proc.stdout[-3000:]  # dq_trajectory_accounting_no_rows warns


def test_row_checks_failure_names_the_model_and_each_failed_check(warehouse: Path, tmp_path: Path) -> None:
    """A model's checks are one test node (row_checks): on a copy of the warehouse whose stopping_behavior
    holds one row twice (a duplicate key, and its group's shares then sum past 1), the test fails the
    command with one message that names the model and both failed checks, with their counts; the checks
    that still hold (the other models') pass."""
    (tmp_path / "copy").mkdir()
    db = tmp_path / "copy" / warehouse.name  # the database name (the file's) is part of the tests' SQL
    shutil.copyfile(warehouse, db)
    with duckdb.connect(str(db)) as con:
        con.execute("insert into main.stopping_behavior select * from main.stopping_behavior where share > 0 limit 1")
    target = tmp_path / "target"
    proc = run_dbt(db, tmp_path, "test", "--select", "stopping_behavior", "tool_trigrams",
                   "--exclude", "resource_type:unit_test")
    assert proc.returncode != 0, proc.stdout[-3000:]
    results = {r["unique_id"].rsplit(".", 1)[0]: r  # test ids end in a hash
               for r in json.loads((target / "run_results.json").read_text())["results"]}
    failed = results["test.agenthop.row_checks_stopping_behavior"]
    assert failed["status"] == "error"
    assert ("row_checks failed on stopping_behavior: unique (run_id, scope, category): 1 duplicate key; "
            "shares_sum_to_one (share by run_id, scope): 1 group") in failed["message"], failed["message"]
    assert results["test.agenthop.row_checks_tool_trigrams"]["status"] == "pass"


def test_every_unit_test_passes(warehouse: Path) -> None:
    """The unit tests are not part of the everyday `dbt build` (selectors.yml): they run here, all of
    them (AgentHop's, the shared core's, SciExplore's), through the selector the docs name."""
    work = warehouse.parent / "unit"
    target = work / "target"
    proc = run_dbt(warehouse, work, "test", "--selector", "unit_tests")
    assert proc.returncode == 0, f"unit tests failed:\n{proc.stdout[-8000:]}\n{proc.stderr[-3000:]}"
    manifest = json.loads((target / "manifest.json").read_text())
    defined = set(manifest["unit_tests"])
    results = json.loads((target / "run_results.json").read_text())["results"]
    ran = {r["unique_id"]: r["status"] for r in results if not r["unique_id"].startswith("operation.")}
    assert defined, "the project defines no unit test"
    assert set(ran) == defined, (sorted(defined - set(ran)), sorted(set(ran) - defined))
    assert set(ran.values()) == {"pass"}, {u: s for u, s in ran.items() if s != "pass"}
    assert any(".sciexplore_" in u or "int_sciexplore" in u for u in ran)  # every family's, not only AgentHop's


def test_a_build_with_nothing_to_do_skips_views_and_tables_without_inputs(warehouse: Path, tmp_path: Path) -> None:
    """A second `dbt build` of an unchanged warehouse (a copy, same file name) creates no view again,
    rebuilds no table whose raw inputs are all empty (SciExplore's: this warehouse has no SciExplore
    data) or change only with the release (label resolution), runs no data test of those again (their
    records keep the first build's invocation), and the marts are the same (skip_unchanged.sql)."""
    from tests.test_dbt_incremental import node_versions, table_digests

    (tmp_path / "copy").mkdir()
    db = tmp_path / "copy" / warehouse.name  # the database name (the file's) is part of a view's SQL
    shutil.copyfile(warehouse, db)
    before = node_versions(db)
    assert {"stg_harness__runs", "int_gold_papers", "sciexplore_summary", "sciexplore_hop_accuracy"} <= set(before)
    assert ":inputs " in before["sciexplore_summary"][0] and ":inputs " in before["int_label_sections"][0]
    assert any(k.startswith("test.agenthop.row_checks_stg_sciexplore__runs") for k in before)
    # tables with rows to compute are built at every build (and build_info reads the clock)
    assert not {"model_summary", "panel_members", "build_info", "sciexplore_build_info"} & set(before)
    proc = run_dbt(db, tmp_path, "build", "--exclude", "tag:dq_error", "resource_type:unit_test")
    assert proc.returncode == 0, proc.stdout[-8000:]
    assert node_versions(db) == before
    assert table_digests(db) == table_digests(warehouse)


def test_the_everyday_build_leaves_unit_tests_out(warehouse: Path) -> None:
    """A plain `dbt build` (no --select/--exclude: the default selector of selectors.yml) lists every
    model and data test but no unit test; the `unit_tests` selector lists only unit tests."""
    def listed(*args: str) -> list[str]:
        proc = run_dbt(warehouse, warehouse.parent / "ls", "ls", "--resource-types", "model", "test", "unit_test",
                       "--output", "json", "--output-keys", "resource_type", "--quiet", *args)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        return [json.loads(line)["resource_type"] for line in proc.stdout.splitlines() if line.startswith("{")]

    everyday = listed()
    assert "unit_test" not in everyday and {"model", "test"} <= set(everyday)
    assert set(listed("--selector", "unit_tests")) == {"unit_test"}


CONTRACT_MART_COLUMNS = {
    "fct_trajectory": "run_id sample_id question_type depth cell reasoning_type is_correct terminated_by paper_recall "
                      "section_recall evidence_contact any_gold_read total_tokens total_turns budget_used "
                      "n_tool_calls n_tool_turns section_hit_soft section_hit_hard",
    "model_summary": "run_id model condition replicate n_items accuracy recall_st recall_mt secrec_st secrec_mt "
                     "conversion_st conversion_mt calls_per_turn avg_tokens_k avg_turns avg_budget max_tokens_rate "
                     "max_turns_rate max_budget_rate error_rate na_rate",
    "stopping_behavior": "run_id scope category n n_scope share",
    "wrong_read_actions": "run_id action n n_total share",
    "tool_transitions": "run_id prev_tool next_tool n p_next",
    "tool_trigrams": "run_id trigram n share",
    "cell_accuracy": "run_id cell n correct accuracy wilson_lo wilson_hi",
    "reasoning_type_accuracy": "run_id reasoning_type n correct accuracy",
    "termination_summary": "run_id terminated_by n share",
    "evidence_contact_summary": "run_id evidence_contact n share conversion",
    "rerun_variance": "model condition metric n_runs mean std range",
    "condition_deltas": "model condition_from condition_to accuracy_from accuracy_to delta_pp",
    "bigram_effects": "run_id bigram n_with correct_with n_without correct_without acc_with acc_without effect_pp",
    "rerun_item_flips": "model condition sample_id n_runs n_correct flipped",
    "fct_tool_call": "run_id sample_id model seq turn tool args_json paper_id is_gold_paper status cost "
                     "output_chars resolved_header",
    "model_cost": "run_id model pricing_found total_usd",
    "early_submit_after_wrong": "run_id n_early_submit share",
    "dq_label_resolution": "sample_id issue label_index",
    "dq_trajectory_accounting": "run_id sample_id attempt check_name expected_value observed_value",
}


def test_marts_are_tables_with_spec_columns_contracts_and_docs(warehouse: Path) -> None:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        for table, cols in CONTRACT_MART_COLUMNS.items():
            kind = con.execute("select table_type from information_schema.tables where table_schema = 'main' "
                               "and table_name = ?", [table]).fetchall()
            assert kind == [("BASE TABLE",)], table
            have = {r[0]: r[1] for r in con.execute(
                "select column_name, comment from duckdb_columns() where schema_name = 'main' and table_name = ?",
                [table]).fetchall()}
            assert set(cols.split()) <= set(have), (table, set(cols.split()) - set(have))
            # persist_docs: every column carries its YAML description as a comment
            assert all(have.values()), (table, [c for c, d in have.items() if not d])
            # not-null is enforced by contract constraints (DuckDB NOT NULL): a NULL fails the build
            not_null = {r[0] for r in con.execute(
                "select unnest(constraint_column_names) from duckdb_constraints() where schema_name = 'main' "
                "and table_name = ? and constraint_type = 'NOT NULL'", [table]).fetchall()}
            key = {"dq_label_resolution": {"sample_id", "issue"}, "rerun_variance": {"model", "condition", "metric"},
                   "condition_deltas": {"model", "condition_from", "condition_to"},
                   "rerun_item_flips": {"model", "condition", "sample_id"}}.get(table, {"run_id"})
            assert key <= not_null, (table, key - not_null)
    finally:
        con.close()
    manifest = json.loads((warehouse.parent / "target" / "manifest.json").read_text())
    marts = [n for n in manifest["nodes"].values()
             if n["resource_type"] == "model" and n["original_file_path"].startswith("models_sql/marts/")]
    assert {m["name"] for m in marts} >= set(CONTRACT_MART_COLUMNS)
    for m in marts:
        assert m["config"]["contract"]["enforced"], m["name"]
        assert m["config"]["materialized"] in ("table", "incremental"), m["name"]  # both are tables
        assert m["description"].strip(), m["name"]
        assert all(c["description"].strip() and c["data_type"] for c in m["columns"].values()), m["name"]
    # every mart is checked: by data tests, or by the check constraints of its contract (row rules)
    tested = {n["attached_node"] for n in manifest["nodes"].values() if n["resource_type"] == "test"}
    checked = {m["unique_id"] for m in marts
               if any(c["type"] == "check" for c in [*m["constraints"], *(k for col in m["columns"].values()
                                                                          for k in col["constraints"])])}
    assert all(m["unique_id"] in tested | checked for m in marts)
    assert {"build_info", "fct_trajectory", "model_summary"} <= {m["name"] for m in marts if m["unique_id"] in checked}
    with duckdb.connect(str(warehouse), read_only=True) as con:
        in_db = {r[0] for r in con.execute("select table_name from duckdb_constraints() where schema_name = 'main' "
                                           "and constraint_type = 'CHECK'").fetchall()}
    assert {m["name"] for m in marts if m["unique_id"] in checked} <= in_db
    units = {n["name"] for n in manifest.get("unit_tests", {}).values()}
    assert {"coverage_every_gold_vs_any_gold", "coverage_failed_and_rejected_gold_reads",
            "label_resolution_header_then_containment", "stopping_mt_both_anchor", "stopping_mt_fail_categories",
            "wrong_read_next_actions", "calls_per_turn_denominator"} <= units


def test_staging_and_intermediate_live_outside_main(warehouse: Path) -> None:
    rows = q(warehouse, "select table_schema, count(*) from information_schema.tables "
                        "where table_schema in ('staging', 'intermediate') and table_name not like '%sciexplore%' "
                        "and table_name not in ('incremental_runs', 'node_versions') group by 1 order by 1")
    # int_agenthop__item_groups is ephemeral (inlined into its one reader: docs/ingest.md#the-first-build)
    assert rows == [("intermediate", 19), ("staging", 18)]  # SciExplore's own: tests/sciexplore/; the scanners: 2 + 2
    # the incremental builds' bookkeeping (docs/ingest.md#incremental-builds) is there too
    assert q(warehouse, "select count(*) from information_schema.tables where table_schema = 'intermediate' "
                        "and table_name in ('incremental_runs', 'node_versions')") == [(2,)]


def test_wilson_literals_agree_with_formula() -> None:
    """Guards the hand-written Wilson literals above against typos."""
    z = 1.959964

    def wilson(c: int, n: int) -> tuple[float, float]:
        p = c / n
        d = 1 + z * z / n
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return max(0.0, (p + z * z / (2 * n) - half) / d), min(1.0, (p + z * z / (2 * n) + half) / d)

    assert wilson(2, 2) == pytest.approx((0.34238022395464934, 1.0))
    assert wilson(2, 3) == pytest.approx((0.2076595988078242, 0.9385080559790691))
    assert wilson(0, 1) == pytest.approx((0.0, 0.7934506882081973))


def test_tool_outputs_pair_with_executed_calls(warehouse: Path) -> None:
    """fct_tool_call.output_text: the k-th tool message of the final attempt is its k-th executed
    call's output; runs without a transcript (the sim runs) have NULL."""
    assert q(warehouse, "select seq, tool, output_text from main.fct_tool_call where run_id = 'r4' order by seq") == [
        (0, "read_section", "=== Method ===\n\n<b>text</b>"), (1, "submit_answer", "Answer submitted: A")]
    assert q(warehouse, "select count(output_text) from main.fct_tool_call where run_id <> 'r4'") == [(0,)]


def test_build_on_a_warehouse_without_raw_tables_says_what_to_do(tmp_path: Path) -> None:
    """dbt_project.yml's on-run-start guard: one clear message instead of a dozen missing-schema errors."""
    empty = tmp_path / "warehouse.duckdb"  # named as the other warehouses: the build reuses their parse (run_dbt)
    duckdb.connect(str(empty)).close()  # exists but was never loaded (a missing file: ingest/dbt_guard.py)
    proc = run_dbt_build(empty, tmp_path)
    assert proc.returncode != 0
    assert "has no raw tables: load a benchmark and runs first with agenthop-ingest" in proc.stdout
    assert "does not exist" not in proc.stdout
