"""Parse reference-harness trajectory JSON into column lists: the part of the import that runs in
worker processes (ingest/reference_json.py drives it over all cores and converts the results in bulk).

One task is a run of consecutive samples of one model folder: each ``<sample_id>.json`` with its
``_failed_attempts/`` files. A task returns Arrow tables (one per run table except ``runs``) whose
rows are the files' rows in order, the per-file row counts (to name the file of a row later) and
the first error found, as text. Only the recorded values are taken here; what needs the benchmark
(the resolved section) or every row at once (the data-quality rules) happens in the parent.

Imports stay light (no DuckDB) because every worker process imports this module.
"""

from __future__ import annotations

import json
import json.encoder
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa

from agenthop.schemas import trajectory as tschema

FAILED_DIR = "_failed_attempts"

_HEADER_RE = re.compile(r"^=== (.*) ===$")
_ALIAS_RE = re.compile(r"^\(?([A-Za-z]{1,3})\)?$")

#: Largest magnitude of a 32-bit and a 64-bit integer column.
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

#: Name of the extra tool_calls column carrying the alias index of ``section_query`` (dropped later).
ALIAS_COLUMN = "_alias_index"
#: Name of the extra messages column the bulk path adds: each message's turn for the search index
#: (reference_bulk._message_turns; dropped before the rows are conformed, kept for the index)
UNIT_TURN_COLUMN = "_unit_turn"


class ParseError(Exception):
    """A reference file that cannot be imported; the message names the file and the field."""


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def load_json(path: Path) -> Any:
    """Parse one file (orjson); any failure becomes one line naming the file and the field."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ParseError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        fast_msg = exc.msg
    # orjson refused it: find out why, precisely, with the standard library
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"{path}: not valid UTF-8 (byte offset {exc.start})") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"{path}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ParseError(f"{path}: malformed JSON: nested too deeply") from None
    from agenthop.harness.benchmarks.agenthop.loader import find_lone_surrogate  # error path only

    found = find_lone_surrogate(obj)
    if found is not None:
        field, ch = found
        raise ParseError(
            f"{path}: field '{field}' holds a lone surrogate escape (\\u{ord(ch):04x}), which is not text"
        )
    raise ParseError(f"{path}: not importable JSON ({fast_msg})")


def alias_index(query: str | None) -> int | None:
    """0-based index of a section alias such as ``B`` or ``(AA)``; None for anything else."""
    if query is None:
        return None
    m = _ALIAS_RE.match(query.strip())
    if not m:
        return None
    n = 0
    for ch in m.group(1).upper():
        n = n * 26 + (ord(ch) - 64)
    return n - 1


# --------------------------------------------------------------------------------------------
# status from recorded outputs


def status_of(output: str) -> str:
    """Call status from the reference's output text (docs/harness.md)."""
    first = output.split("\n", 1)[0]
    if output.startswith("REJECTED: Insufficient budget"):
        return "rejected_budget"
    if output.startswith("REJECTED: Tool") and "disabled" in first:
        return "rejected_disabled"
    if output.startswith("Unknown tool"):
        return "unknown_tool"
    if output.startswith("Error calling"):
        return "invalid_args"
    if output.startswith("Paper '") and "not found" in first:
        return "unknown_paper"
    if output.startswith(("Full text not available", "No sections found for paper")):
        return "no_full_text"
    if output.startswith("Empty query."):
        return "invalid_args"
    if output.startswith("Section '") and "' not found in paper" in first:
        return "section_not_found"
    return "ok"


def _is_tool_error(output: str) -> bool:
    """The reference's tool-error rule (docs/harness.md, dispatcher errors)."""
    return output.startswith(("Unknown tool", "Error calling", "Tool '"))



# --------------------------------------------------------------------------------------------
# one trajectory record


