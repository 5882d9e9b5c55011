"""Reference-harness JSON -> run tables in bulk: decode each file (msgspec, into typed records),
convert every task's records to columns at once, and derive the rows with Arrow/numpy column
operations.

This is the fast path of a worker task (ingest/reference_json.py runs tasks on every core). It only
takes input whose every field has its plain type (strings as strings, integers as integers, ...):
anything else raises ``Unsupported`` and the task is parsed by ingest/reference_parse.py, the
record-by-record reading that defines the rules and words every error. Both give the same rows.

Python touches each file (its sample checks), each record's fields (one list per column) and each
distinct argument text of the calls (its JSON text, formatted as ``json.dumps`` does); everything
else is column arithmetic. Each file's SHA-256 is taken from the bytes decoded (the folder hash).
"""

from __future__ import annotations

import gc
import hashlib
import os
from collections.abc import Iterable
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any, Optional

import msgspec
import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from .reference_parse import (
    ALIAS_COLUMN,
    UNIT_TURN_COLUMN,
    INT32_MAX,
    INT64_MAX,
    MERGED_COUNTS,
    TOKEN_FIELDS,
    Sample,
    _dumps,
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

_Str = Optional[str]
_Int = Optional[int]


# The record types the files are decoded into (msgspec: unknown fields are skipped without making
# objects, and every value must have its plain type: an integer field refuses 2.0 and true, a number
# field refuses true, a text field refuses a list; any refusal hands the task to the careful path).
_NULL = msgspec.Raw(b"null")


class _Call(msgspec.Struct, gc=False):
    name: _Str = None
    #: the JSON text as in the file: calls repeat their arguments, which are read once per text
    args: msgspec.Raw = _NULL


class _Result(msgspec.Struct, gc=False):
    output: _Str = None
    cost: _Int = None


class _Turn(msgspec.Struct, gc=False):
    role: _Str = None
    content: _Str = None
    tool_calls: Optional[list[_Call]] = None
    tool_results: Optional[list[_Result]] = None
    prompt_tokens: _Int = None
    completion_tokens: _Int = None
    budget_before: _Int = None
    budget_after: _Int = None
    timestamp: Optional[float] = None


class _Message(msgspec.Struct, gc=False):
    role: _Str = None
    type: _Str = None
    name: _Str = None
    tool_call_id: _Str = None
    call_id: _Str = None
    content: _Str = None
    output: _Str = None
    parts: _Str = None
    arguments: _Str = None


class _Record(msgspec.Struct, gc=False):
    sample_id: _Str = None
    model: _Str = None
    retry_count: _Int = None
    terminated_by: _Str = None
    predicted_answer: _Str = None
    predicted_index: _Int = None
    is_correct: Optional[bool] = None
    reasoning: _Str = None
    budget_total: _Int = None
    budget_used: _Int = None
    total_prompt_tokens: _Int = None
    total_completion_tokens: _Int = None
    cache_read_tokens: _Int = None
    cache_creation_tokens: _Int = None
    api_error_count: _Int = None
    transient_retry_count: _Int = None
    wall_time_s: Optional[float] = None
    turns: Optional[list[_Turn]] = None
    messages: Optional[list[_Message]] = None


_DECODER = msgspec.json.Decoder(_Record)


def _read(path: str) -> bytes:
    """A file's bytes, read with one ``os.read`` of its size (and one more that finds the end):
    about a fifth less CPU than ``open(path, "rb").read()``, which adds a buffered reader and a
    seek per file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        chunks = [os.read(fd, os.fstat(fd).st_size + 1)]
        while chunks[-1]:
            chunks.append(os.read(fd, 1 << 20))
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 2 else b"".join(chunks)


def _load(path: str, digests: dict[str, bytes]) -> _Record:
    """One file, decoded; its SHA-256 goes to ``digests`` (the folder's identity, one read)."""
    try:
        data = _read(path)
    except OSError:
        raise Unsupported from None
    digests[path] = hashlib.sha256(data).digest()
    try:
        return _DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise Unsupported from None


def _array(values: list, type_: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, type=type_)
    except (pa.ArrowException, OverflowError, UnicodeError, TypeError, ValueError):
        raise Unsupported from None


def _texts(values: list[str | None]) -> pa.Array:
    """A string column from Python strings: ASCII text is joined into one buffer (one copy, no
    growing builder); anything else is converted by Arrow."""
    n = len(values)
    if n == 0:
        return pa.array([], _S)
    present = [v for v in values if v is not None]
    joined = "".join(present)
    if not joined.isascii() or len(joined) >= INT32_MAX:
        return _array(values, _S)
    lengths = np.fromiter(map(len, present), dtype=np.int64, count=len(present))
    offsets = np.zeros(n + 1, dtype=np.int32)
    if len(present) == n:
        np.cumsum(lengths, out=offsets[1:])
        validity = None
        nulls = 0
    else:
        valid = np.fromiter((v is not None for v in values), dtype=bool, count=n)
        full = np.zeros(n, dtype=np.int64)
        full[valid] = lengths
        np.cumsum(full, out=offsets[1:])
        validity = pa.array(valid).buffers()[1]
        nulls = n - len(present)
    return pa.Array.from_buffers(_S, n, [validity, pa.py_buffer(offsets), pa.py_buffer(joined.encode("ascii"))],
                                 null_count=nulls)


def _ints(values: list, fill: int | None = None) -> np.ndarray:
    """Integers (None as ``fill``; None without a fill, or a value beyond 64 bits, is Unsupported)."""
    if fill is not None:
        values = [fill if v is None else v for v in values]
    try:
        return np.array(values, dtype=np.int64) if values else np.zeros(0, np.int64)
    except (OverflowError, TypeError, ValueError):
        raise Unsupported from None


def _floats(values: list, fill: float) -> np.ndarray:
    out = np.array([fill if v is None else v for v in values], dtype=np.float64) if values else np.zeros(0)
    if not np.isfinite(out).all():
        raise Unsupported
    return out


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


def _fits_tokens(*arrays: np.ndarray) -> None:
    for a in arrays:
        if len(a) and np.abs(a).max() > _TOKEN_LIMIT:
            raise Unsupported


_MERGED = (*TOKEN_FIELDS, *MERGED_COUNTS)

#: stands for an absent integer where absent is allowed only sometimes (outside the 32-bit range, so
#: a recorded value equal to it is Unsupported anyway)
_ABSENT = -(2**62)


def _merged(rec: _Record) -> tuple[int, ...]:
    """The totals the reference adds into the final record (absent counts as 0)."""
    out = tuple(0 if (v := getattr(rec, k)) is None else v for k in _MERGED)
    for k, v in zip(_MERGED, out):
        if not -(INT64_MAX if k in TOKEN_FIELDS else INT32_MAX) <= v <= (INT64_MAX if k in TOKEN_FIELDS else INT32_MAX):
            raise Unsupported
    return out


class _Attempts:
    """The records of one task in row order, with their place in it."""

    def __init__(self) -> None:
        self.records: list[_Record] = []
        self.where: list[str] = []
        self.sample_id: list[str] = []
        self.attempt: list[int] = []
        self.is_final: list[bool] = []
        self.subtract: list[tuple[int, ...] | None] = []

    def add(self, rec: _Record, where: str, sample_id: str, attempt: int, is_final: bool,
            subtract: tuple[int, ...] | None) -> None:
        self.records.append(rec)
        self.where.append(where)
        self.sample_id.append(sample_id)
        self.attempt.append(attempt)
        self.is_final.append(is_final)
        self.subtract.append(subtract)


def _plan(samples: list[Sample], out: dict[str, Any]) -> _Attempts:
    """The per-file checks of reference_parse._add_sample; any doubt is Unsupported."""
    att = _Attempts()
    digests = out["digests"]
    for path, fails in samples:
        rec = _load(path, digests)
        sample_id = rec.sample_id
        if sample_id is None or sample_id != os.path.basename(path)[:-5]:  # <name>.json
            raise Unsupported
        out["sample_ids"].append(sample_id)
        if rec.model is not None:
            out["models"].add(rec.model)
        retry_count = rec.retry_count
        if retry_count is None:
            if fails:
                raise Unsupported
            retry_count = 0
        all_failed = len(fails) == retry_count + 1 and rec.terminated_by == "error"
        if len(fails) != retry_count and not all_failed:
            raise Unsupported
        subtract = None
        for k, fname in enumerate(fails):
            frec = _load(fname, digests)
            if frec.sample_id != sample_id:
                raise Unsupported
            totals = _merged(frec)
            subtract = totals if subtract is None else tuple(a + b for a, b in zip(subtract, totals))
            if k < retry_count:
                att.add(frec, fname, sample_id, k, False, None)
        att.add(rec, path, sample_id, retry_count, True, subtract)
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


def _messages(recs: list[_Record]) -> tuple[dict[str, Any], np.ndarray]:
    """Message columns of every attempt, and how many each attempt has."""
    lists = [r.messages or () for r in recs]
    counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    msgs = list(chain.from_iterable(lists))
    role = [m.role or m.type or "unknown" for m in msgs]
    tcid = [m.tool_call_id or m.call_id for m in msgs]
    content = [
        c if (c := m.content) is not None else (
            m.output if m.output is not None else m.parts if m.parts is not None else m.arguments)
        for m in msgs
    ]
    return {"role": _array(role, _S), "name": _array(list(map(attrgetter("name"), msgs)), _S),
            "tool_call_id": _array(tcid, _S), "content": _texts(content)}, counts


def _arg_fields(text: bytes) -> tuple[str, str | None, str | None, str | None, str | None]:
    """args_json and the paper_id, section, query and answer texts of one call's ``args``."""
    try:
        a = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise Unsupported from None
    if a is None or (type(a) is dict and not a):
        return "{}", None, None, None, None
    if type(a) is not dict:
        return _dumps(a), None, None, None, None
    return (_dumps(a), _scalar_text(a.get("paper_id")), _scalar_text(a.get("section")),
            _scalar_text(a.get("query")), _scalar_text(a.get("answer")))


#: ``_arg_fields`` of every distinct ``args`` text this process has read, over all its tasks: the
#: same arguments recur across models and folders (in the paper-scale import 130,000 distinct texts
#: per task add up to 38,000 distinct overall). Cleared when it grows past _ARG_CACHE_MAX entries.
_ARG_CACHE: dict[bytes, tuple[str, str | None, str | None, str | None, str | None]] = {}
_ARG_CACHE_MAX = 200_000


def _args(raw: list[msgspec.Raw], tools: pa.Array) -> dict[str, pa.Array]:
    """args_json and the argument columns, from each call's ``args`` (each distinct text read once
    per process)."""
    texts = list(map(bytes, raw))
    fields = _ARG_CACHE
    if len(fields) > _ARG_CACHE_MAX:
        fields.clear()
    for t in dict.fromkeys(texts):
        if t not in fields:
            fields[t] = _arg_fields(t)
    rows = list(map(fields.__getitem__, texts))
    args_json, paper, section, query, answer = (
        _array(list(map(itemgetter(k), rows)), _S) for k in range(5)) if rows else (pa.array([], _S),) * 5
    null = pa.nulls(len(rows), _S)

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


def _offsets(counts: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)])[:-1].astype(np.int64)


