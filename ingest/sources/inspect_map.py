"""Inspect AI samples -> rows of the warehouse's run tables (pure functions; docs/inspect.md).

One run per (log, epoch). The input is what :mod:`inspect_read` hands out (plain JSON values, events
expanded, attachments resolved), so the built-in reader and Inspect's API give the same rows.

What maps to what:

- run: ``run_id`` from the log's eval id and the epoch, ``benchmark`` ``inspect:<task>``, backend
  ``inspect-log``, ``model`` the log's model, ``replicate`` = epoch - 1; the task's arguments, the
  eval config and any import notes in ``config_json``.
- trajectory (one per sample and epoch): the answer (the primary scorer's ``answer``, else the
  output's completion), ``score`` (see :func:`primary_score`), terminated_by from ``sample.limit``
  or ``sample.error``, tokens from ``sample.model_usage`` summed over its models, time, errors,
  retries.
- turns: the model calls of the solver (model events outside scorer and tool spans), their usage;
  tool calls: the calls those replies requested, with the outcome Inspect recorded for each
  (``ok``, ``invalid_args`` for a parsing error, ``tool_error`` with Inspect's type otherwise,
  ``not_executed`` when no result was recorded); messages: ``sample.messages``.
- scores: every scorer's value, one row per key of a dict value.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agenthop.ingest.reference_json import _parse_time as parse_time
from agenthop.schemas.trajectory import NO_CONDITION

from .inspect_check import SAMPLE_FIELDS

BACKEND = "inspect-log"
BENCHMARK_PREFIX = "inspect:"

#: sample.limit.type -> terminated_by (anything else: other_limit)
LIMIT_TERMINATIONS: dict[str, str] = {
    "token": "token_limit",
    "turn": "max_turns",
    "message": "message_limit",
    "context": "context_limit",
    "time": "time_limit",
    "working": "time_limit",
    "cost": "cost_limit",
}

#: Inspect's score letters (CORRECT, PARTIAL, INCORRECT, NOANSWER) and the numbers its metrics use.
SCORE_LETTERS: dict[str, float] = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
_TRUE_WORDS = ("yes", "true")
_FALSE_WORDS = ("no", "false")

_SKIPPED_SPANS = ("scorer", "scorers", "tool")

class ScoreChoiceError(ValueError):
    """``--score`` names a scorer or key the log does not have."""


@dataclass
class RunRows:
    """The rows of one (log, epoch) run, as lists of dicts per table."""

    run_id: str
    epoch: int
    runs: dict[str, Any]
    trajectories: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    scores: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# small value helpers


def _int(v: Any) -> int:
    if type(v) is int:  # the common case first (a sample reads dozens of counts)
        return v
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float) and math.isfinite(v):
        return int(v)
    return 0


def _float(v: Any) -> float:
    if type(v) is float:
        return v if math.isfinite(v) else 0.0
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
        return float(v)
    return 0.0


def text_of(content: Any) -> str:
    """A message's or tool result's content as text (content blocks: their text parts joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                for key in ("text", "reasoning", "refusal"):
                    if isinstance(block.get(key), str):
                        parts.append(block[key])
                        break
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def _first_line(v: Any, limit: int = 200) -> str:
    """The first line of a message, at most ``limit`` characters (for import notes)."""
    text = v if isinstance(v, str) else _json(v)
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _json(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, sort_keys=True, allow_nan=True, default=str)


#: an ISO timestamp (Inspect's "2026-12-02T15:04:54+00:00") -> an aware datetime, None if not one
_time = parse_time


# --------------------------------------------------------------------------------------------
# identity and items


def task_name(header: dict[str, Any]) -> str:
    task = str(header["eval"].get("task") or "task")
    return task.split("/")[-1] if task.startswith("agenthop/") else task


def benchmark_of(header: dict[str, Any]) -> str:
    if agenthop_settings(header) is not None:
        return AGENTHOP
    return BENCHMARK_PREFIX + task_name(header)


AGENTHOP = "agenthop"


def agenthop_settings(header: dict[str, Any]) -> dict[str, Any] | None:
    """The run settings the project's own AgentHop task records, when the log comes from it."""
    meta = header["eval"].get("metadata")
    settings = meta.get(AGENTHOP) if isinstance(meta, dict) else None
    return settings if task_name(header) == AGENTHOP and isinstance(settings, dict) else None


def run_id_of(eval_id: str, epoch: int) -> str:
    """Stable per log and epoch: loading the same log again replaces nothing."""
    return f"inspect-{eval_id}-e{epoch}"


def sample_id_of(sample: dict[str, Any]) -> str:
    sid = sample.get("id")
    if sid is None:
        raise ValueError("a sample has no id")
    return str(sid)


def item_of(sample: dict[str, Any]) -> dict[str, Any]:
    """The benchmark item a sample carries: id, input, target, metadata (as JSON text)."""
    inp = sample.get("input")
    target = sample.get("target")
    return {
        "sample_id": sample_id_of(sample),
        "input": inp if isinstance(inp, str) else _json(inp),
        "target": target if isinstance(target, str) else _json(target),
        "metadata_json": _json(sample.get("metadata") or {}),
    }


def items_sha256(task: str, items: Iterable[dict[str, Any]]) -> str:
    """The benchmark's sha256: the task name and its items (in sample-id order)."""
    h = hashlib.sha256(task.encode() + b"\0")
    for item in sorted(items, key=lambda i: i["sample_id"]):
        h.update(_json([item["sample_id"], item["input"], item["target"], item["metadata_json"]]).encode())
        h.update(b"\n")
    return h.hexdigest()


# --------------------------------------------------------------------------------------------
# scores


def score_number(value: Any) -> float | None:
    """A scalar score value as Inspect's metrics read it (letters C/P/I/N, yes/no, numbers).

    Text Inspect cannot convert, and NaN or infinite numbers, give None (kept as text).
    """
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, str):
        if value in SCORE_LETTERS:
            return SCORE_LETTERS[value]
        low = value.strip().lower()
        if low in _TRUE_WORDS:
            return 1.0
        if low in _FALSE_WORDS:
            return 0.0
        try:
            f = float(low)
        except ValueError:
            return None
        return f if math.isfinite(f) else None
    return None


