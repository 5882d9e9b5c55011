"""ATIF trajectories -> warehouse rows (docs/interchange.md#importing). Pure: no warehouse access.

Runs: the trajectories of one (task, ``session_id``) make a run of benchmark ``atif:<task>``, id
``atif-<session_id>``. The task is the document's ``extra.benchmark`` (an export of this warehouse) or
``extra.task``, else the Harbor trial folder the file lies in (``<task>__<id>/agent/trajectory.json``),
else ``trajectories``. A document is one sample's attempt: ``extra.sample_id`` / ``extra.attempt``, else
its ``trajectory_id`` (else the file name) and attempt 0. Each agent step is a turn (its metrics its
tokens), each tool call a call (its result the observation); the score, termination and the
warehouse's own columns come from ``extra`` when an export put them there. The item is the first user
step's message, its references ``extra.reference``.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from typing import Any

from agenthop.schemas import metrics as mschema
from agenthop.schemas.sample_hash import sample_hash

from .atif_read import AtifFile
from .eee_map import MappedFile, MappedRun

KIND = "atif"
PREFIX = "atif:"
DEFAULT_TASK = "trajectories"


def _text(message: Any) -> str:
    if isinstance(message, str):
        return message
    parts = [p.get("text") for p in message or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(parts)


def task_of(f: AtifFile) -> str:
    extra = f.doc.get("extra") or {}
    for k in ("benchmark", "task"):
        if isinstance(extra.get(k), str) and extra[k]:
            return str(extra[k])
    if f.path.parent.name == "agent" and "__" in f.path.parent.parent.name:
        return f.path.parent.parent.name.rsplit("__", 1)[0]
    return DEFAULT_TASK


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _attempt_rows(run_id: str, f: AtifFile) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]],
                                                    list[dict[str, Any]], tuple[str, list[str]]]:
    doc = f.doc
    extra = doc.get("extra") or {}
    sid = str(extra.get("sample_id") or doc.get("trajectory_id") or f.path.stem)
    attempt = _int(extra.get("attempt"))
    key = {"run_id": run_id, "sample_id": sid, "attempt": attempt}
    steps = doc["steps"]
    user = next((s for s in steps if s["source"] == "user"), None)
    text = str(extra["input"]) if isinstance(extra.get("input"), str) else _text(user["message"]) if user else ""
    refs = [str(r) for r in extra.get("reference") or []] if isinstance(extra.get("reference"), list) else []
    turns, calls = [], []
    answer = None
    for step in steps:
        if step["source"] != "agent":
            continue
        own = step.get("extra") if isinstance(step.get("extra"), dict) else {}
        m = step.get("metrics") or {}
        m_extra = m.get("extra") if isinstance(m.get("extra"), dict) else {}
        these = step.get("tool_calls") or []
        prompt, completion = _int(m.get("prompt_tokens")), _int(m.get("completion_tokens"))
        cache_write = _int(m_extra.get("cache_creation_tokens"))
        turn = _int(own.get("turn"), len(turns))
        message = _text(step["message"])
        turns.append({
            "turn": turn, "role": "assistant", "n_tool_calls": len(these), "cumulative_tokens": 0,
            "budget_before": 0, "budget_after": 0, "content_chars": len(message), "t_offset_s": 0.0,
            "error_text": None, **{k: v for k, v in own.items() if k != "turn"}, **key, "prompt_tokens": prompt,
            "completion_tokens": completion, "cache_read_tokens": _int(m.get("cached_tokens")),
            "cache_creation_tokens": cache_write,
        })
        results = {r.get("source_call_id"): r for r in (step.get("observation") or {}).get("results") or []}
        for i, c in enumerate(these):
            ce = c.get("extra") if isinstance(c.get("extra"), dict) else {}
            content = results.get(c["tool_call_id"], {}).get("content")
            calls.append({
                "call_index": i, "seq": len(calls), "paper_id": None, "section_query": None, "resolved_header": None,
                "resolved_section_index": None, "search_query": None, "answer": None, "cost": 0,
                "status": "ok", "output_chars": len(_text(content)) if content is not None else 0, "budget_after": 0,
                "error_type": None, **ce, **key, "turn": turn, "tool": str(c["function_name"]),
                "args_json": ce.get("args_json") or json.dumps(c["arguments"], ensure_ascii=False, sort_keys=True),
            })
        if message and not these:
            answer = message
    own_traj = extra.get("trajectory") if isinstance(extra.get("trajectory"), dict) else {}
    fm = doc.get("final_metrics") or {}
    prompt = _int(fm.get("total_prompt_tokens"), sum(t["prompt_tokens"] for t in turns))
    completion = _int(fm.get("total_completion_tokens"), sum(t["completion_tokens"] for t in turns))
    cache_read = _int(fm.get("total_cached_tokens"), sum(t["cache_read_tokens"] for t in turns))
    cache_write = sum(t["cache_creation_tokens"] for t in turns)
    score = extra.get("score")
    score = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
    correct = extra.get("is_correct")
    traj = {
        "predicted_index": -1, "budget_used": 0, "tool_errors": 0, "api_error_count": 0,
        "transient_retry_count": 0, "wall_time_s": 0.0, "reasoning": None, "wait_s": None, "repaired_chars": None,
        "answer_json": None, **own_traj, **key,
        "is_final": bool(extra.get("is_final", True)),
        "predicted_answer": extra.get("predicted_answer", answer),
        "is_correct": bool(correct) if isinstance(correct, bool) else (score is not None and score >= 1.0),
        "score": score, "terminated_by": str(extra.get("terminated_by") or "answer"), "total_turns": len(turns),
        "total_prompt_tokens": prompt, "total_completion_tokens": completion, "cache_read_tokens": cache_read,
        "cache_creation_tokens": cache_write, "total_tokens": prompt + completion + cache_write,
    }
    scores = [{**s, "run_id": run_id, "sample_id": sid} for s in extra.get("scores") or [] if isinstance(s, dict)]
    return traj, turns, calls, scores, (text, refs)


def map_files(files: list[AtifFile]) -> MappedFile:
    out = MappedFile()
    groups: dict[tuple[str, str], list[AtifFile]] = defaultdict(list)
    for f in files:
        session = str(f.doc.get("session_id") or f.path.parent.name)
        groups[(task_of(f), session)].append(f)
    for (task, session), group in groups.items():
        benchmark = PREFIX + task
        run_id = f"atif-{session}"
        h = hashlib.sha256()
        for f in group:
            h.update(f.content_sha256.encode())
        mr = MappedRun(run_id, benchmark, ", ".join(str(f.path) for f in group[:3]) + (" ..." if len(group) > 3 else ""),
                       h.hexdigest())
        agent = group[0].doc["agent"]
        items = out.items.setdefault(benchmark, [])
        known = {i["sample_id"] for i in items}
        any_score = False
        for f in group:
            traj, turns, calls, scores, (text, refs) = _attempt_rows(run_id, f)
            any_score = any_score or traj["score"] is not None
            mr.tables["trajectories"].append(traj)
            mr.tables["turns"] += turns
            mr.tables["tool_calls"] += calls
            mr.tables["scores"] += scores
            if traj["sample_id"] not in known:
                known.add(traj["sample_id"])
                items.append({"benchmark": benchmark, "sample_id": traj["sample_id"], "input": text,
                              "target": json.dumps(refs, ensure_ascii=False), "metadata_json": None,
                              "item_order": len(items), "sample_hash": sample_hash(text, refs)})
        extra = group[0].doc.get("extra") or {}
        aextra = agent.get("extra") if isinstance(agent.get("extra"), dict) else {}
        mr.tables["runs"].append({
            "run_id": run_id, "model": str(agent.get("model_name") or agent["name"]), "backend": KIND, "condition": "",
            "replicate": max(_int(extra.get("epoch"), 1) - 1, 0), "benchmark_sha256": "", "budget_total": 0,
            "max_turns": 0, "max_total_tokens": 0, "harness_version": str(agent["version"]),
            "config_json": json.dumps({"source": KIND, "session_id": session, "agent": agent["name"],
                                       "original_run_id": extra.get("run_id"), "agent_extra": aextra},
                                      ensure_ascii=False, sort_keys=True, default=str),
            "family": None, "tier": None, "started_at": None, "finished_at": None, "generation": None,
            "benchmark": benchmark, "paradigm": None,
        })
        out.runs.append(mr)
        if any_score:
            out.metric_defs.append({"benchmark": benchmark, "metric": "score", "kind": "continuous",
                                    "direction": mschema.HIGHER, "is_primary": True, "label": "score", "source": KIND,
                                    "description": "the trajectory's score (extra.score)", "min_value": None,
                                    "max_value": None})
    return out