class _Rec:
    """Typed access to one JSON object, with errors naming the file and field.

    ``where`` is the file, or (parent record, list name, index) for a nested object; its text is
    only built for an error message.
    """

    __slots__ = ("d", "_where")

    def __init__(self, data: Any, where: str | tuple[_Rec, str, int]) -> None:
        self._where = where
        if not isinstance(data, dict):
            raise ParseError(f"{self.where}: expected a JSON object, found {type(data).__name__}")
        self.d = data

    @property
    def where(self) -> str:
        w = self._where
        if isinstance(w, str):
            return w
        parent, name, index = w
        sep = ": " if isinstance(parent._where, str) else "."
        return f"{parent.where}{sep}{name}[{index}]"

    def has(self, key: str) -> bool:
        return key in self.d and self.d[key] is not None

    def int(self, key: str, default: int | None = None, *, wide: bool = False) -> int:
        """An integer field that fits its column (64-bit when ``wide``, else 32-bit)."""
        v = self.d.get(key)
        if type(v) is int and -INT32_MAX <= v <= INT32_MAX:
            return v
        if v is None:
            if default is None:
                raise ParseError(f"{self.where}: missing field '{key}'")
            return default
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
            raise ParseError(f"{self.where}: field '{key}' must be an integer, found {_short(v)}")
        limit = INT64_MAX if wide else INT32_MAX
        if not -limit <= v <= limit:
            raise ParseError(
                f"{self.where}: field '{key}' is {_short(v)}, outside the {64 if wide else 32}-bit integer range"
            )
        return int(v)

    def float(self, key: str, default: float | None = None) -> float:
        v = self.d.get(key)
        if v is None:
            if default is None:
                raise ParseError(f"{self.where}: missing field '{key}'")
            return default
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ParseError(f"{self.where}: field '{key}' must be a number, found {_short(v)}")
        try:
            return float(v)
        except OverflowError:
            raise ParseError(f"{self.where}: field '{key}' is {_short(v)}, too large for a number") from None

    def bool(self, key: str) -> bool:
        v = self.d.get(key)
        if not isinstance(v, bool):
            raise ParseError(f"{self.where}: field '{key}' must be true/false, found {_short(v)}")
        return v

    def str(self, key: str, *, required: bool = True) -> str | None:
        v = self.d.get(key)
        if type(v) is str:
            return v
        if v is None:
            if required:
                raise ParseError(f"{self.where}: missing field '{key}'")
            return None
        if not isinstance(v, str):
            raise ParseError(f"{self.where}: field '{key}' must be a string, found {type(v).__name__}")
        return v

    def list(self, key: str, *, required: bool = False) -> list:
        v = self.d.get(key)
        if v is None:
            if required:
                raise ParseError(f"{self.where}: missing field '{key}'")
            return []
        if not isinstance(v, list):
            raise ParseError(f"{self.where}: field '{key}' must be a list, found {type(v).__name__}")
        return v


TOKEN_FIELDS = ("total_prompt_tokens", "total_completion_tokens", "cache_read_tokens", "cache_creation_tokens")
MERGED_COUNTS = ("api_error_count", "transient_retry_count")


