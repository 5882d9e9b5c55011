"""Reference-harness JSON -> run tables in bulk: parse each file (orjson), convert every task's
records to Arrow in one call, and derive the rows with Arrow/numpy column operations.

This is the fast path of a worker task (ingest/reference_json.py runs tasks on every core). It only
takes input whose every field has its plain type (strings as strings, integers as integers, ...):
anything else raises ``Unsupported`` and the task is parsed by ingest/reference_parse.py, the
record-by-record reading that defines the rules and words every error. Both give the same rows.

Python touches each file (its sample checks) and each tool call's arguments (their JSON text,
formatted as ``json.dumps`` does); everything else is column arithmetic.
"""

from __future__ import annotations

import gc
import os
from collections import defaultdict
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from .reference_parse import (
    ALIAS_COLUMN,
    INT32_MAX,
    MERGED_COUNTS,
    TOKEN_FIELDS,
    ParseError,
    Sample,
    _dumps,
    _merged_totals,
    _message_row,
    _Rec,
    _scalar_text,
    alias_index,
    parse_samples,
    task_schema,
)


class Unsupported(Exception):
    """The task holds a value the bulk path does not take; the record-by-record path decides."""


#: token counts are 64-bit, but sums of them must not wrap: larger values go the careful way
_TOKEN_LIMIT = 2**53

_S, _I, _F, _B = pa.string(), pa.int64(), pa.float64(), pa.bool_()

# Integer fields are read twice: as int64 (which refuses booleans and strings but truncates 1.5)
# and as float64 (which shows 1.5); float fields as float64 and int64 (which refuses booleans).
_INT_TOP = ("predicted_index", "budget_total", "budget_used", "retry_count", *TOKEN_FIELDS, *MERGED_COUNTS)
_INT_TURN = ("prompt_tokens", "completion_tokens", "budget_before", "budget_after")


def _types(ints: pa.DataType, floats: pa.DataType, strings: bool) -> pa.StructType:
    """The record type to convert to: numbers as ``ints``/``floats``, text fields only if ``strings``."""
    text = (lambda *names: [(n, _S) for n in names]) if strings else (lambda *names: [])
    result = pa.struct([*text("output"), ("cost", ints)])
    call = pa.struct(text("name") or [("_", _B)])  # a struct needs a field
    turn = pa.struct([
        *text("role", "content"), ("tool_calls", pa.list_(call)), ("tool_results", pa.list_(result)),
        *((k, ints) for k in _INT_TURN), ("timestamp", floats),
    ])
    top = [*((k, ints) for k in _INT_TOP), ("wall_time_s", floats), ("turns", pa.list_(turn)),
           *text("sample_id", "predicted_answer", "reasoning", "terminated_by")]
    if strings:
        top.append(("is_correct", _B))
    return pa.struct(top)


_RECORD = _types(_I, _F, True)
_NUMBERS = _types(_F, _I, False)
_MESSAGE = pa.struct([(k, _S) for k in
                      ("role", "type", "name", "tool_call_id", "call_id", "content", "output", "parts", "arguments")])
_ARGS = pa.struct([(k, _S) for k in ("paper_id", "section", "query", "answer")])


def _load(path: str) -> Any:
    try:
        with open(path, "rb") as fh:
            return orjson.loads(fh.read())
    except (OSError, orjson.JSONDecodeError):
        raise Unsupported from None


def _array(values: list, type_: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, type=type_)
    except (pa.ArrowException, OverflowError, UnicodeError, TypeError, ValueError):
        raise Unsupported from None


def _np(arr: pa.Array | pa.ChunkedArray, fill: int | float | None = None) -> np.ndarray:
    if fill is not None:
        arr = pc.fill_null(arr, fill)
    elif arr.null_count:
        raise Unsupported
    return arr.to_numpy(zero_copy_only=False)


def _fits32(*arrays: np.ndarray) -> None:
    for a in arrays:
        if len(a) and np.abs(a).max() > INT32_MAX:
            raise Unsupported