def expand_ranges(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges [start, start + count): each element's range number and its position."""
    owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    return owner, starts[owner] + _within(owner, _offsets(counts))


def parse_bulk(run_id: str, samples: list[Sample]) -> dict[str, Any]:
    """The result of reference_parse.parse_samples for ``samples``, computed in bulk (plus
    ``digests``: the SHA-256 of each file read)."""
    out: dict[str, Any] = {"sample_ids": [], "models": set(), "budget_total": None, "error": None, "digests": {}}
    att = _plan(samples, out)
    recs = att.records
    n_att = len(recs)

    def top(name: str) -> list:
        return list(map(attrgetter(name), recs))

    turns_per = top("turns")
    if None in turns_per:
        raise Unsupported

    # ---- attempts
    attempt = np.array(att.attempt, dtype=np.int64)
    budget_total = _ints(top("budget_total"))
    _fits32(budget_total)
    if n_att:
        out["budget_total"] = int(budget_total[att.is_final.index(True)])
    n_turns = np.fromiter(map(len, turns_per), dtype=np.int64, count=n_att)
    turn_start = _offsets(n_turns)

    # ---- turns
    turns = list(chain.from_iterable(turns_per))
    n_t = len(turns)
    t_parent = np.repeat(np.arange(n_att, dtype=np.int64), n_turns)
    pos = _within(t_parent, turn_start)
    calls_per = [t.tool_calls or () for t in turns]
    results_per = [t.tool_results or () for t in turns]
    n_calls = np.fromiter(map(len, calls_per), dtype=np.int64, count=n_t)
    n_results = np.fromiter(map(len, results_per), dtype=np.int64, count=n_t)
    if np.any(n_results > n_calls):
        raise Unsupported
    roles = list(map(attrgetter("role"), turns))
    if None in roles:
        raise Unsupported
    prompt = _ints(list(map(attrgetter("prompt_tokens"), turns)), 0)
    completion = _ints(list(map(attrgetter("completion_tokens"), turns)), 0)
    _fits_tokens(prompt, completion)
    cumulative = _group_cumsum(prompt + completion, t_parent, turn_start)
    has_results = n_results > 0
    # a turn with results must record its budget (absent reads as _ABSENT, beyond any 32-bit value)
    before_rec = _ints(list(map(attrgetter("budget_before"), turns)), _ABSENT)
    after_rec = _ints(list(map(attrgetter("budget_after"), turns)), _ABSENT)
    absent = (before_rec == _ABSENT) | (after_rec == _ABSENT)
    if np.any(absent & has_results):
        raise Unsupported
    before_rec[before_rec == _ABSENT] = 0
    after_rec[after_rec == _ABSENT] = 0
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
    content_chars = np.array([0 if c is None else len(c) for c in map(attrgetter("content"), turns)],
                             dtype=np.int64)
    timestamps = _floats(list(map(attrgetter("timestamp"), turns)), 0.0)

    # ---- tool calls
    calls = list(chain.from_iterable(calls_per))
    n_c = len(calls)
    tool_list = list(map(attrgetter("name"), calls))
    if None in tool_list:
        raise Unsupported
    c_turn = np.repeat(np.arange(n_t, dtype=np.int64), n_calls)
    call_start = _offsets(n_calls)
    ci = _within(c_turn, call_start)
    c_att = t_parent[c_turn]
    att_call_start = _offsets(np.bincount(c_att, minlength=n_att))
    seq = _within(c_att, att_call_start)
    results = list(chain.from_iterable(results_per))
    out_list = list(map(attrgetter("output"), results))
    if None in out_list:
        raise Unsupported
    executed = ci < n_results[c_turn]
    res_idx = _offsets(n_results)[c_turn] + ci
    cost_all = _ints(list(map(attrgetter("cost"), results)), 0)
    _fits32(cost_all)
    take = pa.array(np.where(executed, res_idx, 0))
    exec_mask = pa.array(executed)
    outputs = _texts(out_list)
    output = pc.if_else(exec_mask, outputs.take(take) if len(outputs) else pa.nulls(n_c, _S), pa.nulls(n_c, _S))
    cost = np.where(executed, cost_all[np.where(executed, res_idx, 0)] if len(cost_all) else 0, 0)
    status, tool_error = _status(output)
    status = pc.if_else(exec_mask, status, pa.scalar("not_executed"))
    tool_errors = np.bincount(c_att[executed & tool_error], minlength=n_att)
    running = before[c_turn] - _group_cumsum(cost, c_turn, call_start)
    _fits32(running)
    tools = _array(tool_list, _S)
    args = _args(list(map(attrgetter("args"), calls)), tools)
    output_chars = _np(pc.utf8_length(output), 0)
    read_ok = pc.and_(pc.equal(tools, "read_section"), pc.equal(status, "ok"))
    # the header of a first line "=== h ===" (RE2's "." stops at a newline, as the first line does)
    header = pc.struct_field(pc.extract_regex(output, pattern=r"^=== (?P<h>.*) ===(?:\n|\z)"), [0])
    header = pc.if_else(read_ok, header, pa.nulls(n_c, _S))
    alias = _aliases(args["section_query"], pc.is_valid(header))

    # ---- trajectories
    totals = {k: _ints(top(k), 0 if k.startswith("cache") else None) for k in TOKEN_FIELDS}
    counts = {k: _ints(top(k), 0) for k in MERGED_COUNTS}
    _fits32(*counts.values())
    _fits_tokens(*totals.values())
    for i, sub in enumerate(att.subtract):
        if sub:
            for k, v in zip(_MERGED, sub):
                src = totals if k in totals else counts
                src[k][i] -= v
    if any(np.any(v < 0) or (len(v) and v.max() > _TOKEN_LIMIT) for v in (*totals.values(), *counts.values())):
        raise Unsupported
    predicted_index, budget_used = _ints(top("predicted_index")), _ints(top("budget_used"))
    _fits32(predicted_index, budget_used)
    is_correct, terminated_by = top("is_correct"), top("terminated_by")
    if None in is_correct or None in terminated_by:
        raise Unsupported

    sample_ids = _array(att.sample_id, _S)
    t_cols = {
        "run_id": pa.nulls(n_att, _S).fill_null(run_id), "sample_id": sample_ids, "attempt": attempt,
        "is_final": att.is_final, "predicted_answer": [v or None for v in top("predicted_answer")],
        "predicted_index": predicted_index, "is_correct": is_correct,
        "terminated_by": terminated_by, "total_turns": n_turns, "budget_used": budget_used,
        **totals,
        "total_tokens": totals["total_prompt_tokens"] + totals["total_completion_tokens"]
        + totals["cache_creation_tokens"],
        "tool_errors": tool_errors, **counts, "wall_time_s": _floats(top("wall_time_s"), 0.0),
        "reasoning": [v or None for v in top("reasoning")],
    }
    turn_cols = {
        "run_id": pa.nulls(n_t, _S).fill_null(run_id), "sample_id": sample_ids.take(pa.array(t_parent)),
        "attempt": attempt[t_parent], "turn": pos, "role": roles, "n_tool_calls": n_calls,
        "prompt_tokens": prompt, "completion_tokens": completion, "cache_read_tokens": np.zeros(n_t, np.int64),
        "cache_creation_tokens": np.zeros(n_t, np.int64), "cumulative_tokens": cumulative,
        "budget_before": before, "budget_after": after, "content_chars": content_chars,
        "t_offset_s": timestamps,
    }
    call_cols = {
        "run_id": pa.nulls(n_c, _S).fill_null(run_id), "sample_id": sample_ids.take(pa.array(c_att)),
        "attempt": attempt[c_att], "turn": pos[c_turn], "call_index": ci, "seq": seq, "tool": tools, **args,
        "resolved_header": header, "cost": cost, "status": status, "output_chars": output_chars,
        "budget_after": running, ALIAS_COLUMN: alias,
    }
    msg, n_msgs = _messages(recs)
    del att.records, recs, turns, calls, results, calls_per, results_per, turns_per
    m_parent = np.repeat(np.arange(n_att), n_msgs)
    m_start = _offsets(n_msgs)
    n_m = len(m_parent)
    msg_cols = {
        "run_id": pa.nulls(n_m, _S).fill_null(run_id), "sample_id": sample_ids.take(pa.array(m_parent)),
        "attempt": attempt[m_parent], "idx": _within(m_parent, m_start), **msg,
    }
    out["tables"] = {
        "trajectories": _table("trajectories", t_cols, n_att),
        "turns": _table("turns", turn_cols, n_t),
        "tool_calls": _table("tool_calls", call_cols, n_c),
        "messages": _table("messages", msg_cols, n_m).append_column(
            UNIT_TURN_COLUMN, pa.array(_message_turns(msg["role"], m_parent, m_start, roles, t_parent, pos, n_att))),
    }
    per_attempt = {
        "trajectories": np.ones(n_att, np.int64), "turns": n_turns,
        "tool_calls": np.bincount(c_att, minlength=n_att), "messages": n_msgs,
    }
    out["segments"] = {
        name: [(w, int(n)) for w, n in zip(att.where, counts_) if n] for name, counts_ in per_attempt.items()
    }
    return out


def _message_turns(role: pa.Array, m_parent: np.ndarray, m_start: np.ndarray, turn_roles: list[str],
                   t_parent: np.ndarray, turn: np.ndarray, n_att: int) -> np.ndarray:
    """The turn the search index gives each message (transcripts/units.py's rule, computed here, on
    the worker, from the rows as this module orders them: an attempt's messages by ``idx``, its turns
    by number): the k-th assistant message and the messages after it belong to the k-th assistant
    turn, those before the first assistant message to the first; past the last assistant turn, a
    message's turn is its count of assistant messages so far less one."""
    is_assistant = np.asarray(pc.fill_null(pc.equal(role, "assistant"), False).to_numpy(zero_copy_only=False),
                              dtype=np.int64)
    seen = _group_cumsum(is_assistant, m_parent, m_start)  # assistant messages up to each one
    k = np.maximum(seen, 1)
    asst = np.fromiter((r == "assistant" for r in turn_roles), dtype=bool, count=len(turn_roles))
    asst_turn = turn[asst]  # each attempt's assistant turns, in order
    n_asst = np.bincount(t_parent[asst], minlength=n_att)
    first = _offsets(n_asst)
    has = k <= n_asst[m_parent]
    at = np.where(has, first[m_parent] + k - 1, 0)
    found = asst_turn[at] if len(asst_turn) else np.zeros(len(k), np.int64)
    return np.where(has, found, np.maximum(seen - 1, 0)).astype(np.int32)


def _aliases(section_query: pa.Array, wanted: pa.Array) -> pa.Array:
    """alias_index of each call's section query where ``wanted``, computed once per distinct query."""
    values = pc.if_else(wanted, section_query, pa.nulls(len(section_query), _S))
    distinct = pc.unique(values).drop_null()
    index = pa.array([alias_index(q) for q in distinct.to_pylist()], pa.int32())
    return pc.take(index, pc.index_in(values, value_set=distinct))


def file_digests(paths: Iterable[str]) -> dict[str, bytes]:
    """The SHA-256 of each file (read in full; they were just read, so the error is already worded)."""
    out = {}
    for path in paths:
        with open(path, "rb") as fh:
            out[path] = hashlib.sha256(fh.read()).digest()
    return out


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
            result = parse_samples(run_id, samples)
            if result["error"] is None:
                result["digests"] = file_digests(f for path, fails in samples for f in (path, *fails))
            return result
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


__all__ = ["Unsupported", "file_digests", "parse_bulk", "parse_task", "spooled_task"]
