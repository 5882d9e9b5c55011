"""One warehouse run as ATIF trajectories (docs/interchange.md#atif-what-maps-to-what): one document per (sample, final
attempt). Pure: reads a :class:`~.source.RunExport`, returns JSON-ready dicts.

Steps: the input as a user step, then one agent step per turn with its tool calls, their results
(the call's status) as the observation and the turn's tokens as its metrics. What ATIF has no field
for (run id, sample, epoch, attempt, termination, score, the item's input and references) is in the
document's ``extra``; the warehouse's own per-turn and per-call columns in each step's ``extra``.
"""

from __future__ import annotations

from typing import Any

from agenthop.schemas.sample_hash import sample_hash

from .eee import arguments
from .source import RunExport, row_json

VERSION = "ATIF-v1.7"
AGENT = "agenthop-warehouse"


def _agent_step(step_id: int, model: str, turn: dict[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any]:
    step: dict[str, Any] = {"step_id": step_id, "source": "agent", "model_name": model,
                            "message": turn.get("error_text") or ""}
    if calls:
        ids = [f"call-{turn['turn']}-{c['call_index']}" for c in calls]
        step["tool_calls"] = [{"tool_call_id": i, "function_name": c["tool"], "arguments": arguments(c["args_json"]),
                               "extra": row_json(c, ("run_id", "sample_id", "attempt", "turn", "tool"))}
                              for i, c in zip(ids, calls)]
        step["observation"] = {"results": [{"source_call_id": i, "content": c["status"]} for i, c in zip(ids, calls)]}
    step["metrics"] = {"prompt_tokens": int(turn["prompt_tokens"]), "completion_tokens": int(turn["completion_tokens"]),
                       "cached_tokens": int(turn["cache_read_tokens"]),
                       "extra": {"cache_creation_tokens": int(turn["cache_creation_tokens"])}}
    step["extra"] = row_json(turn, ("run_id", "sample_id", "attempt", "prompt_tokens", "completion_tokens",
                                    "cache_read_tokens", "cache_creation_tokens"))
    return step


def trajectory(ex: RunExport, t: dict[str, Any]) -> dict[str, Any]:
    run = ex.run
    sid, attempt = t["sample_id"], int(t["attempt"])
    text, refs = ex.inputs.get(sid, ("", []))
    steps: list[dict[str, Any]] = [{"step_id": 1, "source": "user", "message": text}]
    calls: dict[int, list[dict[str, Any]]] = {}
    for c in ex.details["tool_calls"].get((sid, attempt), []):
        calls.setdefault(c["turn"], []).append(c)
    turns = ex.details["turns"].get((sid, attempt), [])
    for turn in turns:
        steps.append(_agent_step(len(steps) + 1, str(run["model"]), turn, calls.get(turn["turn"], [])))
    if not turns and t.get("predicted_answer") is not None:
        steps.append({"step_id": 2, "source": "agent", "model_name": str(run["model"]), "message": t["predicted_answer"]})
    extra: dict[str, Any] = {
        "run_id": run["run_id"], "benchmark": ex.benchmark, "sample_id": sid, "attempt": attempt,
        "epoch": run.get("epoch"), "is_final": bool(t["is_final"]), "terminated_by": t["terminated_by"],
        "score": t.get("score"), "is_correct": bool(t["is_correct"]), "predicted_answer": t.get("predicted_answer"),
        "input": text, "reference": refs, "trajectory": row_json(t),
        "scores": [row_json(s, ("run_id", "sample_id")) for s in ex.scores.get(sid, [])],
    }
    if sid in ex.inputs:
        extra["sample_hash"] = sample_hash(text, refs)
    return {
        "schema_version": VERSION,
        "session_id": run["run_id"],
        "trajectory_id": f"{run['run_id']}/{sid}/{attempt}",
        "agent": {"name": AGENT, "version": str(run.get("harness_version") or "unknown"), "model_name": str(run["model"]),
                  "extra": {"backend": run.get("backend"), "condition": run.get("condition"), "tools": ex.tools}},
        "steps": steps,
        "final_metrics": {"total_prompt_tokens": int(t["total_prompt_tokens"]),
                          "total_completion_tokens": int(t["total_completion_tokens"]),
                          "total_cached_tokens": int(t["cache_read_tokens"]), "total_steps": len(steps)},
        "extra": extra,
    }


def trajectories(ex: RunExport) -> list[dict[str, Any]]:
    """A document per final attempt of the run (runs imported without trajectories have none)."""
    return [trajectory(ex, t) for t in ex.trajectories if t["is_final"]]