def _make_dumps() -> Callable[[Any], str]:
    """json.dumps(v, ensure_ascii=False) without its per-call set-up: the C encoder, made once
    (values parsed from JSON need neither ``default`` nor the circular-reference check)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # a Python without the C accelerator
        return json.JSONEncoder(ensure_ascii=False).encode
    encode = make(None, None, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)

    def dumps(v: Any) -> str:
        if isinstance(v, str):
            return json.encoder.encode_basestring(v)
        return "".join(encode(v, 0))

    return dumps


_dumps = _make_dumps()


def _scalar_text(v: Any) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else _dumps(v)


def _message_row(m: Any) -> tuple[str, str | None, str | None, str | None]:
    if not isinstance(m, dict):
        return "unknown", None, None, _scalar_text(m)
    role = m.get("role") or m.get("type") or "unknown"
    name = m.get("name")
    tcid = m.get("tool_call_id") or m.get("call_id")
    content = None
    for key in ("content", "output", "parts", "arguments"):
        if m.get(key) is not None:
            content = _scalar_text(m[key])
            break
    return str(role), _scalar_text(name), _scalar_text(tcid), content



class _Builder:
    """Accumulates the rows of one model folder."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        #: table -> rows as tuples in schema order (tool_calls: plus ALIAS_COLUMN)
        self.rows: dict[str, list[tuple]] = {t: [] for t in tschema.TABLES if t != "runs"}
        #: table -> [(file, rows)] in row order
        self.segments: dict[str, list[tuple[str, int]]] = {t: [] for t in self.rows}

    def add_attempt(
        self,
        rec: _Rec,
        sample_id: str,
        attempt: int,
        is_final: bool,
        subtract: dict[str, int] | None,
    ) -> None:
        """Rows of one attempt; ``subtract`` removes failed attempts merged into the final record."""
        where = rec.where
        run_id = self.run_id
        turn_rows, call_rows = self.rows["turns"], self.rows["tool_calls"]
        before_rows = {t: len(rows) for t, rows in self.rows.items()}
        terminated_by = rec.str("terminated_by")
        budget_total = rec.int("budget_total")
        turns = rec.list("turns", required=True)

        budget = budget_total
        cumulative = 0
        seq = 0
        tool_errors = 0
        for pos, raw_turn in enumerate(turns):
            t = _Rec(raw_turn, (rec, "turns", pos))
            role = t.str("role")
            calls = t.list("tool_calls")
            results = t.list("tool_results")
            if len(results) > len(calls):
                raise ParseError(f"{t.where}: {len(results)} tool_results for {len(calls)} tool_calls")
            prompt = t.int("prompt_tokens", 0, wide=True)
            completion = t.int("completion_tokens", 0, wide=True)
            cumulative += prompt + completion
            if results:
                before = t.int("budget_before")
                after = t.int("budget_after")
            else:  # error turns, nudges and the token-limit turn keep the budget as it was
                before = after = budget
            content = t.d.get("content")
            turn_rows.append((
                run_id, sample_id, attempt, pos, role, len(calls), prompt, completion, 0, 0, cumulative,
                before, after, len(content) if isinstance(content, str) else 0, t.float("timestamp", 0.0),
            ))
            running = before
            for ci, raw_call in enumerate(calls):
                c = _Rec(raw_call, (t, "tool_calls", ci))
                tool = c.str("name")
                args = c.d.get("args")
                if args is None:
                    args = {}
                argd = args if isinstance(args, dict) else {}
                if ci < len(results):
                    r = _Rec(results[ci], (t, "tool_results", ci))
                    output = r.str("output")
                    cost = r.int("cost", 0)
                    status = status_of(output)
                    tool_errors += _is_tool_error(output)
                else:
                    output, cost, status = None, 0, "not_executed"
                running -= cost
                paper_id = _scalar_text(argd.get("paper_id"))
                section_query = _scalar_text(argd.get("section")) if tool == "read_section" else None
                # the section index and full output length need the benchmark: resolved in bulk later
                resolved_header = alias = None
                output_chars = len(output) if output is not None else 0
                if tool == "read_section" and status == "ok" and output is not None:
                    m = _HEADER_RE.match(output.split("\n", 1)[0])
                    if m:
                        resolved_header = m.group(1)
                        alias = alias_index(section_query)
                call_rows.append((
                    run_id, sample_id, attempt, pos, ci, seq, tool, "{}" if type(args) is dict and not args else _dumps(args), paper_id,
                    section_query, resolved_header, None,
                    _scalar_text(argd.get("query")) if tool == "search_papers" else None,
                    _scalar_text(argd.get("answer")) if tool == "submit_answer" else None,
                    cost, status, output_chars, running, alias,
                ))
                seq += 1
            budget = after

        totals = {k: rec.int(k, 0 if k.startswith("cache") else None, wide=True) for k in TOKEN_FIELDS}
        counts = {k: rec.int(k, 0) for k in MERGED_COUNTS}
        if subtract:
            for k in (*TOKEN_FIELDS, *MERGED_COUNTS):
                src = totals if k in totals else counts
                if src[k] < subtract.get(k, 0):
                    raise ParseError(
                        f"{where}: {k} is {src[k]}, less than the failed attempts' {subtract[k]}; "
                        f"the reference adds failed attempts into the final record, this file does not"
                    )
                src[k] -= subtract.get(k, 0)
        predicted = rec.str("predicted_answer", required=False)
        reasoning = rec.str("reasoning", required=False)
        self.rows["trajectories"].append((
            run_id, sample_id, attempt, is_final, predicted or None, rec.int("predicted_index"),
            rec.bool("is_correct"), terminated_by, len(turns), rec.int("budget_used"),
            totals["total_prompt_tokens"], totals["total_completion_tokens"], totals["cache_read_tokens"],
            totals["cache_creation_tokens"],
            totals["total_prompt_tokens"] + totals["total_completion_tokens"] + totals["cache_creation_tokens"],
            tool_errors, counts["api_error_count"], counts["transient_retry_count"], rec.float("wall_time_s", 0.0),
            reasoning or None,
            None,  # wait_s: not recorded by the reference harness
            None,  # repaired_chars
        ))
        msg_rows = self.rows["messages"]
        for idx, m in enumerate(rec.list("messages")):
            msg_rows.append((run_id, sample_id, attempt, idx, *_message_row(m)))
        for table, rows in self.rows.items():
            n = len(rows) - before_rows[table]
            if n:
                self.segments[table].append((where, n))

    def tables(self) -> dict[str, pa.Table]:
        out = {}
        for name, rows in self.rows.items():
            schema = task_schema(name)
            try:
                cols = list(zip(*rows)) if rows else [[] for _ in schema]
                out[name] = pa.table([pa.array(c, type=f.type) for c, f in zip(cols, schema)], schema=schema)
            except (pa.ArrowException, UnicodeError, OverflowError) as exc:
                where = self.segments[name][0][0] if self.segments[name] else self.run_id
                raise ParseError(f"{where}: cannot convert the {name} rows: {' '.join(str(exc).split())}") from None
        return out