def _value_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # nan, inf, -inf
    return _json(value)


#: ``raw.scores.key`` of a scorer with a single value
SINGLE_KEY = "value"


def score_rows(scores: dict[str, Any]) -> list[tuple[str, str | None, Any]]:
    """(scorer, key, value) for every scorer's value; a dict value gives one row per key, a single
    value has key None here (``value`` in the table)."""
    out: list[tuple[str, str | None, Any]] = []
    for scorer, score in scores.items():
        value = score.get("value") if isinstance(score, dict) else score
        if isinstance(value, dict):
            out.extend((scorer, str(k), v) for k, v in value.items())
        else:
            out.append((scorer, None, value))
    return out


def parse_score_choice(choice: str | None) -> tuple[str, str | None] | None:
    """``SCORER`` or ``SCORER.KEY`` (``--score``) -> (scorer, key)."""
    if not choice:
        return None
    scorer, _, key = choice.partition(".")
    return scorer, key or None


def primary_score(
    rows: list[tuple[str, str | None, Any]], choice: tuple[str, str | None] | None
) -> tuple[str, str | None] | None:
    """Which (scorer, key) gives ``score``: the first scorer (its first key for a dict), or ``choice``."""
    if not rows:
        return None
    if choice is None:
        return rows[0][0], rows[0][1]
    scorer, key = choice
    for s, k, _ in rows:
        if s == scorer and (key is None or k == key):
            return s, k
    known = ", ".join(sorted({s if k is None else f"{s}.{k}" for s, k, _ in rows}))
    raise ScoreChoiceError(f"--score {scorer}{'.' + key if key else ''}: the log has no such score (it has {known})")


# --------------------------------------------------------------------------------------------
# termination, usage, turns


