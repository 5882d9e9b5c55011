"""Every Eval Ever records -> warehouse rows (docs/interchange.md#importing). Pure: no warehouse access.

Runs: one per (aggregate file, evaluation name, epoch) that has instances, benchmark
``eee:<evaluation name>``, id ``eee-<uuid>`` (plus ``-<evaluation name>`` when the file has several,
``-e<epoch>`` when it has several epochs). A trajectory per (sample, attempt); each evaluation result an
instance scores becomes a ``raw.scores`` row (scorer = the result id, key = its metric id), the first
result (or the one marked primary) is ``trajectories.score``. Tool calls and turns come from the
instance's messages; when the record carries the warehouse's own rows in ``metadata`` (an export of
this warehouse) they are taken from there, so a round trip gives the same rows. Results without
instances are reported results (``raw.reported_results``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from agenthop.ingest.metric_names import metric_name
from agenthop.schemas import metrics as mschema
from agenthop.schemas.sample_hash import sample_hash

from .eee_read import EeeFile

KIND = "eee"
PREFIX = "eee:"
#: the metadata value an export gives a metric that is the trajectory's own score (no raw.scores row)
FROM_TRAJECTORY = "trajectory"


@dataclass
class MappedRun:
    run_id: str
    benchmark: str
    source: str = ""  # the file(s) it came from
    content_sha256: str = ""  # of those files: an unchanged run is not loaded again
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))


@dataclass
class MappedFile:
    runs: list[MappedRun] = field(default_factory=list)
    items: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # benchmark -> item rows
    metric_defs: list[dict[str, Any]] = field(default_factory=list)
    reported: list[dict[str, Any]] = field(default_factory=list)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def _meta(inst: dict[str, Any]) -> dict[str, Any]:
    meta = inst.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _loads(value: Any, default: Any) -> Any:
    if not isinstance(value, str):
        return default
    try:
        return json.loads(value)
    except ValueError:
        return default


def _stamp(text: Any) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(text), tz=timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _result_key(result: dict[str, Any]) -> tuple[str, str]:
    """(scorer, key) of an evaluation result: its id (else name) and its metric id."""
    scorer = str(result.get("evaluation_result_id") or result["evaluation_name"])
    return scorer, str(result["metric_config"].get("metric_id") or "value")


def _primary(results: list[dict[str, Any]]) -> dict[str, Any]:
    for r in results:
        if (r["score_details"].get("details") or {}).get("is_primary") == "true":
            return r
    return results[0]


def _metric_row(benchmark: str, result: dict[str, Any], metric: str, primary: bool) -> dict[str, Any]:
    mc = result["metric_config"]
    kind = mc.get("metric_kind") if mc.get("metric_kind") in mschema.KINDS else (
        "binary" if mc.get("score_type") == "binary" else "ordinal" if mc.get("score_type") == "levels" else "continuous")
    direction = (result["score_details"].get("details") or {}).get("direction")
    if direction not in mschema.DIRECTIONS:
        direction = mschema.LOWER if mc["lower_is_better"] else mschema.HIGHER

    def bound(v: Any) -> float | None:
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    return {"benchmark": benchmark, "metric": metric, "kind": kind, "direction": direction, "is_primary": primary,
            "label": str(mc.get("metric_name") or mc.get("metric_id") or metric), "source": KIND,
            "description": mc.get("evaluation_description"), "min_value": bound(mc.get("min_score")),
            "max_value": bound(mc.get("max_score"))}


def _reported(f: EeeFile, result: dict[str, Any], source: str) -> dict[str, Any]:
    rec = f.record
    unc = result["score_details"].get("uncertainty") or {}
    ci = unc.get("confidence_interval") or {}
    mc = result["metric_config"]
    return {
        "benchmark": PREFIX + result["evaluation_name"], "model": rec["model_info"]["id"],
        "evaluation_id": rec["evaluation_id"], "result_id": _result_key(result)[0],
        "metric": metric_name(*_result_key(result)), "score": float(result["score_details"]["score"]),
        "direction": mschema.LOWER if mc["lower_is_better"] else mschema.HIGHER,
        "standard_error": (unc.get("standard_error") or {}).get("value"), "ci_lower": ci.get("lower"),
        "ci_upper": ci.get("upper"), "num_samples": unc.get("num_samples"),
        "organization": rec["source_metadata"]["source_organization_name"],
        "retrieved_timestamp": str(rec["retrieved_timestamp"]), "source": source,
    }


def _messages_rows(inst: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(turns, tool_calls) of an instance: each assistant message a turn (a single-turn instance's output
    one), each of its calls a row. EEE has no per-message tokens: the instance's go on its last turn."""
    turns: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    msgs = inst.get("messages") or [{"role": "assistant", "content": "".join((inst.get("output") or {}).get("raw") or [])}]
    for m in msgs:
        if m.get("role") != "assistant":
            continue
        turn = len(turns) + 1
        these = m.get("tool_calls") or []
        turns.append({"turn": turn, "role": "assistant", "n_tool_calls": len(these), "prompt_tokens": 0,
                      "completion_tokens": 0, "cache_read_tokens": 0, "cache_creation_tokens": 0,
                      "cumulative_tokens": 0, "budget_before": 0, "budget_after": 0,
                      "content_chars": len(m.get("content") or "") if isinstance(m.get("content"), str) else 0,
                      "t_offset_s": 0.0, "error_text": None})
        for i, c in enumerate(these):
            args = c.get("arguments")
            calls.append({"turn": turn, "call_index": i, "seq": len(calls), "tool": str(c["name"]),
                          "args_json": json.dumps(args if args is not None else {}, ensure_ascii=False, sort_keys=True),
                          "paper_id": None, "section_query": None, "resolved_header": None,
                          "resolved_section_index": None, "search_query": None, "answer": None, "cost": 0,
                          "status": "ok", "output_chars": 0, "budget_after": 0, "error_type": None})
    if turns:
        usage = inst.get("token_usage") or {}
        last = turns[-1]
        last["prompt_tokens"] = int(usage.get("input_tokens") or 0)
        last["completion_tokens"] = int(usage.get("output_tokens") or 0)
        last["cache_read_tokens"] = int(usage.get("input_tokens_cache_read") or 0)
        last["cache_creation_tokens"] = int(usage.get("input_tokens_cache_write") or 0)
        last["cumulative_tokens"] = last["prompt_tokens"] + last["completion_tokens"] + last["cache_creation_tokens"]
    return turns, calls


