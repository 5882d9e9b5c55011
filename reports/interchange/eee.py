"""One warehouse run as Every Eval Ever records (docs/interchange.md#every-eval-ever-what-maps-to-what): an aggregate
record with one result per metric, and an instance record per (attempt, metric). Pure: reads a
:class:`~.source.RunExport`, returns JSON-ready dicts.

What EEE has no field for travels in ``metadata`` (instances; string values) and ``additional_details``
(aggregate): the epoch, attempt, whether the attempt is final, the termination, the run id, the
warehouse's own per-turn and per-call columns (JSON text), and each score's scorer and key.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Sequence
from typing import Any

from agenthop.schemas import metrics as mschema
from agenthop.schemas.eee import VERSION
from agenthop.schemas.sample_hash import sample_hash

from ..stats import wilson_interval
from .source import RunExport, dumps, plain, row_json

LIBRARY = "agenthop-warehouse"
ORGANIZATION = "AgentHop Warehouse"
#: the score of the metric a trajectory's own ``score`` column holds (no raw.scores row behind it)
FROM_TRAJECTORY = "trajectory"


def file_uuid(kind: str, *parts: str) -> str:
    """A lowercase version-4 UUID derived from ``parts`` (stable: the same run exports to the same name)."""
    digest = hashlib.sha256("\0".join((kind, *parts)).encode("utf-8")).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text) or "_"


def developer_and_name(run: dict[str, Any]) -> tuple[str, str]:
    """The model's developer folder and model folder: the id's prefix before a slash, else the run's
    family, else its backend (ids without a slash need one named)."""
    model = str(run["model"])
    if "/" in model:
        dev, name = model.split("/", 1)
        return _slug(dev), _slug(name.replace("/", "_"))
    return _slug(str(run.get("family") or run.get("backend") or "unknown")), _slug(model)


def folder(run: dict[str, Any]) -> str:
    dev, name = developer_and_name(run)
    return f"data/{_slug(str(run['benchmark']))}/{dev}/{name}"


def _timestamp(run: dict[str, Any], key: str) -> str | None:
    value = run.get(key)
    return None if value is None else str(int(value.timestamp()))


def evaluation_id(run: dict[str, Any]) -> str:
    stamp = _timestamp(run, "started_at") or "0"
    return f"{run['benchmark']}/{run['model']}/{stamp}/{run['run_id']}"


def _strings(mapping: dict[str, Any]) -> dict[str, str]:
    return {k: v if isinstance(v, str) else dumps(plain(v)) for k, v in mapping.items() if v is not None}


def result_id(benchmark: str, metric: str) -> str:
    return f"{benchmark}/{metric}"


def uncertainty(values: Sequence[float], kind: str) -> dict[str, Any]:
    """Standard error, standard deviation and a 95% interval of the mean of ``values`` (Wilson for a
    binary metric, normal approximation otherwise); only the count for fewer than two values."""
    n = len(values)
    out: dict[str, Any] = {"num_samples": n}
    if n < 2:
        return out
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    se = sd / math.sqrt(n)
    out["standard_deviation"] = sd
    out["standard_error"] = {"value": se, "method": "analytic"}
    if kind == "binary":
        ci = wilson_interval(int(round(sum(values))), n)
        if ci is not None:
            out["confidence_interval"] = {"lower": ci[0], "upper": ci[1], "confidence_level": 0.95, "method": "wilson"}
    else:
        out["confidence_interval"] = {"lower": mean - 1.96 * se, "upper": mean + 1.96 * se, "confidence_level": 0.95,
                                      "method": "normal"}
    return out


def _bound(value: float | None, default: str) -> float | str:
    return default if value is None else value


def _generation_config(ex: RunExport) -> dict[str, Any]:
    run = ex.run
    limits: dict[str, Any] = {}
    if run.get("max_total_tokens"):
        limits["token_limit"] = int(run["max_total_tokens"])
    args: dict[str, Any] = {"agentic_eval_config": {"available_tools": [{"name": t} for t in ex.tools]}}
    if limits:
        args["eval_limits"] = limits
    details = {k: run.get(k) for k in ("budget_total", "max_turns", "max_total_tokens", "condition", "backend")}
    return {"generation_args": args, "additional_details": _strings(details)}


def aggregate(ex: RunExport, file_path: str, checksum: str, total_rows: int) -> dict[str, Any]:
    """The aggregate record of the run (one result per metric with values)."""
    run = ex.run
    dev, _ = developer_and_name(run)
    results = []
    for m in ex.metrics:
        vals = [v for (sid, metric), v in ex.values.items() if metric == m["metric"] and v is not None]
        if not vals:
            continue
        results.append({
            "evaluation_result_id": result_id(ex.benchmark, m["metric"]),
            "evaluation_name": ex.benchmark,
            "source_data": {"dataset_name": ex.benchmark, "source_type": "other"},
            "metric_config": {
                "evaluation_description": m.get("description") or m["label"],
                "metric_id": m["metric"], "metric_name": m["label"], "metric_kind": m["kind"],
                "lower_is_better": m["direction"] == mschema.LOWER,
                "score_type": "continuous",
                "min_score": _bound(m.get("min_value"), "-Infinity"),
                "max_score": _bound(m.get("max_value"), "Infinity"),
            },
            "score_details": {"score": sum(vals) / len(vals), "uncertainty": uncertainty(vals, m["kind"]),
                              "details": _strings({"direction": m["direction"], "is_primary": m["is_primary"]})},
            "generation_config": _generation_config(ex),
        })
    record: dict[str, Any] = {
        "schema_version": VERSION,
        "evaluation_id": evaluation_id(run),
        "retrieved_timestamp": _timestamp(run, "finished_at") or _timestamp(run, "started_at") or "0",
        "source_metadata": {
            "source_name": ORGANIZATION, "source_type": "evaluation_run" if total_rows else "documentation",
            "source_organization_name": ORGANIZATION, "evaluator_relationship": "third_party",
            "additional_details": _strings({
                "run_id": run["run_id"], "backend": run.get("backend"), "condition": run.get("condition"),
                "replicate": run.get("replicate"), "epoch": run.get("epoch"), "run_group": run.get("run_group"),
                "harness_version": run.get("harness_version"),
            }),
        },
        "eval_library": {"name": LIBRARY, "version": str(run.get("harness_version") or "unknown")},
        "model_info": {
            "name": str(run["model"]), "id": str(run["model"]), "developer": dev,
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown",
                                   **_strings({"family": run.get("family"), "tier": run.get("tier")})},
        },
        "evaluation_results": results,
    }
    started = _timestamp(run, "started_at")
    if started:
        record["evaluation_timestamp"] = started
    if total_rows:
        record["detailed_evaluation_results"] = {"format": "jsonl", "file_path": file_path, "hash_algorithm": "sha256",
                                                 "checksum": checksum, "total_rows": total_rows}
    return record


def arguments(args_json: str) -> dict[str, str]:
    """Tool-call arguments as an object of strings (what both EEE checkers accept; ATIF's too)."""
    try:
        value = json.loads(args_json)
    except ValueError:
        return {"_raw": args_json}
    if not isinstance(value, dict):
        return {"_value": dumps(value)}
    return {str(k): v if isinstance(v, str) else dumps(v) for k, v in value.items()}


def messages(ex: RunExport, sample_id: str, attempt: int, text: str, answer: str | None) -> list[dict[str, Any]]:
    """The attempt's conversation: the messages as recorded when the run kept them, else one built from
    its turns and tool calls (the input, each turn's calls and their results, the answer)."""
    recorded = ex.details["messages"].get((sample_id, attempt), [])
    if recorded:
        out = []
        for i, m in enumerate(recorded):
            msg: dict[str, Any] = {"turn_idx": i, "role": m["role"], "content": m["content"]}
            if m.get("tool_call_id"):
                msg["tool_call_id"] = [m["tool_call_id"]]
            out.append(msg)
        return out
    calls: dict[int, list[dict[str, Any]]] = {}
    for c in ex.details["tool_calls"].get((sample_id, attempt), []):
        calls.setdefault(c["turn"], []).append(c)
    out = [{"turn_idx": 0, "role": "user", "content": text}]
    turns = ex.details["turns"].get((sample_id, attempt), [])
    for t in turns:
        these = calls.get(t["turn"], [])
        msg = {"turn_idx": len(out), "role": "assistant", "content": t.get("error_text")}
        if these:
            msg["tool_calls"] = [{"id": f"call-{t['turn']}-{c['call_index']}", "name": c["tool"],
                                  "arguments": arguments(c["args_json"])} for c in these]
        out.append(msg)
        for c in these:
            out.append({"turn_idx": len(out), "role": "tool", "content": c["status"],
                        "tool_call_id": [f"call-{t['turn']}-{c['call_index']}"]})
    if answer is not None and (not turns or out[-1]["role"] != "assistant" or out[-1]["content"] is None):
        out.append({"turn_idx": len(out), "role": "assistant", "content": answer})
    return out


def _is_correct(value: float, metric: dict[str, Any], trajectory: dict[str, Any] | None) -> bool:
    if metric.get("is_primary") and trajectory is not None:
        return bool(trajectory["is_correct"])
    top = metric.get("max_value")
    if metric["direction"] == mschema.LOWER:
        low = metric.get("min_value")
        return low is not None and value <= low
    return value >= (top if top is not None else 1.0)


def instances(ex: RunExport) -> list[dict[str, Any]]:
    """The instance records: per final attempt one per metric with a value; per earlier attempt one,
    of the primary metric, scored by the trajectory's own score (its ``metadata.is_final`` is false)."""
    run = ex.run
    eval_id = evaluation_id(run)
    by_sample: dict[str, list[dict[str, Any]]] = {}
    for t in ex.trajectories:
        by_sample.setdefault(t["sample_id"], []).append(t)
    primary = next((m for m in ex.metrics if m["is_primary"]), ex.metrics[0] if ex.metrics else None)
    out = []
    for sid in ex.samples():
        text, refs = ex.inputs.get(sid, ("", []))
        attempts = by_sample.get(sid) or [None]
        for t in attempts:
            final = t is None or bool(t["is_final"])
            if final:
                rows = [(m, ex.values[(sid, m["metric"])]) for m in ex.metrics
                        if ex.values.get((sid, m["metric"])) is not None]
            elif primary is not None and t.get("score") is not None:
                rows = [(primary, float(t["score"]))]
            else:
                rows = []
            for m, value in rows:
                out.append(_instance(ex, eval_id, sid, text, refs, t, m, float(value), final))
    return out


def _score_meta(ex: RunExport, sid: str, m: dict[str, Any], value: float, t: dict[str, Any] | None,
                final: bool) -> dict[str, Any]:
    """Where a metric's value came from: a raw.scores row (its scorer, key and text), the trajectory's
    own score (the primary metric that equals it, or any value of an earlier attempt), or the
    benchmark's own metric (named ``scorer.key`` on import)."""
    metric = m["metric"]
    if final:
        for s in ex.scores.get(sid, []):
            if f"{s['scorer']}.{s['key']}" == metric:
                return {"scorer": s["scorer"], "score_key": s["key"], "value_text": s["value_text"]}
    if t is not None and (not final or (m.get("is_primary") and t.get("score") is not None and float(t["score"]) == value)):
        return {"metric_source": FROM_TRAJECTORY}
    scorer, _, key = metric.partition(".")
    return {"scorer": scorer, "score_key": key or "value"}


def _instance(ex: RunExport, eval_id: str, sid: str, text: str, refs: list[str], t: dict[str, Any] | None,
              m: dict[str, Any], value: float, final: bool) -> dict[str, Any]:
    run = ex.run
    attempt = int(t["attempt"]) if t is not None else 0
    answer = t.get("predicted_answer") if t is not None else None
    rec: dict[str, Any] = {
        "schema_version": VERSION, "evaluation_id": eval_id, "model_id": str(run["model"]),
        "evaluation_name": ex.benchmark, "evaluation_result_id": result_id(ex.benchmark, m["metric"]),
        "sample_id": sid, "input": {"raw": text, "reference": refs},
    }
    if sid in ex.inputs:
        rec["sample_hash"] = sample_hash(text, refs)
    msgs = messages(ex, sid, attempt, text, answer) if t is not None else []
    n_calls = sum(len(msg.get("tool_calls", [])) for msg in msgs)
    if len(msgs) > 1:
        rec["interaction_type"] = "agentic" if n_calls else "multi_turn"
        rec["messages"] = msgs
    else:
        rec["interaction_type"] = "single_turn"
        rec["output"] = {"raw": [answer] if answer is not None else []}
    last = max((i for i, msg in enumerate(msgs) if msg["role"] == "assistant"), default=0)
    rec["answer_attribution"] = [] if answer is None else [{
        "turn_idx": last, "source": "trajectories.predicted_answer", "extracted_value": answer,
        "extraction_method": "agent_final_answer", "is_terminal": True}]
    evaluation: dict[str, Any] = {"score": value, "is_correct": _is_correct(value, m, t if final else None)}
    if msgs:
        evaluation["num_turns"] = len(msgs)
        evaluation["tool_calls_count"] = n_calls
    if not final and t is not None:
        evaluation["is_correct"] = bool(t["is_correct"])
    rec["evaluation"] = evaluation
    meta: dict[str, Any] = {"run_id": run["run_id"], "epoch": run.get("epoch"), "attempt": attempt,
                            "is_final": final, **_score_meta(ex, sid, m, value, t, final)}
    if t is not None:
        rec["token_usage"] = {
            "input_tokens": int(t["total_prompt_tokens"]), "output_tokens": int(t["total_completion_tokens"]),
            "total_tokens": int(t["total_tokens"]), "input_tokens_cache_read": int(t["cache_read_tokens"]),
            "input_tokens_cache_write": int(t["cache_creation_tokens"]),
        }
        rec["performance"] = {"latency_ms": float(t["wall_time_s"]) * 1000.0}
        if t["terminated_by"] == "error":
            rec["error"] = "the attempt ended on an error (terminated_by: error)"
        meta.update({
            "terminated_by": t["terminated_by"], "cost": t.get("budget_used"),
            "trajectory": dumps(row_json(t)),
            "turns": dumps([row_json(r) for r in ex.details["turns"].get((sid, attempt), [])]),
            "tool_calls": dumps([row_json(r) for r in ex.details["tool_calls"].get((sid, attempt), [])]),
            "messages": "recorded" if ex.details["messages"].get((sid, attempt)) else "built",
        })
    rec["metadata"] = _strings(meta)
    return rec