def terminated_by(sample: dict[str, Any]) -> str:
    limit = sample.get("limit")
    if isinstance(limit, dict) and limit.get("type"):
        return LIMIT_TERMINATIONS.get(str(limit["type"]), "other_limit")
    if sample.get("error"):
        return "error"
    return "answer"


def cache_reads_in_input(usage: dict[str, Any]) -> bool:
    """True when a ModelUsage's ``input_tokens`` still counts its cache reads.

    Inspect's ModelUsage now leaves cache reads and writes out of ``input_tokens`` (its total is
    input + output + cache read + cache write, as in a published Anthropic log), but logs written
    through OpenAI by older versions of Inspect counted the cached tokens inside ``input_tokens``
    (a published gpt-4o-mini log: input 15235 with 9088 cache reads, total 15516 = input +
    output). Such a usage is recognised by its total.
    """
    return _counts_cache_reads(usage, _int(usage.get("input_tokens")), _int(usage.get("output_tokens")),
                               _int(usage.get("input_tokens_cache_read")), _int(usage.get("input_tokens_cache_write")))


def _counts_cache_reads(usage: dict[str, Any], inp: int, out: int, read: int, write: int) -> bool:
    """:func:`cache_reads_in_input` of a usage whose counts are read already."""
    return 0 < read <= inp and "total_tokens" in usage and _int(usage.get("total_tokens")) == inp + out + write


def usage_tokens(usage: Any) -> dict[str, int]:
    """Inspect's ModelUsage -> the warehouse's token meanings.

    prompt = the input tokens not read from the cache (Inspect's ``input_tokens``, minus the cache
    reads in the older logs that counted them there, :func:`cache_reads_in_input`); total = prompt
    + completion + cache write.
    """
    u = usage if isinstance(usage, dict) else {}
    prompt = _int(u.get("input_tokens"))
    completion = _int(u.get("output_tokens"))
    read = _int(u.get("input_tokens_cache_read"))
    write = _int(u.get("input_tokens_cache_write"))
    if _counts_cache_reads(u, prompt, completion, read, write):
        prompt -= read
    return {"prompt": prompt, "completion": completion, "cache_read": read, "cache_write": write,
            "total": prompt + completion + write}


def solver_model_events(events: list[Any]) -> list[dict[str, Any]]:
    """The sample's own model calls: model events outside scorer and tool spans, in order."""
    spans: dict[str, tuple[str | None, str | None]] = {}
    for ev in events:
        if isinstance(ev, dict) and ev.get("event") == "span_begin" and ev.get("id"):
            spans[str(ev["id"])] = (ev.get("parent_id"), ev.get("type"))

    def skipped(span_id: Any) -> bool:
        seen = set()
        while span_id and span_id not in seen:
            seen.add(span_id)
            parent, kind = spans.get(str(span_id), (None, None))
            if kind in _SKIPPED_SPANS:
                return True
            span_id = parent
        return False

    return [
        ev for ev in events
        if isinstance(ev, dict) and ev.get("event") == "model" and not skipped(ev.get("span_id"))
    ]


#: event type -> the fields of it the mapping reads (:func:`solver_model_events`, :func:`map_sample`,
#: :func:`call_outcomes`); events of other types are not read
READ_EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "span_begin": ("event", "id", "parent_id", "type"),
    "model": ("event", "span_id", "output", "working_start"),
    "tool": ("event", "id", "error", "result"),
}


def mapping_view(sample: dict[str, Any]) -> dict[str, Any]:
    """``sample`` with its events cut to what the mapping reads of them (:data:`READ_EVENT_FIELDS`):
    mapping the view gives the same rows as mapping the sample."""
    events = sample.get("events")
    if not isinstance(events, list):
        return sample
    kept = []
    for ev in events:
        kind = ev.get("event") if isinstance(ev, dict) else None
        fields = READ_EVENT_FIELDS.get(kind) if isinstance(kind, str) else None
        if fields is not None:
            kept.append({k: ev[k] for k in fields if k in ev})
    return {**sample, "events": kept}


