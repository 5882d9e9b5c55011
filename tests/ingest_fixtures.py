"""Hand-written inputs for the ingest tests: a tiny release, run directories, reference JSON.

Everything here is small and explicit so that expected warehouse rows can be written by hand.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from agenthop.schemas import trajectory as ts
from agenthop.schemas.evolution import later_fields

# ------------------------------------------------------------------------------------------------
# a tiny release (the reference harness)

SEED1, REF1, GOLD1, META1 = "p" + "1" * 39, "p" + "2" * 39, "p" + "3" * 39, "p" + "4" * 39
SEED2, BRIDGE2, GOLD2 = "q" + "1" * 39, "q" + "2" * 39, "q" + "3" * 39
SEED3, GOLD3A, GOLD3B = "r" + "1" * 39, "r" + "2" * 39, "r" + "3" * 39

PAPERS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "2101.00001": ("Seed One", [("Introduction", "Intro text of seed one."), ("Method", "We do X.")]),
    "2101.00003": (
        "Gold One",
        [
            ("Introduction", "Gold intro."),
            ("Results", "Accuracy rises by 5 points. Ablation Study we remove Y."),
            ("Results", "A second section also called Results."),
            ("Apdx_A: Proofs", "Proof of lemma 1."),
        ],
    ),
    "2102.00001": ("Seed Two", [("Intro", "Seed two intro.")]),
    "2102.00002": ("Bridge Two", [("Background", "Bridge background.")]),
    "2102.00003": ("Gold Two", [("Experiments", "Gold two experiments.")]),
    "2103.00001": ("Seed Three", [("Intro", "Seed three intro.")]),
    "2103.00002": ("Gold Three A", [("Method", "Method A.")]),
    "2103.00003": ("Gold Three B", [("Method", "Method B."), ("Discussion", "Disc B.")]),
}


def _node(title: str, arxiv: str, year: int | None = 2023) -> dict[str, Any]:
    return {"title": title, "arxivId": arxiv, "year": year, "abstract": f"Abstract of {title}."}


ITEMS = [
    {
        "id": "st_0001", "question_type": "single-target", "depth": 1, "reasoning_type": "RESULT",
        "cognitive_skill": "retrieve", "venue": "ACL", "consensus_tier": "gold",
        "question": "By how much does accuracy rise?", "options": ["1", "5", "10", "20"],
        "correct_index": 1, "distractor_types": ["seed_only", "correct", "wrong_paper", "no_context"],
        "seed_paper_id": SEED1, "seed_arxiv_id": "2101.00001", "seed_title": "Seed One",
        "gold_paper_ids": [GOLD1], "gold_arxiv_ids": ["2101.00003"],
        "bridge_paper_ids": [], "bridge_arxiv_ids": [], "filter_agreement": 3,
    },
    {
        "id": "st_0002", "question_type": "single-target", "depth": 2, "reasoning_type": "GROUND",
        "cognitive_skill": "reason", "venue": "ICML", "consensus_tier": "silver",
        "question": "What grounds the bridge?", "options": ["a", "b", "c", "d"],
        "correct_index": 2, "distractor_types": None,
        "seed_paper_id": SEED2, "seed_arxiv_id": "2102.00001", "seed_title": "Seed Two",
        "gold_paper_ids": [GOLD2], "gold_arxiv_ids": ["2102.00003"],
        "bridge_paper_ids": [BRIDGE2], "bridge_arxiv_ids": ["2102.00002"], "filter_agreement": None,
        "bridge_necessary": True,
    },
    {
        "id": "mt_0001", "question_type": "multi-target", "depth": 1, "reasoning_type": "METHOD",
        "cognitive_skill": "contrast", "venue": "ICLR", "consensus_tier": "bronze",
        "question": "How do the methods differ?", "options": ["w", "x", "y", "z"],
        "correct_index": 0, "distractor_types": ["correct", "seed_only", "wrong_paper", "no_context"],
        "seed_paper_id": SEED3, "seed_arxiv_id": "2103.00001", "seed_title": "Seed Three",
        "gold_paper_ids": [GOLD3A, GOLD3B], "gold_arxiv_ids": ["2103.00002", "2103.00003"],
        "bridge_paper_ids": [], "bridge_arxiv_ids": [], "filter_agreement": "2",
    },
]

GRAPHS = [
    {
        "sample_id": "st_0001",
        "nodes": {
            SEED1: _node("Seed One", "2101.00001"),
            REF1: _node("Some Reference", "", 2021),
            GOLD1: _node("Gold One", "2101.00003"),
            META1: _node("Metadata Only", "2101.09999", None),
        },
        "edges": {SEED1: [REF1, GOLD1, META1], GOLD1: [REF1]},
    },
    {
        "sample_id": "st_0002",
        "nodes": {
            SEED2: _node("Seed Two", "2102.00001"),
            BRIDGE2: _node("Bridge Two", "2102.00002"),
            GOLD2: _node("Gold Two", "2102.00003"),
        },
        "edges": {SEED2: [BRIDGE2], BRIDGE2: [GOLD2]},
    },
    {
        "sample_id": "mt_0001",
        "nodes": {
            SEED3: _node("Seed Three", "2103.00001"),
            GOLD3A: _node("Gold Three A", "2103.00002"),
            GOLD3B: _node("Gold Three B", "2103.00003"),
        },
        "edges": {SEED3: [GOLD3A, GOLD3B]},
    },
]

LABELS = [
    ("st_0001", [("Gold One", "2101.00003", "Results", "direct"), ("Seed One", "2101.00001", "Method", "supporting")]),
    ("st_0002", [("Gold Two", "2102.00003", "Experiments", "direct")]),
    ("mt_0001", [("Gold Three A", "2103.00002", "Method", "direct"), ("Gold Three B", "2103.00003", "Method", "direct"),
                 ("Gold Three B", "", "Discussion", "supporting")]),
]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def write_release(root: Path, *, question_suffix: str = "") -> str:
    """Write the tiny release; return its benchmark_sha256 (first 16 hex of qa/full.jsonl's SHA-256)."""
    items = [dict(it, question=it["question"] + question_suffix) for it in ITEMS]
    _jsonl(root / "qa/full.jsonl", items)
    _jsonl(root / "graphs/full.jsonl", GRAPHS)
    _jsonl(
        root / "paper_pool/papers.jsonl",
        [{"arxiv_id": a, "title": t, "sections": [{"header": h, "text": x} for h, x in secs]}
         for a, (t, secs) in PAPERS.items()],
    )
    _jsonl(
        root / "audit/recall_labels.jsonl",
        [{"sample_id": sid, "analysis": {"section_recall_labels": [
            {"paper": p, "arxiv_id": a, "section": s, "relevance": r, "what_it_contains": "..."}
            for p, a, s, r in labs]}} for sid, labs in LABELS],
    )
    return hashlib.sha256((root / "qa/full.jsonl").read_bytes()).hexdigest()[:16]


SAMPLE_IDS = [it["id"] for it in ITEMS]

# ------------------------------------------------------------------------------------------------
# hand-written run directories (docs/formats.md#trajectory-store)

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def run_rows(run_id: str, bench_sha: str, samples: list[str] = SAMPLE_IDS, *, model: str = "m1",
             replicate: int = 0) -> dict[str, list[dict[str, Any]]]:
    """Rows of a small run: per sample one final attempt, 2 turns, 3 tool calls, 2 messages."""
    rows: dict[str, list[dict[str, Any]]] = {t: [] for t in ts.TABLES}
    rows["runs"].append({
        "run_id": run_id, "model": model, "backend": "sim", "condition": "full", "replicate": replicate,
        "benchmark_sha256": bench_sha, "budget_total": 30, "max_turns": 20, "max_total_tokens": 200_000,
        "harness_version": "0.1.0", "config_json": "{}", "family": "fam", "tier": None,
        "started_at": T0, "finished_at": T0,
    })
    for k, sid in enumerate(samples):
        rows["trajectories"].append({
            "run_id": run_id, "sample_id": sid, "attempt": 0, "is_final": True, "predicted_answer": "B",
            "predicted_index": 1, "is_correct": sid == "st_0001", "terminated_by": "answer", "total_turns": 2,
            "budget_used": 6, "total_prompt_tokens": 1000 + k, "total_completion_tokens": 100,
            "cache_read_tokens": 0, "cache_creation_tokens": 0, "total_tokens": 1100 + k, "tool_errors": 0,
            "api_error_count": 0, "transient_retry_count": 0, "wall_time_s": 1.5, "reasoning": "because",
        })
        for turn in range(2):
            rows["turns"].append({
                "run_id": run_id, "sample_id": sid, "attempt": 0, "turn": turn, "role": "assistant",
                "n_tool_calls": 2 if turn == 0 else 1, "prompt_tokens": 500, "completion_tokens": 50,
                "cache_read_tokens": 0, "cache_creation_tokens": 0, "cumulative_tokens": 550 * (turn + 1),
                "budget_before": 30 if turn == 0 else 24, "budget_after": 24, "content_chars": 10,
                "t_offset_s": float(turn),
            })
        calls = [(0, 0, "list_sections", 1, "ok"), (0, 1, "read_section", 5, "ok"), (1, 0, "submit_answer", 0, "ok")]
        for seq, (turn, ci, tool, cost, status) in enumerate(calls):
            rows["tool_calls"].append({
                "run_id": run_id, "sample_id": sid, "attempt": 0, "turn": turn, "call_index": ci, "seq": seq,
                "tool": tool, "args_json": "{}", "paper_id": None, "section_query": None,
                "resolved_header": None, "resolved_section_index": None, "search_query": None,
                "answer": "B" if tool == "submit_answer" else None, "cost": cost, "status": status,
                "output_chars": 40, "budget_after": 29 if seq == 0 else 24,
            })
        for idx, role in enumerate(("system", "user")):
            rows["messages"].append({
                "run_id": run_id, "sample_id": sid, "attempt": 0, "idx": idx, "role": role, "name": None,
                "tool_call_id": None, "content": f"{role} text",
            })
    return rows


def write_run(out: Path, rows: dict[str, list[dict[str, Any]]], *, success: bool = True,
              parts: int = 1, edit: Callable[[str, pa.Table], pa.Table] | None = None) -> Path:
    """Write ``rows`` as a run directory ``out/<run_id>`` (tables split into ``parts`` parts)."""
    run_id = rows["runs"][0]["run_id"]
    d = out / run_id
    d.mkdir(parents=True, exist_ok=True)
    for table, schema in ts.TABLES.items():
        data = rows.get(table, [])
        # a column added to the format later that no row gives is left out, as earlier writers did
        absent = [f.name for f in later_fields(schema) if not any(f.name in r for r in data)]
        schema = pa.schema([f for f in schema if f.name not in absent])
        n = 1 if table == "runs" else parts
        for k in range(n):
            chunk = data[k::n]
            t = pa.Table.from_pylist(chunk, schema=schema)
            if edit is not None:
                t = edit(table, t)
            pq.write_table(t, d / f"{table}-{k:05d}.parquet")
    if success:
        (d / "_SUCCESS").write_text("{}\n")
    return d


# ------------------------------------------------------------------------------------------------
# hand-written reference-harness JSON (the reference harness)


def ref_turn(turn: int, calls: list[tuple[str, dict[str, Any]]], outputs: list[tuple[str, int]], *,
             before: int, after: int, prompt: int = 100, completion: int = 10, role: str = "assistant",
             content: str | None = "thinking", ts_: float = 0.0) -> dict[str, Any]:
    return {
        "turn": turn, "role": role, "content": content,
        "tool_calls": [{"id": f"c{turn}_{i}", "name": n, "args": a} for i, (n, a) in enumerate(calls)],
        "tool_results": [{"name": calls[i][0], "args": calls[i][1], "output": o, "cost": c}
                         for i, (o, c) in enumerate(outputs)],
        "budget_before": before, "budget_after": after, "timestamp": ts_,
        "prompt_tokens": prompt, "completion_tokens": completion,
    }


def ref_trajectory(sample_id: str, turns: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    rec = {
        "sample_id": sample_id, "model": "ref-model", "question_type": "single-target", "depth": 1,
        "reasoning_type": "RESULT", "correct_index": 1, "predicted_answer": "", "predicted_index": -1,
        "is_correct": False, "reasoning": "", "budget_total": 30, "budget_used": 0,
        "total_turns": len(turns),
        "total_prompt_tokens": sum(t.get("prompt_tokens", 0) for t in turns),
        "total_completion_tokens": sum(t.get("completion_tokens", 0) for t in turns),
        "cache_read_tokens": 0, "cache_creation_tokens": 0, "wall_time_s": 2.0, "turns": turns,
        "messages": [], "tool_errors": 0, "api_error_count": 0, "transient_retry_count": 0,
        "retry_count": 0, "terminated_by": "answer",
    }
    rec.update(kw)
    return rec


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
