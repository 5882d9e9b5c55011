"""One warehouse run as rows of an Inspect Scout transcript database (docs/interchange.md#inspect-scout): one row
per (sample, final attempt). Pure: reads a :class:`~.source.RunExport`, returns plain dicts; write.py writes them
as Parquet with :data:`SCHEMA`.

The messages are Inspect ``ChatMessage`` objects as JSON, each with a stable ``id`` (``<transcript_id>-<n>``),
so the message ids Scout's results cite stay the same between scans. The transcript id is a UUID derived from
the run, sample and attempt. ``run_id``, ``sample_id``, ``attempt`` and ``benchmark`` are extra columns: Scout
reads them as the transcript's metadata and copies them into every result, which is how
``agenthop-ingest --scout-results`` finds the attempt a result belongs to; so is ``message_turns`` (JSON: per
message, ``[turn, seq]`` of the turn it belongs to and the tool call it answers, or null before the first turn),
which turns the messages a result cites into the warehouse's evidence.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from . import eee
from .source import RunExport, plain

SOURCE_TYPE = "agenthop"
#: how an attempt ended -> Scout's ``limit`` (the limit it hit) or ``error``; an answer is neither
LIMITS = {"max_turns": "turns", "budget": "budget", "token_limit": "token"}

_S, _I = pa.large_string(), pa.int64()
SCHEMA = pa.schema([
    ("transcript_id", _S), ("source_type", _S), ("source_id", _S), ("source_uri", _S), ("date", _S),
    ("task_set", _S), ("task_id", _S), ("task_repeat", _I), ("agent", _S), ("model", _S), ("score", _S),
    ("success", pa.bool_()), ("message_count", _I), ("total_time", pa.float64()), ("total_tokens", _I),
    ("error", _S), ("limit", _S), ("messages", _S),
    ("run_id", _S), ("sample_id", _S), ("attempt", _I), ("benchmark", _S), ("message_turns", _S),
])


def transcript_id(run_id: str, sample_id: str, attempt: int) -> str:
    return eee.file_uuid("scout", run_id, sample_id, str(attempt))


def chat_messages(ex: RunExport, tid: str, sample_id: str, attempt: int, text: str,
                  answer: str | None) -> list[dict[str, Any]]:
    """The attempt's conversation (recorded, else built from turns and calls) as Inspect ChatMessages."""
    names = {c["tool_call_id"]: c["name"] for c in ex.details["messages"].get((sample_id, attempt), [])
             if c.get("tool_call_id")}
    out = []
    for n, m in enumerate(eee.messages(ex, sample_id, attempt, text, answer), 1):
        msg: dict[str, Any] = {"id": f"{tid}-{n}", "role": m["role"], "content": m["content"] or ""}
        if m["role"] == "assistant":
            msg["model"] = str(ex.run["model"])
            if m.get("tool_calls"):
                msg["tool_calls"] = [{"id": c["id"], "function": c["name"], "arguments": c["arguments"],
                                      "type": "function"} for c in m["tool_calls"]]
        if m["role"] == "tool" and m.get("tool_call_id"):
            call = m["tool_call_id"][0]
            msg["tool_call_id"] = call
            if names.get(call):
                msg["function"] = names[call]
        out.append(msg)
    return out


def message_turns(ex: RunExport, sample_id: str, attempt: int, msgs: list[dict[str, Any]]) -> list[Any]:
    """Per message, ``[turn, seq]``: each assistant message opens the next turn (from 0; an answer message after the
    attempt's last recorded turn has none); a tool message belongs to the open turn and answers the call of that id
    (built messages), else the next call in order (recorded ones)."""
    calls = ex.details["tool_calls"].get((sample_id, attempt), [])
    by_id = {f"call-{c['turn']}-{c['call_index']}": c["seq"] for c in calls}
    in_order = iter(sorted(c["seq"] for c in calls))
    n_turns = len(ex.details["turns"].get((sample_id, attempt), []))
    out: list[Any] = []
    turn = -1
    for m in msgs:
        if m["role"] == "assistant":
            turn += 1
            out.append([turn, None] if turn < n_turns or not n_turns else None)  # the answer after the last turn
        elif m["role"] == "tool" and turn >= 0:
            call = m.get("tool_call_id", "")
            out.append([turn, by_id[call] if call in by_id else next(in_order, None)])
        else:
            out.append(None)
    return out


def transcripts(ex: RunExport) -> list[dict[str, Any]]:
    """A row per final attempt of the run (runs imported without trajectories have none)."""
    run = ex.run
    rows = []
    for t in ex.trajectories:
        if not t["is_final"]:
            continue
        sid, attempt = str(t["sample_id"]), int(t["attempt"])
        tid = transcript_id(ex.run_id, sid, attempt)
        text, _ = ex.inputs.get(sid, ("", []))
        msgs = chat_messages(ex, tid, sid, attempt, text, t.get("predicted_answer"))
        ended = t.get("terminated_by")
        started = plain(run.get("started_at"))
        rows.append({
            "transcript_id": tid, "source_type": SOURCE_TYPE, "source_id": ex.run_id, "source_uri": None,
            "date": str(started) if started else None, "task_set": ex.benchmark, "task_id": sid,
            "task_repeat": int(run["epoch"]) if run.get("epoch") is not None else None,
            "agent": str(run.get("backend") or "") or None, "model": str(run["model"]),
            "score": json.dumps(float(t["score"])) if t.get("score") is not None else None,
            "success": bool(t["is_correct"]) if t.get("is_correct") is not None else None,
            "message_count": len(msgs), "total_time": t.get("wall_time_s"),
            "total_tokens": int(t["total_tokens"]) if t.get("total_tokens") is not None else None,
            "error": "error" if ended == "error" else None, "limit": LIMITS.get(str(ended)),
            "messages": json.dumps(msgs, ensure_ascii=False), "run_id": ex.run_id, "sample_id": sid,
            "attempt": attempt, "benchmark": ex.benchmark,
            "message_turns": json.dumps(message_turns(ex, sid, attempt, msgs)),
        })
    return rows