def _reply(event: dict[str, Any]) -> dict[str, Any]:
    output = event.get("output") if isinstance(event.get("output"), dict) else {}
    choices = output.get("choices") or []
    first = choices[0] if choices and isinstance(choices[0], dict) else {}
    msg = first.get("message")
    return msg if isinstance(msg, dict) else {}


@dataclass
class _Outcome:
    status: str
    error_type: str | None
    output_chars: int


def call_outcomes(sample: dict[str, Any]) -> dict[str, _Outcome]:
    """Tool call id -> what Inspect recorded for it (tool events first, then tool messages)."""
    out: dict[str, _Outcome] = {}

    def add(call_id: Any, error: Any, result: Any) -> None:
        if not call_id or str(call_id) in out:
            return
        etype = error.get("type") if isinstance(error, dict) else None
        if error and etype == "parsing":
            status = "invalid_args"
        elif error:
            status = "tool_error"
        else:
            status = "ok"
        out[str(call_id)] = _Outcome(status, str(etype) if error and etype else ("unknown" if error else None),
                                     len(text_of(result)))

    for ev in sample.get("events") or []:
        if isinstance(ev, dict) and ev.get("event") == "tool":
            add(ev.get("id"), ev.get("error"), ev.get("result"))
    for m in sample.get("messages") or []:
        if isinstance(m, dict) and m.get("role") == "tool":
            add(m.get("tool_call_id"), m.get("error"), m.get("content"))
    return out


# --------------------------------------------------------------------------------------------
# one sample


def _turns_from_messages(sample: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any] | None, float]]:
    """(reply, usage, offset) per assistant message when the sample has no model events."""
    return [(m, None, 0.0) for m in sample.get("messages") or [] if isinstance(m, dict) and m.get("role") == "assistant"]