#: Trajectory-store columns reference JSON has no source for (conform fills them as optional on read).
NOT_FILLED: frozenset[str] = frozenset({"score", "answer_json", "error_type", "error_text"})


def task_schema(name: str) -> pa.Schema:
    """The columns a task fills for run table ``name``, in order (tool_calls: plus ALIAS_COLUMN); the
    shared columns of other benchmarks are left to conform, which derives them as for older files."""
    schema = pa.schema([f for f in tschema.TABLES[name] if f.name not in NOT_FILLED])
    if name == "tool_calls":
        schema = schema.append(pa.field(ALIAS_COLUMN, pa.int32()))
    return schema


def _merged_totals(rec: _Rec) -> dict[str, int]:
    return {k: rec.int(k, 0, wide=k in TOKEN_FIELDS) for k in (*TOKEN_FIELDS, *MERGED_COUNTS)}


#: One sample: its final file and its failed-attempt files (sorted by attempt number).
Sample = tuple[str, list[str]]


def _add_sample(builder: _Builder, path: Path, fails: list[str], out: dict[str, Any]) -> None:
    rec = _Rec(load_json(path), str(path))
    sample_id = rec.str("sample_id")
    assert sample_id is not None
    if sample_id != path.stem:
        raise ParseError(f"{path}: file is named {path.stem!r} but holds sample_id {sample_id!r}")
    out["sample_ids"].append(sample_id)
    if isinstance(rec.d.get("model"), str):
        out["models"].add(rec.d["model"])
    if out["budget_total"] is None:
        out["budget_total"] = rec.int("budget_total")
    if fails and not rec.has("retry_count"):
        raise ParseError(f"{path}: missing field 'retry_count' although {FAILED_DIR}/ holds attempts of it")
    retry_count = rec.int("retry_count", 0)
    # retry_count failed attempts precede the final one; when every attempt failed, the
    # reference also saves the final attempt there (one extra file)
    all_failed = len(fails) == retry_count + 1 and rec.d.get("terminated_by") == "error"
    if len(fails) != retry_count and not all_failed:
        raise ParseError(
            f"{path}: retry_count is {retry_count} but {FAILED_DIR}/ holds {len(fails)} failed "
            f"attempt file(s) for {sample_id!r}; the attempts' tokens cannot be separated"
        )
    subtract: dict[str, int] = defaultdict(int)
    for k, fname in enumerate(fails):
        fpath = Path(fname)
        frec = _Rec(load_json(fpath), fname)
        if frec.str("sample_id") != sample_id:
            raise ParseError(f"{fpath}: holds sample_id {frec.d.get('sample_id')!r}, expected {sample_id!r}")
        for key, v in _merged_totals(frec).items():
            subtract[key] += v
        if k < retry_count:  # an extra file (all attempts failed) duplicates the final attempt
            builder.add_attempt(frec, sample_id, k, False, None)
    builder.add_attempt(rec, sample_id, retry_count, True, subtract if fails else None)


def parse_samples(run_id: str, samples: list[Sample]) -> dict[str, Any]:
    """Parse consecutive samples of one folder (runs in a worker process; see the module docstring).

    Returns ``tables``, ``segments``, ``sample_ids``, ``models``, ``budget_total`` and ``error``
    (the first problem as one line, or None; then nothing else is meaningful).
    """
    builder = _Builder(run_id)
    out: dict[str, Any] = {"sample_ids": [], "models": set(), "budget_total": None, "error": None}
    try:
        for path, fails in samples:
            _add_sample(builder, Path(path), fails, out)
        out["tables"] = builder.tables()
    except ParseError as exc:
        return {"error": str(exc)}
    except RecursionError:
        where = samples[0][0] if samples else run_id
        return {"error": f"{where} (or a file after it): a JSON value is nested too deeply to import"}
    out["segments"] = builder.segments
    return out

