"""Read SciExplore responses files (docs/sciexplore.md#responses-files) into rows of the raw tables.

One line per (system run, task). A run is (model, paradigm, replicate) of the loaded release; its
run_id is derived like a harness run's. Every problem names the file, the line and the field; a
malformed answer does not refuse the file (it is recorded and judged as no answer), a malformed
line does.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenthop.harness.backends.calling import MAX_TOKEN_COUNT
from agenthop.harness.benchmarks.sciexplore import PARADIGMS, SEARCH_TOOLS, STATUSES
from agenthop.harness.benchmarks.sciexplore.release import ReleaseError, Task, Where, read_jsonl, slot_name
from agenthop.harness.benchmarks.sciexplore.tables import ParseFailure, format_ok, parse_table
from agenthop.harness.run_identity import model_slug

from ..conform import IngestError

BACKEND = "responses-file"
#: the largest replicate number (the warehouse stores it as a 32-bit integer)
MAX_REPLICATE = 2**31 - 1
#: the largest token count or result size a line may give (the harness's bound on a usage count)
MAX_COUNT = MAX_TOKEN_COUNT


def responses_run_id(model: str, paradigm: str, replicate: int, benchmark_sha256: str) -> str:
    """``<model-slug>__<paradigm>__r<replicate>__<hash8>``, hash8 over what identifies the run."""
    payload = {"model": model, "backend": BACKEND, "paradigm": paradigm, "replicate": replicate,
               "benchmark_sha256": benchmark_sha256}
    canon = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"{model_slug(model)}__{paradigm}__r{replicate}__{hashlib.sha256(canon.encode()).hexdigest()[:8]}"


@dataclass(slots=True)
class Response:
    run_id: str
    task: Task
    status: str
    #: the answer as given (string, object or None)
    answer: Any
    row: dict[str, Any]
    trace: list[dict[str, Any]]
    source: str


@dataclass(slots=True)
class ResponsesRead:
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    responses: list[Response] = field(default_factory=list)


def _run_fields(w: Where, obj: dict) -> tuple[str, str, int]:
    model = w.text(obj, "model")
    paradigm = w.text(obj, "paradigm")
    if paradigm not in PARADIGMS:
        raise w.fail("paradigm", f"must be one of {', '.join(PARADIGMS)}, got {paradigm!r}")
    replicate = w.integer(obj, "replicate", 0, MAX_REPLICATE)
    return model, paradigm, replicate


def _t3_answer(w: Where, task: Task, answer: Any) -> tuple[dict | None, str | None]:
    if answer is None or answer == "":
        return None, "empty answer"
    if not isinstance(answer, dict):
        return None, "a T3 answer is an object slot -> list of references"
    slots = {g.slot for g in task.groups}
    out: dict[str, list] = {}
    for raw_slot, refs in answer.items():
        slot = slot_name(raw_slot)
        if slot not in slots:
            raise w.fail(f"answer.{raw_slot}", f"task {task.id!r} has no slot {slot!r} "
                         f"(its slots: {', '.join(sorted(slots))})")
        if not isinstance(refs, list):
            raise w.fail(f"answer.{raw_slot}", "expected a list of reference objects")
        if slot in out:
            raise w.fail(f"answer.{raw_slot}", f"slot {slot} is given twice")
        out[slot] = refs
    return out, None


def _trace(w: Where, obj: dict) -> list[dict[str, Any]]:
    raw = w.get(obj, "trace", list, nullable=True) or []
    out = []
    for i, step in enumerate(raw):
        p = f"trace[{i}]."
        if not isinstance(step, dict):
            raise w.fail(f"trace[{i}]", "expected an object {tool, query or target, result_chars}")
        tool = w.text(step, "tool", prefix=p)
        rc = w.integer(step, "result_chars", 0, MAX_COUNT, nullable=True, prefix=p)
        out.append({"seq": i, "tool": tool, "query": w.get(step, "query", str, nullable=True, prefix=p),
                    "target": w.get(step, "target", str, nullable=True, prefix=p), "result_chars": rc,
                    "is_search": tool in SEARCH_TOOLS})
    return out


def read_responses(paths: list[Path], tasks: dict[str, Task], benchmark_sha256: str) -> ResponsesRead:
    """Parse and validate every line of every file (nothing is written)."""
    out = ResponsesRead()
    first: dict[tuple[str, str], str] = {}
    for path in paths:
        try:
            for no, obj in read_jsonl(path):
                w = Where(path, no)
                model, paradigm, replicate = _run_fields(w, obj)
                run_id = responses_run_id(model, paradigm, replicate, benchmark_sha256)
                simulated = bool(w.get(obj, "simulated", bool, nullable=True))
                run = out.runs.setdefault(run_id, {"run_id": run_id, "model": model, "paradigm": paradigm,
                                                   "replicate": replicate, "backend": BACKEND,
                                                   "benchmark_sha256": benchmark_sha256, "simulated": simulated})
                if run["simulated"] != simulated:
                    raise w.fail("simulated", f"run ({model}, {paradigm}, replicate {replicate}) mixes simulated "
                                 "and real lines")
                tid = w.text(obj, "task_id")
                task = tasks.get(tid)
                if task is None:
                    raise w.fail("task_id", f"unknown task id {tid!r} (not in the loaded SciExplore release)")
                where = f"{path}:{no}"
                key = (run_id, tid)
                if key in first:
                    raise w.fail("task_id", f"task {tid!r} of run ({model}, {paradigm}, replicate {replicate}) "
                                 f"is already given at {first[key]}")
                first[key] = where
                status = w.text(obj, "status")
                if status not in STATUSES:
                    raise w.fail("status", f"must be one of {', '.join(STATUSES)}, got {status!r}")
                out.responses.append(_response(w, obj, task, run_id, status, where))
        except ReleaseError as exc:
            raise IngestError(str(exc)) from None
    return out


def _response(w: Where, obj: dict, task: Task, run_id: str, status: str, where: str) -> Response:
    answer = obj.get("answer")
    answer_json: Any = None
    parse_error: str | None = None
    fmt: bool | None = None
    judged: Any = answer
    if task.type in ("T1", "T2"):
        text = answer if isinstance(answer, str) or answer is None else json.dumps(answer, ensure_ascii=False)
        judged = text
    elif task.type == "T3":
        answer_json, parse_error = _t3_answer(w, task, answer)
        judged = answer_json
        text = answer if isinstance(answer, str) or answer is None else json.dumps(answer, ensure_ascii=False)
    else:
        table = parse_table(answer)
        fmt = status == "answered" and format_ok(table, task.columns)
        if isinstance(table, ParseFailure):
            parse_error = table.reason
        else:
            answer_json = table.to_json()
        judged = table
        text = answer if isinstance(answer, str) or answer is None else json.dumps(answer, ensure_ascii=False)
    pt = w.integer(obj, "prompt_tokens", 0, MAX_COUNT, nullable=True)
    ct = w.integer(obj, "completion_tokens", 0, MAX_COUNT, nullable=True)
    wall = w.get(obj, "wall_time_s", (int, float), nullable=True)
    if wall is not None and not 0 <= wall < math.inf:  # NaN fails both comparisons
        raise w.fail("wall_time_s", f"must be a finite number >= 0, got {wall}")
    trace = _trace(w, obj)
    canon = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    row = {
        "run_id": run_id, "task_id": task.id, "status": status, "answer_text": text,
        "answer_json": None if answer_json is None else json.dumps(answer_json, ensure_ascii=False),
        "parse_error": parse_error, "format_ok": fmt, "prompt_tokens": pt, "completion_tokens": ct,
        "wall_time_s": None if wall is None else float(wall), "source": where,
        "line_sha256": hashlib.sha256(canon.encode()).hexdigest(),
    }
    return Response(run_id=run_id, task=task, status=status, answer=judged, row=row, trace=trace, source=where)