def map_sample(
    run: RunRows, sample: dict[str, Any], choice: tuple[str, str | None] | None
) -> None:
    """Append one sample's rows to ``run`` (notes for anything loaded with a reason)."""
    sid = sample_id_of(sample)
    where = f"sample {sid} epoch {run.epoch}"
    for key, kind in SAMPLE_FIELDS.items():
        if sample.get(key) is not None and not isinstance(sample[key], kind):
            raise ValueError(f"field {key!r} must be a {'list' if kind is list else 'JSON object'}")
    base = {"run_id": run.run_id, "sample_id": sid, "attempt": 0}

    events = solver_model_events(sample.get("events") or [])
    if events:
        replies = [(_reply(ev), ev.get("output", {}).get("usage") if isinstance(ev.get("output"), dict) else None,
                    _float(ev.get("working_start"))) for ev in events]
    else:
        replies = _turns_from_messages(sample)
    outcomes = call_outcomes(sample)
    first_turn = len(run.turns)
    seq = 0
    cumulative = 0
    n_errors = 0
    for turn, (reply, usage, offset) in enumerate(replies):
        tok = usage_tokens(usage)
        cumulative += tok["total"]
        calls = [c for c in reply.get("tool_calls") or [] if isinstance(c, dict)]
        run.turns.append({
            **base, "turn": turn, "role": "assistant", "n_tool_calls": len(calls),
            "prompt_tokens": tok["prompt"], "completion_tokens": tok["completion"],
            "cache_read_tokens": tok["cache_read"], "cache_creation_tokens": tok["cache_write"],
            "cumulative_tokens": cumulative, "budget_before": 0, "budget_after": 0,
            "content_chars": len(text_of(reply.get("content"))), "t_offset_s": offset, "error_text": None,
        })
        for call_index, call in enumerate(calls):
            outcome = outcomes.get(str(call.get("id")), _Outcome("not_executed", None, 0))
            n_errors += outcome.status in ("invalid_args", "tool_error")
            args = call.get("arguments")
            run.tool_calls.append({
                **base, "turn": turn, "call_index": call_index, "seq": seq,
                "tool": str(call.get("function") or ""), "args_json": _json(args if args is not None else {}),
                "paper_id": None, "section_query": None, "resolved_header": None,
                "resolved_section_index": None, "search_query": None, "answer": None,
                "cost": 0, "status": outcome.status, "output_chars": outcome.output_chars,
                "budget_after": 0, "error_type": outcome.error_type,
            })
            seq += 1

    messages = [m for m in sample.get("messages") or [] if isinstance(m, dict)]
    if not messages:
        run.notes.append(f"{where}: the sample has no messages (no transcript loaded)")
    for idx, m in enumerate(messages):
        run.messages.append({
            **base, "idx": idx, "role": str(m.get("role") or ""),
            "name": m.get("function") if m.get("role") == "tool" else None,
            "tool_call_id": m.get("tool_call_id"), "content": text_of(m.get("content")),
        })

    scores = sample.get("scores") if isinstance(sample.get("scores"), dict) else {}
    rows = score_rows(scores)
    primary = primary_score(rows, choice) if rows else None
    score: float | None = None
    for scorer, key, value in rows:
        num = score_number(value)
        if value is not None and num is None and not isinstance(value, str):
            run.notes.append(f"{where}: score {scorer}{'.' + key if key else ''} is {_value_text(value)}, kept as text")
        run.scores.append({"run_id": run.run_id, "sample_id": sid, "scorer": scorer, "key": key or SINGLE_KEY,
                           "value_text": _value_text(value), "value_num": num})
        if primary == (scorer, key):
            score = num
    if not rows:
        run.notes.append(f"{where}: the sample has no score")

    first = scores.get(primary[0]) if primary else None
    answer = first.get("answer") if isinstance(first, dict) else None
    if answer is None:
        output = sample.get("output") if isinstance(sample.get("output"), dict) else {}
        answer = output.get("completion")
    usage = usage_tokens({})
    model_usage = sample.get("model_usage") or {}
    for u in model_usage.values():
        for k, v in usage_tokens(u).items():
            usage[k] += v
    if not model_usage:  # no per-sample usage (older or trimmed logs): the sum of the solver's calls
        for turn in run.turns[first_turn:]:
            usage["prompt"] += turn["prompt_tokens"]
            usage["completion"] += turn["completion_tokens"]
            usage["cache_read"] += turn["cache_read_tokens"]
            usage["cache_write"] += turn["cache_creation_tokens"]
        usage["total"] = usage["prompt"] + usage["completion"] + usage["cache_write"]
        run.notes.append(
            f"{where}: the sample has no model_usage; its tokens are the sum of its model calls' usage"
            if any(u is not None for _, u, _ in replies) else
            f"{where}: the sample records no token usage (no model_usage, no model calls); its tokens are 0"
        )
    error = sample.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        run.notes.append(f"{where}: ended with an error: {_first_line(message)}")
    retries = sample.get("error_retries") or []
    ended = terminated_by(sample)
    run.trajectories.append({
        **base, "is_final": True,
        "predicted_answer": answer if isinstance(answer, str) or answer is None else _json(answer),
        "predicted_index": -1, "is_correct": score is not None and score >= 1.0,
        "terminated_by": ended, "total_turns": len(replies), "budget_used": 0,
        "total_prompt_tokens": usage["prompt"], "total_completion_tokens": usage["completion"],
        "cache_read_tokens": usage["cache_read"], "cache_creation_tokens": usage["cache_write"],
        "total_tokens": usage["total"], "tool_errors": n_errors,
        "api_error_count": len(retries) + (1 if sample.get("error") else 0),
        "transient_retry_count": len(retries), "wall_time_s": _float(sample.get("total_time")),
        "reasoning": None, "wait_s": None, "repaired_chars": None, "score": score,
    })


def has_agenthop_record(sample: dict[str, Any]) -> bool:
    store = sample.get("store")
    record = store.get(AGENTHOP) if isinstance(store, dict) else None
    return isinstance(record, list) and bool(record)