def _check_integral(ints: pa.StructArray, floats: pa.StructArray, names: tuple[str, ...]) -> None:
    """Refuse 1.5 where an integer belongs (the int64 reading truncated it; the float64 one did not)."""
    for k in names:
        i, f = ints.field(k), floats.field(k)
        if i.null_count != f.null_count:
            raise Unsupported
        if len(i) > i.null_count and not pc.all(pc.equal(pc.cast(i, _F, safe=False), f)).as_py():
            raise Unsupported


class _Attempts:
    """The records of one task in row order, with their place in it."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.where: list[str] = []
        self.sample_id: list[str] = []
        self.attempt: list[int] = []
        self.is_final: list[bool] = []
        self.subtract: list[dict[str, int] | None] = []

    def add(self, rec: dict[str, Any], where: str, sample_id: str, attempt: int, is_final: bool,
            subtract: dict[str, int] | None) -> None:
        self.records.append(rec)
        self.where.append(where)
        self.sample_id.append(sample_id)
        self.attempt.append(attempt)
        self.is_final.append(is_final)
        self.subtract.append(subtract)


def _plan(samples: list[Sample], out: dict[str, Any]) -> _Attempts:
    """The per-file checks of reference_parse._add_sample; any doubt is Unsupported."""
    att = _Attempts()
    for path, fails in samples:
        rec = _load(path)
        if not isinstance(rec, dict):
            raise Unsupported
        sample_id = rec.get("sample_id")
        if type(sample_id) is not str or sample_id != os.path.basename(path)[:-5]:  # <name>.json
            raise Unsupported
        out["sample_ids"].append(sample_id)
        model = rec.get("model")
        if isinstance(model, str):
            out["models"].add(model)
        elif model is not None:
            raise Unsupported
        retry_count = rec.get("retry_count")
        if retry_count is None:
            if fails:
                raise Unsupported
            retry_count = 0
        elif type(retry_count) is not int:
            raise Unsupported
        all_failed = len(fails) == retry_count + 1 and rec.get("terminated_by") == "error"
        if len(fails) != retry_count and not all_failed:
            raise Unsupported
        subtract: dict[str, int] = defaultdict(int)
        for k, fname in enumerate(fails):
            frec = _load(fname)
            if not isinstance(frec, dict) or frec.get("sample_id") != sample_id:
                raise Unsupported
            try:
                for key, v in _merged_totals(_Rec(frec, fname)).items():
                    subtract[key] += v
            except ParseError:
                raise Unsupported from None
            if k < retry_count:
                att.add(frec, fname, sample_id, k, False, None)
        att.add(rec, path, sample_id, retry_count, True, subtract if fails else None)
    return att


def _within(parents: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Position of each child within its parent (children in parent order)."""
    return np.arange(len(parents), dtype=np.int64) - starts[parents]