def _recorded(msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for i, m in enumerate(msgs):
        content = m.get("content")
        ids = m.get("tool_call_id") or []
        out.append({"idx": i, "role": str(m["role"]), "name": None,
                    "tool_call_id": ids[0] if isinstance(ids, list) and ids else None,
                    "content": content if isinstance(content, str) or content is None else json.dumps(content)})
    return out


def _trajectory(run_id: str, sid: str, attempt: int, rows: list[dict[str, Any]], primary_id: str) -> dict[str, Any]:
    """The trajectory row of one attempt from its instance rows (one per evaluation result)."""
    main = next((r for r in rows if _result_key_of(r) == primary_id), rows[0])
    meta = _meta(main)
    own = _loads(meta.get("trajectory"), {})
    ev = main["evaluation"]
    usage = main.get("token_usage") or {}
    attribution = main.get("answer_attribution") or []
    answer = attribution[-1]["extracted_value"] if attribution else (
        ((main.get("output") or {}).get("raw") or [None])[-1])
    msgs = main.get("messages") or []
    prompt, completion = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
    cache_write = int(usage.get("input_tokens_cache_write") or 0)
    perf = main.get("performance") or {}
    terminated = meta.get("terminated_by") or ("error" if main.get("error") else "answer")
    out = {
        "predicted_index": -1, "total_turns": sum(1 for m in msgs if m.get("role") == "assistant"), "budget_used": 0,
        "tool_errors": 0, "api_error_count": 1 if main.get("error") else 0, "transient_retry_count": 0,
        "reasoning": None, "wait_s": None, "repaired_chars": None, "answer_json": None,
        **{k: v for k, v in own.items() if k not in ("is_final",)},
    }
    out.update({
        "run_id": run_id, "sample_id": sid, "attempt": attempt,
        "is_final": str(meta.get("is_final", "true")).lower() != "false",
        "predicted_answer": answer, "is_correct": bool(ev["is_correct"]), "score": float(ev["score"]),
        "terminated_by": terminated, "total_prompt_tokens": prompt, "total_completion_tokens": completion,
        "cache_read_tokens": int(usage.get("input_tokens_cache_read") or 0), "cache_creation_tokens": cache_write,
        "total_tokens": prompt + completion + cache_write,
        "wall_time_s": float(perf["latency_ms"]) / 1000.0 if perf.get("latency_ms") is not None else
        float(own.get("wall_time_s") or 0.0),
    })
    return out


def _result_key_of(inst: dict[str, Any]) -> str:
    return str(inst.get("evaluation_result_id") or inst["evaluation_name"])


def map_file(f: EeeFile, source: str) -> MappedFile:
    rec = f.record
    out = MappedFile()
    results = rec["evaluation_results"]
    by_name: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_name[r["evaluation_name"]].append(r)
    inst_by_name: dict[str, list[dict[str, Any]]] = defaultdict(list)
    result_names = {str(r.get("evaluation_result_id") or r["evaluation_name"]): r["evaluation_name"] for r in results}
    for _, inst in f.instances:
        inst_by_name[result_names.get(_result_key_of(inst), inst["evaluation_name"])].append(inst)
    several = len(by_name) > 1
    for name, res in by_name.items():
        benchmark = PREFIX + name
        insts = inst_by_name.get(name, [])
        scored = {_result_key_of(i) for i in insts}
        for r in res:
            if _result_key(r)[0] not in scored:
                out.reported.append(_reported(f, r, source))
        if not insts:
            continue
        primary = _primary([r for r in res if _result_key(r)[0] in scored])
        primary_id = _result_key(primary)[0]
        for r in res:
            if _result_key(r)[0] not in scored:
                continue
            meta = next((_meta(i) for i in insts if _result_key_of(i) == _result_key(r)[0]), {})
            if meta.get("metric_source") == FROM_TRAJECTORY:
                metric = "score"
            else:
                metric = metric_name(meta.get("scorer", _result_key(r)[0]), meta.get("score_key", _result_key(r)[1]))
            out.metric_defs.append(_metric_row(benchmark, r, metric, r is primary))
        out.items[benchmark] = _items(benchmark, insts)
        out.runs += _runs(f, name, benchmark, insts, primary_id, several, res, source)
    return out


def _items(benchmark: str, insts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items: dict[str, dict[str, Any]] = {}
    for inst in insts:
        sid = str(inst["sample_id"])
        if sid in items:
            continue
        raw, refs = inst["input"]["raw"], list(inst["input"]["reference"])
        items[sid] = {"benchmark": benchmark, "sample_id": sid, "input": raw,
                      "target": json.dumps(refs, ensure_ascii=False), "metadata_json": None,
                      "item_order": len(items), "sample_hash": sample_hash(raw, refs)}
    return list(items.values())


def _runs(f: EeeFile, name: str, benchmark: str, insts: list[dict[str, Any]], primary_id: str, several: bool,
          results: list[dict[str, Any]], source: str) -> list[MappedRun]:
    rec = f.record
    epochs: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for inst in insts:
        epochs[_int(_meta(inst).get("epoch"), 1)].append(inst)
    runs = []
    result_by_id = {_result_key(r)[0]: r for r in results}
    for epoch, rows in sorted(epochs.items()):
        run_id = f"eee-{f.uuid}" + (f"-{_slug(name)}" if several else "") + (f"-e{epoch}" if len(epochs) > 1 else "")
        mr = MappedRun(run_id, benchmark, source, f.content_sha256)
        mr.tables["runs"].append(_runs_row(rec, run_id, benchmark, epoch, results, source))
        attempts: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
        for inst in rows:
            attempts[(str(inst["sample_id"]), _int(_meta(inst).get("attempt"), 0))].append(inst)
        for (sid, attempt), group in attempts.items():
            traj = _trajectory(run_id, sid, attempt, group, primary_id)
            mr.tables["trajectories"].append(traj)
            main = next((r for r in group if _result_key_of(r) == primary_id), group[0])
            meta = _meta(main)
            turns, calls = _messages_rows(main)
            own_turns, own_calls = _loads(meta.get("turns"), None), _loads(meta.get("tool_calls"), None)
            turns = own_turns if isinstance(own_turns, list) else turns
            calls = own_calls if isinstance(own_calls, list) else calls
            key = {"run_id": run_id, "sample_id": sid, "attempt": attempt}
            if not isinstance(own_turns, list):
                traj["total_turns"] = len(turns)
            mr.tables["turns"] += [{**t, **key} for t in turns]
            mr.tables["tool_calls"] += [{"error_type": None, **c, **key} for c in calls]
            if main.get("messages") and meta.get("messages") != "built":
                mr.tables["messages"] += [{**m, **key} for m in _recorded(main["messages"])]
            if not traj["is_final"]:
                continue
            for inst in group:
                m = _meta(inst)
                if m.get("metric_source") == FROM_TRAJECTORY:
                    continue
                scorer, k = _result_key(result_by_id[_result_key_of(inst)])
                value = float(inst["evaluation"]["score"])
                mr.tables["scores"].append({
                    "run_id": run_id, "sample_id": sid, "scorer": m.get("scorer", scorer), "key": m.get("score_key", k),
                    "value_text": m.get("value_text", repr(value) if value != int(value) else str(value)),
                    "value_num": value})
        runs.append(mr)
    return runs


def _runs_row(rec: dict[str, Any], run_id: str, benchmark: str, epoch: int, results: list[dict[str, Any]],
              source: str) -> dict[str, Any]:
    src = rec["source_metadata"].get("additional_details") or {}
    model = rec["model_info"]
    details = model.get("additional_details") or {}
    gen = (results[0].get("generation_config") or {})
    limits = (gen.get("generation_args") or {}).get("eval_limits") or {}
    config = {
        "source": KIND, "file": source, "evaluation_id": rec["evaluation_id"], "epoch": epoch,
        "source_metadata": rec["source_metadata"], "eval_library": rec["eval_library"],
        "generation_config": gen, "original_run_id": src.get("run_id"),
    }
    return {
        "run_id": run_id, "model": str(model["id"]), "backend": KIND, "condition": "", "replicate": epoch - 1,
        "benchmark_sha256": "", "budget_total": _int((gen.get("additional_details") or {}).get("budget_total"), 0),
        "max_turns": _int((gen.get("additional_details") or {}).get("max_turns"), 0),
        "max_total_tokens": _int(limits.get("token_limit"), 0),
        "harness_version": str(rec["eval_library"].get("version") or "unknown"),
        "config_json": json.dumps(config, ensure_ascii=False, sort_keys=True),
        "family": details.get("family") or model.get("developer"), "tier": details.get("tier"),
        "started_at": _stamp(rec.get("evaluation_timestamp")), "finished_at": _stamp(rec.get("retrieved_timestamp")),
        "generation": None, "benchmark": benchmark, "paradigm": None,
    }


def map_files(files: list[EeeFile]) -> MappedFile:
    """Every file mapped (:func:`map_file`), merged."""
    out = MappedFile()
    for f in files:
        one = map_file(f, str(f.path))
        out.runs += one.runs
        out.metric_defs += one.metric_defs
        out.reported += one.reported
        for bench, rows in one.items.items():
            out.items.setdefault(bench, []).extend(rows)
    return out