def map_agenthop_sample(run: RunRows, sample: dict[str, Any]) -> None:
    """A sample of the project's AgentHop task: the attempts its loop recorded in the store.

    The loop recorded the rows the harness writes (statuses, costs, budgets, terminations), so
    they are taken as they are; the transcript (the final attempt's) comes from ``sample.messages``.
    """
    sid = sample_id_of(sample)
    store = sample.get("store") if isinstance(sample.get("store"), dict) else {}
    record = store.get(AGENTHOP)
    if not isinstance(record, list) or not record:
        raise ValueError(f"the sample store has no '{AGENTHOP}' record of its attempts")
    for attempt in record:
        traj = dict(attempt["trajectory"])
        traj["sample_id"] = sid
        run.trajectories.append({"run_id": run.run_id, **traj, "score": 1.0 if traj.get("is_correct") else 0.0})
        run.turns.extend({"run_id": run.run_id, **t, "sample_id": sid} for t in attempt.get("turns") or [])
        run.tool_calls.extend({"run_id": run.run_id, **c, "sample_id": sid, "error_type": None}
                              for c in attempt.get("tool_calls") or [])
    final = int(record[-1]["trajectory"].get("attempt") or 0)
    for idx, m in enumerate(x for x in sample.get("messages") or [] if isinstance(x, dict)):
        run.messages.append({
            "run_id": run.run_id, "sample_id": sid, "attempt": final, "idx": idx, "role": str(m.get("role") or ""),
            "name": m.get("function") if m.get("role") == "tool" else None,
            "tool_call_id": m.get("tool_call_id"), "content": text_of(m.get("content")),
        })
    scores = sample.get("scores") if isinstance(sample.get("scores"), dict) else {}
    for scorer, key, value in score_rows(scores):
        run.scores.append({"run_id": run.run_id, "sample_id": sid, "scorer": scorer, "key": key or SINGLE_KEY,
                           "value_text": _value_text(value), "value_num": score_number(value)})


# --------------------------------------------------------------------------------------------
# one log