def _group_cumsum(values: np.ndarray, parents: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Running sum of ``values`` restarting at each parent's first child."""
    total = np.cumsum(values)
    before = np.concatenate([[0], total])[starts[parents]]
    return total - before


def _first_line(output: pa.Array) -> pa.Array:
    return pc.replace_substring_regex(output, pattern=r"\n[\s\S]*", replacement="", max_replacements=1)


def _status(output: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """reference_parse.status_of and its tool-error rule, on a column of outputs."""

    def starts(prefix: str, text: pa.Array = output) -> np.ndarray:
        return _np(pc.starts_with(text, pattern=prefix), False)

    def both(prefix: str, part: str) -> np.ndarray:
        """Starts with ``prefix`` and has ``part`` in its first line (searched only if any starts so)."""
        mask = starts(prefix)
        if not mask.any():
            return mask
        first = _first_line(pc.if_else(pa.array(mask), output, pa.nulls(len(output), _S)))
        return mask & _np(pc.match_substring(first, pattern=part), False)

    rules = [
        (starts("REJECTED: Insufficient budget"), "rejected_budget"),
        (both("REJECTED: Tool", "disabled"), "rejected_disabled"),
        (starts("Unknown tool"), "unknown_tool"),
        (starts("Error calling"), "invalid_args"),
        (both("Paper '", "not found"), "unknown_paper"),
        (starts("Full text not available") | starts("No sections found for paper"), "no_full_text"),
        (starts("Empty query."), "invalid_args"),
        (both("Section '", "' not found in paper"), "section_not_found"),
    ]
    status = np.select([m for m, _ in rules], [s for _, s in rules], default="ok").astype(object)
    tool_error = starts("Unknown tool") | starts("Error calling") | starts("Tool '")
    return pa.array(status, _S), tool_error


def _messages(att: _Attempts) -> tuple[dict[str, Any], np.ndarray]:
    """Message columns of every attempt, and how many each attempt has."""
    lists = []
    for rec in att.records:
        m = rec.get("messages")
        if m is not None and not isinstance(m, list):
            raise Unsupported
        lists.append(m or [])
    counts = np.array([len(m) for m in lists], dtype=np.int64)
    try:
        arr = pa.array([m for ms in lists for m in ms], type=_MESSAGE)
    except (pa.ArrowException, OverflowError, UnicodeError, TypeError, ValueError):
        arr = None
    if arr is not None and arr.null_count == 0:
        def col(k: str) -> pa.Array:
            return arr.field(k)

        def truthy(a: pa.Array) -> pa.Array:
            return pc.and_kleene(pc.is_valid(a), pc.not_equal(a, ""))

        role = pc.if_else(truthy(col("role")), col("role"),
                          pc.if_else(truthy(col("type")), col("type"), pa.scalar("unknown")))
        tcid = pc.if_else(truthy(col("tool_call_id")), col("tool_call_id"), col("call_id"))
        content = pc.coalesce(col("content"), col("output"), col("parts"), col("arguments"))
        return {"role": role, "name": col("name"), "tool_call_id": tcid, "content": content}, counts
    # an unusual message shape (non-text content, a non-object message): one at a time
    rows = [_message_row(m) for ms in lists for m in ms]
    cols = list(zip(*rows)) if rows else [[], [], [], []]
    return {k: pa.array(c, _S) for k, c in zip(("role", "name", "tool_call_id", "content"), cols)}, counts


def _args(att: _Attempts, tools: pa.Array) -> dict[str, pa.Array]:
    """args_json and the argument columns, from each call's ``args``."""
    raw = [
        c.get("args")
        for rec in att.records for t in rec["turns"] for c in (t.get("tool_calls") or ())
    ]
    encode = _dumps
    args_json = pa.array(["{}" if a is None or (type(a) is dict and not a) else encode(a) for a in raw], _S)
    objects = [a if type(a) is dict else {} for a in raw]
    try:
        fields = pa.array(objects, type=_ARGS)
        paper, section, query, answer = (fields.field(k) for k in ("paper_id", "section", "query", "answer"))
    except (pa.ArrowException, OverflowError, UnicodeError, TypeError, ValueError):
        cols = [pa.array([_scalar_text(a.get(k)) for a in objects], _S)
                for k in ("paper_id", "section", "query", "answer")]
        paper, section, query, answer = cols
    null = pa.nulls(len(raw), _S)

    def only(tool: str, values: pa.Array) -> pa.Array:
        return pc.if_else(pc.fill_null(pc.equal(tools, tool), False), values, null)

    return {"args_json": args_json, "paper_id": paper, "section_query": only("read_section", section),
            "search_query": only("search_papers", query), "answer": only("submit_answer", answer)}


def _table(name: str, cols: dict[str, Any], n: int) -> pa.Table:
    schema = task_schema(name)
    try:
        return _columns(schema, cols, n)
    except (pa.ArrowException, OverflowError):
        raise Unsupported from None


def _columns(schema: pa.Schema, cols: dict[str, Any], n: int) -> pa.Table:
    arrays = []
    for f in schema:
        v = cols.get(f.name)
        if v is None:
            arrays.append(pa.nulls(n, f.type))
        elif isinstance(v, (pa.Array, pa.ChunkedArray)):
            arrays.append(pc.cast(v, f.type))
        else:
            arrays.append(pa.array(v, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def parse_bulk(run_id: str, samples: list[Sample]) -> dict[str, Any]:
    """The result of reference_parse.parse_samples for ``samples``, computed in bulk."""
    out: dict[str, Any] = {"sample_ids": [], "models": set(), "budget_total": None, "error": None}
    att = _plan(samples, out)
    n_att = len(att.records)
    recs = _array(att.records, _RECORD)
    nums = _array(att.records, _NUMBERS)
    if recs.null_count:
        raise Unsupported
    turns_list = recs.field("turns")
    if turns_list.null_count:
        raise Unsupported
    _check_integral(recs, nums, _INT_TOP)
    nturns = nums.field("turns").flatten()
    turns = turns_list.flatten()
    _check_integral(turns, nturns, _INT_TURN)
    if turns.null_count or turns.field("role").null_count:
        raise Unsupported

    # ---- attempts
    attempt = np.array(att.attempt, dtype=np.int64)
    budget_total = _np(recs.field("budget_total"))
    _fits32(budget_total)
    if n_att:
        out["budget_total"] = int(budget_total[np.flatnonzero(att.is_final)[0]])
    n_turns = _np(pc.list_value_length(turns_list))
    turn_start = np.concatenate([[0], np.cumsum(n_turns)])[:-1].astype(np.int64)

    # ---- turns
    t_parent = _np(pc.list_parent_indices(turns_list)).astype(np.int64)
    pos = _within(t_parent, turn_start)
    calls_list, results_list = turns.field("tool_calls"), turns.field("tool_results")
    n_calls = _np(pc.list_value_length(calls_list), 0)
    n_results = _np(pc.list_value_length(results_list), 0)
    if np.any(n_results > n_calls):
        raise Unsupported
    prompt = _np(turns.field("prompt_tokens"), 0)
    completion = _np(turns.field("completion_tokens"), 0)
    if len(prompt) and (np.abs(prompt).max() > _TOKEN_LIMIT or np.abs(completion).max() > _TOKEN_LIMIT):
        raise Unsupported
    cumulative = _group_cumsum(prompt + completion, t_parent, turn_start)
    has_results = n_results > 0
    recorded_before = turns.field("budget_before")
    recorded_after = turns.field("budget_after")
    if pc.any(pc.and_(pa.array(has_results), pc.or_(pc.is_null(recorded_before),
                                                    pc.is_null(recorded_after)))).as_py():
        raise Unsupported
    before_rec, after_rec = _np(recorded_before, 0), _np(recorded_after, 0)
    _fits32(before_rec, after_rec)
    # a turn without results keeps the budget as the last turn with results left it
    idx = np.where(has_results, np.arange(len(pos)), -1)
    last = np.maximum.accumulate(idx) if len(idx) else idx
    valid = last >= turn_start[t_parent]
    carried_after = np.where(valid, after_rec[np.maximum(last, 0)], budget_total[t_parent])
    prev = np.where(pos > 0, np.concatenate([[0], carried_after])[:-1] if len(pos) else carried_after,
                    budget_total[t_parent])
    before = np.where(has_results, before_rec, prev)
    after = np.where(has_results, after_rec, prev)
    content_chars = _np(pc.utf8_length(turns.field("content")), 0)

    # ---- tool calls
    calls = calls_list.flatten()
    if calls.null_count or calls.field("name").null_count:
        raise Unsupported
    c_turn = _np(pc.list_parent_indices(calls_list)).astype(np.int64)
    call_start = np.concatenate([[0], np.cumsum(n_calls)])[:-1].astype(np.int64)
    ci = _within(c_turn, call_start)
    c_att = t_parent[c_turn]
    att_call_start = np.concatenate([[0], np.cumsum(np.bincount(c_att, minlength=n_att))])[:-1].astype(np.int64)
    seq = _within(c_att, att_call_start)
    results = results_list.flatten()
    if results.null_count or results.field("output").null_count:
        raise Unsupported
    executed = ci < n_results[c_turn]
    res_start = np.concatenate([[0], np.cumsum(n_results)])[:-1].astype(np.int64)
    res_idx = res_start[c_turn] + ci
    cost_all = _np(results.field("cost"), 0)
    _fits32(cost_all)
    take = pa.array(np.where(executed, res_idx, 0))
    exec_mask = pa.array(executed)
    output = pc.if_else(exec_mask, results.field("output").take(take) if len(results) else pa.nulls(len(ci), _S),
                        pa.nulls(len(ci), _S))
    cost = np.where(executed, cost_all[np.where(executed, res_idx, 0)] if len(cost_all) else 0, 0)
    status, tool_error = _status(output)
    status = pc.if_else(exec_mask, status, pa.scalar("not_executed"))
    tool_errors = np.bincount(c_att[executed & tool_error], minlength=n_att)
    running = before[c_turn] - _group_cumsum(cost, c_turn, call_start)
    _fits32(running)
    tools = calls.field("name")
    args = _args(att, tools)
    output_chars = _np(pc.utf8_length(output), 0)
    read_ok = pc.and_(pc.equal(tools, "read_section"), pc.equal(status, "ok"))
    # the header of a first line "=== h ===" (RE2's "." stops at a newline, as the first line does)
    header = pc.struct_field(pc.extract_regex(output, pattern=r"^=== (?P<h>.*) ===(?:\n|\z)"), [0])
    header = pc.if_else(read_ok, header, pa.nulls(len(ci), _S))
    alias = _aliases(args["section_query"], pc.is_valid(header))

    # ---- trajectories
    totals = {k: _np(recs.field(k), 0 if k.startswith("cache") else None).copy() for k in TOKEN_FIELDS}
    counts = {k: _np(recs.field(k), 0).copy() for k in MERGED_COUNTS}
    _fits32(*counts.values())
    for i, sub in enumerate(att.subtract):
        if sub:
            for k in (*TOKEN_FIELDS, *MERGED_COUNTS):
                src = totals if k in totals else counts
                src[k][i] -= sub.get(k, 0)
    if any(np.any(v < 0) or (len(v) and v.max() > _TOKEN_LIMIT) for v in (*totals.values(), *counts.values())):
        raise Unsupported
    predicted_index, budget_used = _np(recs.field("predicted_index")), _np(recs.field("budget_used"))
    _fits32(predicted_index, budget_used)
    if recs.field("is_correct").null_count or recs.field("terminated_by").null_count:
        raise Unsupported

    def empty_is_null(a: pa.Array) -> pa.Array:
        return pc.if_else(pc.equal(a, ""), pa.nulls(len(a), _S), a)

    sample_ids = pa.array(att.sample_id, _S)
    t_cols = {
        "run_id": pa.nulls(n_att, _S).fill_null(run_id), "sample_id": sample_ids, "attempt": attempt,
        "is_final": att.is_final, "predicted_answer": empty_is_null(recs.field("predicted_answer")),
        "predicted_index": predicted_index, "is_correct": recs.field("is_correct"),
        "terminated_by": recs.field("terminated_by"), "total_turns": n_turns, "budget_used": budget_used,
        **totals,
        "total_tokens": totals["total_prompt_tokens"] + totals["total_completion_tokens"]
        + totals["cache_creation_tokens"],
        "tool_errors": tool_errors, **counts, "wall_time_s": _np(recs.field("wall_time_s"), 0.0),
        "reasoning": empty_is_null(recs.field("reasoning")),
    }
    n_t = len(pos)
    turn_cols = {
        "run_id": pa.nulls(n_t, _S).fill_null(run_id), "sample_id": sample_ids.take(pa.array(t_parent)),
        "attempt": attempt[t_parent], "turn": pos, "role": turns.field("role"), "n_tool_calls": n_calls,
        "prompt_tokens": prompt, "completion_tokens": completion, "cache_read_tokens": np.zeros(n_t, np.int64),
        "cache_creation_tokens": np.zeros(n_t, np.int64), "cumulative_tokens": cumulative,
        "budget_before": before, "budget_after": after, "content_chars": content_chars,
        "t_offset_s": _np(turns.field("timestamp"), 0.0),
    }
    n_c = len(ci)
    call_cols = {
        "run_id": pa.nulls(n_c, _S).fill_null(run_id), "sample_id": sample_ids.take(pa.array(c_att)),
        "attempt": attempt[c_att], "turn": pos[c_turn], "call_index": ci, "seq": seq, "tool": tools, **args,
        "resolved_header": header, "cost": cost, "status": status, "output_chars": output_chars,
        "budget_after": running, ALIAS_COLUMN: alias,
    }
    msg, n_msgs = _messages(att)
    m_parent = np.repeat(np.arange(n_att), n_msgs)
    m_start = np.concatenate([[0], np.cumsum(n_msgs)])[:-1].astype(np.int64)
    n_m = len(m_parent)
    msg_cols = {
        "run_id": pa.nulls(n_m, _S).fill_null(run_id), "sample_id": sample_ids.take(pa.array(m_parent)),
        "attempt": attempt[m_parent], "idx": _within(m_parent, m_start), **msg,
    }
    out["tables"] = {
        "trajectories": _table("trajectories", t_cols, n_att),
        "turns": _table("turns", turn_cols, n_t),
        "tool_calls": _table("tool_calls", call_cols, n_c),
        "messages": _table("messages", msg_cols, n_m),
    }
    per_attempt = {
        "trajectories": np.ones(n_att, np.int64), "turns": n_turns,
        "tool_calls": np.bincount(c_att, minlength=n_att), "messages": n_msgs,
    }
    out["segments"] = {
        name: [(w, int(n)) for w, n in zip(att.where, counts_) if n] for name, counts_ in per_attempt.items()
    }
    return out


def _aliases(section_query: pa.Array, wanted: pa.Array) -> pa.Array:
    """alias_index of each call's section query where ``wanted``, computed once per distinct query."""
    values = pc.if_else(wanted, section_query, pa.nulls(len(section_query), _S))
    distinct = pc.unique(values).drop_null()
    index = pa.array([alias_index(q) for q in distinct.to_pylist()], pa.int32())
    return pc.take(index, pc.index_in(values, value_set=distinct))


def parse_task(run_id: str, samples: list[Sample]) -> dict[str, Any]:
    """One worker task: the bulk path, or the record-by-record one when the input asks for it.

    The cyclic garbage collector is paused meanwhile: parsed JSON holds no cycles (reference counting
    frees it), and with a task's records alive each collection walked all of them again (about a
    quarter of a task's time)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        try:
            return parse_bulk(run_id, samples)
        except (Unsupported, RecursionError):
            return parse_samples(run_id, samples)
    finally:
        if paused:
            gc.enable()


def spooled_task(run_id: str, samples: list[Sample], spool: str, key: int) -> dict[str, Any]:
    """A worker task whose tables go to Arrow files in ``spool`` (the parent maps them; no pickling)."""
    result = parse_task(run_id, samples)
    if result["error"] is None:
        paths = {}
        for name, table in result["tables"].items():
            path = os.path.join(spool, f"{key}-{name}.arrow")
            with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
            paths[name] = path
        result["tables"] = paths
    return result


__all__ = ["Unsupported", "parse_bulk", "parse_task", "spooled_task"]