def _positive(v: Any) -> float | None:
    """A limit as the log records it: a positive finite number, else None (no limit)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        return None
    return float(v)


def provenance(ev: dict[str, Any], packages: dict[str, Any]) -> dict[str, Any]:
    """The run's provenance columns from a log's ``eval``: its package versions, task version, task
    arguments and the limits of its eval config that are no turn or token cap (null when not recorded)."""
    cfg = ev.get("config") if isinstance(ev.get("config"), dict) else {}
    args = ev.get("task_args")
    version = ev.get("task_version")
    message_limit = _positive(cfg.get("message_limit"))
    return {
        "source_packages_json": _json({str(k): str(v) for k, v in packages.items()}) if packages else None,
        "task_version": None if version is None or isinstance(version, (dict, list)) else str(version),
        "task_args_json": _json(args) if isinstance(args, dict) and args else None,
        "message_limit": int(message_limit) if message_limit is not None and message_limit < 2**31 else None,
        "time_limit_s": _positive(cfg.get("time_limit")),
        "working_limit_s": _positive(cfg.get("working_limit")),
    }


def runs_row(header: dict[str, Any], source: str, epoch: int, bench_sha: str, complete: bool) -> dict[str, Any]:
    ev = header["eval"]
    cfg = ev.get("config") if isinstance(ev.get("config"), dict) else {}
    stats = header.get("stats") if isinstance(header.get("stats"), dict) else {}
    packages = ev.get("packages") if isinstance(ev.get("packages"), dict) else {}
    config = {
        "source": "inspect",
        "task": ev.get("task"),
        "task_args": ev.get("task_args") or {},
        "eval_id": ev.get("eval_id"),
        "inspect_run_id": ev.get("run_id"),
        "task_id": ev.get("task_id"),
        "epoch": epoch,
        "log_status": header.get("status") if complete else "started",
        "dataset": {k: v for k, v in (ev.get("dataset") or {}).items() if k != "sample_ids"},
        "config": cfg,
        "scorers": [s.get("name") for s in ev.get("scorers") or [] if isinstance(s, dict)],
    }
    settings = agenthop_settings(header)
    row = {
        "run_id": run_id_of(str(ev.get("eval_id")), epoch),
        "model": str(ev.get("model") or "unknown"),
        "backend": BACKEND,
        "condition": NO_CONDITION,  # an Inspect task has no AgentHop condition
        "replicate": epoch - 1,
        "benchmark_sha256": bench_sha,
        "budget_total": 0,
        "max_turns": _int(cfg.get("turn_limit")),  # a message limit is no turn cap: message_limit below
        "max_total_tokens": _int(cfg.get("token_limit")),
        "harness_version": f"inspect_ai {packages.get('inspect_ai', 'unknown')}",
        "config_json": config,  # serialised when the notes are known
        "family": None,
        "tier": None,
        "started_at": _time(stats.get("started_at")) or _time(ev.get("created")),
        "finished_at": _time(stats.get("completed_at")) if complete else None,
        "generation": None,
        "benchmark": benchmark_of(header),
        **provenance(ev, packages),
    }
    if settings is not None:  # the project's AgentHop task: its own caps and condition
        row.update(
            condition=str(settings.get("condition") or "full"),
            budget_total=_int(settings.get("budget")),
            max_turns=_int(settings.get("max_turns")),
            max_total_tokens=_int(settings.get("max_total_tokens")),
        )
    return row


@dataclass
class MappedLog:
    benchmark: str
    benchmark_sha256: str
    items: list[dict[str, Any]]
    runs: list[RunRows]


#: samples mapped between two calls of map_log's ``on_batch``
BATCH = 256


def map_log(
    header: dict[str, Any],
    samples: Iterable[dict[str, Any]],
    source: str,
    complete: bool = True,
    score: str | None = None,
    on_batch: Callable[[RunRows], None] | None = None,
    batch: int = BATCH,
) -> MappedLog:
    """Every run of one log (one per epoch present), its items and the benchmark's sha256.

    With ``on_batch``, it is called with each run after every ``batch`` samples (and once more at
    the end, before the runs row is made): it takes the per-sample rows mapped so far out of the
    run (emptying its lists), so a log's rows need not all be held as Python objects at once.

    Raises ValueError (with the sample named) for a sample that cannot be mapped and
    :class:`ScoreChoiceError` when ``score`` names a score the log lacks.
    """
    choice = parse_score_choice(score)
    eval_id = header["eval"].get("eval_id")
    if not eval_id:
        raise ValueError("the log's eval spec has no eval_id")
    settings = agenthop_settings(header)
    by_epoch: dict[int, RunRows] = {}
    items: dict[str, dict[str, Any]] = {}
    mapped = 0
    for sample in samples:
        epoch = _int(sample.get("epoch")) or 1
        run = by_epoch.get(epoch)
        if run is None:
            run = by_epoch[epoch] = RunRows(run_id_of(str(eval_id), epoch), epoch, {})
        try:
            item = item_of(sample)
            if settings is not None and has_agenthop_record(sample):
                map_agenthop_sample(run, sample)
            else:
                if settings is not None:
                    run.notes.append(
                        f"sample {sample.get('id')} epoch {epoch}: stopped by Inspect before the AgentHop loop "
                        f"recorded its attempts (an Inspect limit or error); mapped from its transcript, "
                        f"without tool costs or budgets"
                    )
                map_sample(run, sample, choice)
        except ScoreChoiceError:
            raise
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            raise ValueError(f"sample {sample.get('id')!r} epoch {epoch}: cannot be read ({exc})") from None
        items.setdefault(item["sample_id"], item)
        mapped += 1
        if on_batch is not None and mapped % batch == 0:
            for run in by_epoch.values():
                on_batch(run)
    if on_batch is not None:
        for run in by_epoch.values():
            on_batch(run)
    task = task_name(header)
    if settings is not None:  # AgentHop's items are its release, loaded with --benchmark
        sha, items = str(settings.get("benchmark_sha256") or ""), {}
    else:
        sha = items_sha256(task, items.values())
    runs = []
    for epoch in sorted(by_epoch):
        run = by_epoch[epoch]
        row = runs_row(header, source, epoch, sha, complete)
        row["config_json"]["import_notes"] = run.notes
        row["config_json"] = _json(row["config_json"])
        run.runs = row
        runs.append(run)
    return MappedLog(benchmark_of(header), sha, list(items.values()), runs)
