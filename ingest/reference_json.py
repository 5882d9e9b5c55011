"""Import reference-harness trajectory JSON (the reference harness) into the raw run tables.

``--reference-json`` takes ``experiments/`` (every model folder below it) or one ``<model>/``
folder. Each ``<sample_id>.json`` (``summary.json`` skipped as a trajectory, read for metadata) and
each ``_failed_attempts/<sample_id>.attempt_<k>.json`` becomes rows of raw.trajectories, turns,
tool_calls and messages; each folder becomes one raw.runs row. What the reference does not record
(status, resolved section, output length) is derived from the recorded outputs; see docs/ingest.md.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa

from agenthop.schemas import trajectory as tschema

from .conform import IngestError, conform
from .runs import Checks, RunData, check_benchmark, validate_table

BACKEND = "reference-json"
SUMMARY = "summary.json"
FAILED_DIR = "_failed_attempts"
FAILED_RE = re.compile(r"^(.+)\.attempt_(\d+)\.json$")

#: Reference defaults (the reference harness), used when summary.json has no config.
DEFAULT_BUDGET = 30
DEFAULT_MAX_TURNS = 20
DEFAULT_MAX_TOTAL_TOKENS = 200_000

_HEADER_RE = re.compile(r"^=== (.*) ===$")
_ALIAS_RE = re.compile(r"^\(?([A-Za-z]{1,3})\)?$")


# --------------------------------------------------------------------------------------------
# discovery and identity


def _sample_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if p.name != SUMMARY and p.is_file())


def discover(path: Path) -> list[Path]:
    """``path`` if it is a model folder (holds trajectory JSON), else its model subfolders."""
    if not path.exists():
        raise IngestError(f"--reference-json {path}: no such directory")
    if not path.is_dir():
        raise IngestError(f"--reference-json {path}: not a directory")
    if _sample_files(path):
        return [path]
    found = sorted(
        d
        for d in path.iterdir()
        if d.is_dir() and not d.name.startswith((".", "_")) and _sample_files(d)
    )
    if not found:
        raise IngestError(f"--reference-json {path}: no <sample_id>.json trajectory files found")
    return found


def condition_of(folder_name: str) -> str:
    return "closed_book" if folder_name.endswith("_noretrieval") else "full"


def run_id_of(folder_name: str) -> str:
    """Stable per model folder and condition, so a changed folder replaces its previous import."""
    return f"ref__{folder_name}__{condition_of(folder_name)}"


def _all_files(folder: Path) -> list[Path]:
    files = sorted(p for p in folder.glob("*.json") if p.is_file())
    fdir = folder / FAILED_DIR
    if fdir.is_dir():
        files += sorted(p for p in fdir.glob("*.json") if p.is_file())
    return files


def content_sha256(folder: Path) -> str:
    h = hashlib.sha256()
    for p in _all_files(folder):
        h.update(p.relative_to(folder).as_posix().encode() + b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def read_json(path: Path) -> Any:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IngestError(f"{path}: not valid UTF-8 (byte offset {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(f"{path}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


# --------------------------------------------------------------------------------------------
# benchmark lookups for resolved sections


@dataclass(slots=True)
class SectionInfo:
    index: int
    header: str | None
    n_chars: int


class BenchIndex:
    """Graph node -> arXiv id per sample, and the section list of each arXiv paper."""

    def __init__(self, nodes: pa.Table, sections: pa.Table) -> None:
        self._arxiv: dict[tuple[str, str], str] = {}
        for s, p, a in zip(
            nodes.column("sample_id").to_pylist(),
            nodes.column("paper_id").to_pylist(),
            nodes.column("arxiv_id").to_pylist(),
        ):
            if a:
                self._arxiv[(s, p)] = a
        self._sections: dict[str, list[SectionInfo]] = defaultdict(list)
        for a, i, h, n in zip(
            sections.column("arxiv_id").to_pylist(),
            sections.column("section_index").to_pylist(),
            sections.column("header").to_pylist(),
            sections.column("n_chars").to_pylist(),
        ):
            self._sections[a].append(SectionInfo(i, h, n))
        for lst in self._sections.values():
            lst.sort(key=lambda s: s.index)

    def arxiv_id(self, sample_id: str, paper_id: str) -> str | None:
        return self._arxiv.get((sample_id, paper_id))

    def sections(self, arxiv_id: str) -> list[SectionInfo]:
        return self._sections.get(arxiv_id, [])


def _alias_index(query: str) -> int | None:
    m = _ALIAS_RE.match(query.strip())
    if not m:
        return None
    n = 0
    for ch in m.group(1).upper():
        n = n * 26 + (ord(ch) - 64)
    return n - 1


def resolve_section(
    bench: BenchIndex, sample_id: str, paper_id: str | None, header: str, query: str | None
) -> SectionInfo | None:
    """The section of ``paper_id`` whose displayed header is ``header`` (query breaks ties)."""
    if paper_id is None:
        return None
    arxiv = bench.arxiv_id(sample_id, paper_id)
    if arxiv is None:
        return None
    secs = bench.sections(arxiv)
    cands = [s for s in secs if (s.header if s.header else f"Section {s.index + 1}") == header]
    if len(cands) <= 1:
        return cands[0] if cands else None
    if query is not None:
        ai = _alias_index(query)
        for s in cands:
            if s.index == ai:
                return s
    return cands[0]


# --------------------------------------------------------------------------------------------
# status from recorded outputs


def status_of(output: str) -> str:
    """Call status from the reference's output text (the reference harness)."""
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
    """The reference's tool-error rule (the reference harness, dispatcher errors)."""
    return output.startswith(("Unknown tool", "Error calling", "Tool '"))


# --------------------------------------------------------------------------------------------
# one trajectory record


class _Rec:
    """Typed access to one JSON object, with errors naming the file and field."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise IngestError(f"{where}: expected a JSON object, found {type(data).__name__}")
        self.d = data
        self.where = where

    def has(self, key: str) -> bool:
        return key in self.d and self.d[key] is not None

    def int(self, key: str, default: int | None = None) -> int:
        v = self.d.get(key)
        if v is None:
            if default is None:
                raise IngestError(f"{self.where}: missing field '{key}'")
            return default
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
            raise IngestError(f"{self.where}: field '{key}' must be an integer, found {v!r}")
        return int(v)

    def float(self, key: str, default: float | None = None) -> float:
        v = self.d.get(key)
        if v is None:
            if default is None:
                raise IngestError(f"{self.where}: missing field '{key}'")
            return default
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise IngestError(f"{self.where}: field '{key}' must be a number, found {v!r}")
        return float(v)

    def bool(self, key: str) -> bool:
        v = self.d.get(key)
        if not isinstance(v, bool):
            raise IngestError(f"{self.where}: field '{key}' must be true/false, found {v!r}")
        return v

    def str(self, key: str, *, required: bool = True) -> str | None:
        v = self.d.get(key)
        if v is None:
            if required:
                raise IngestError(f"{self.where}: missing field '{key}'")
            return None
        if not isinstance(v, str):
            raise IngestError(f"{self.where}: field '{key}' must be a string, found {type(v).__name__}")
        return v

    def list(self, key: str, *, required: bool = False) -> list:
        v = self.d.get(key)
        if v is None:
            if required:
                raise IngestError(f"{self.where}: missing field '{key}'")
            return []
        if not isinstance(v, list):
            raise IngestError(f"{self.where}: field '{key}' must be a list, found {type(v).__name__}")
        return v


TOKEN_FIELDS = ("total_prompt_tokens", "total_completion_tokens", "cache_read_tokens", "cache_creation_tokens")
MERGED_COUNTS = ("api_error_count", "transient_retry_count")


def _scalar_text(v: Any) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


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

    def __init__(self, run_id: str, bench: BenchIndex | None) -> None:
        self.run_id = run_id
        self.bench = bench
        self.rows: dict[str, dict[str, list]] = {
            t: {f.name: [] for f in s} for t, s in tschema.TABLES.items() if t != "runs"
        }

    def _add(self, table: str, **values: Any) -> None:
        cols = self.rows[table]
        for k, v in values.items():
            cols[k].append(v)

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
        terminated_by = rec.str("terminated_by")
        if terminated_by not in tschema.TERMINATIONS:
            raise IngestError(f"{where}: unknown terminated_by {terminated_by!r}")
        budget_total = rec.int("budget_total")
        turns = rec.list("turns", required=True)

        budget = budget_total
        cumulative = 0
        seq = 0
        tool_errors = 0
        for pos, raw_turn in enumerate(turns):
            t = _Rec(raw_turn, f"{where}: turns[{pos}]")
            role = t.str("role")
            if role not in tschema.TURN_ROLES:
                raise IngestError(f"{t.where}: unknown role {role!r}")
            calls = t.list("tool_calls")
            results = t.list("tool_results")
            if len(results) > len(calls):
                raise IngestError(f"{t.where}: {len(results)} tool_results for {len(calls)} tool_calls")
            prompt = t.int("prompt_tokens", 0)
            completion = t.int("completion_tokens", 0)
            cumulative += prompt + completion
            if results:
                before = t.int("budget_before")
                after = t.int("budget_after")
            else:  # error turns, nudges and the token-limit turn keep the budget as it was
                before = after = budget
            content = t.d.get("content")
            self._add(
                "turns",
                run_id=self.run_id,
                sample_id=sample_id,
                attempt=attempt,
                turn=pos,
                role=role,
                n_tool_calls=len(calls),
                prompt_tokens=prompt,
                completion_tokens=completion,
                cache_read_tokens=0,
                cache_creation_tokens=0,
                cumulative_tokens=cumulative,
                budget_before=before,
                budget_after=after,
                content_chars=len(content) if isinstance(content, str) else 0,
                t_offset_s=t.float("timestamp", 0.0),
            )
            running = before
            for ci, raw_call in enumerate(calls):
                c = _Rec(raw_call, f"{t.where}.tool_calls[{ci}]")
                tool = c.str("name")
                args = c.d.get("args")
                if args is None:
                    args = {}
                argd = args if isinstance(args, dict) else {}
                if ci < len(results):
                    r = _Rec(results[ci], f"{t.where}.tool_results[{ci}]")
                    output = r.str("output")
                    cost = r.int("cost", 0)
                    status = status_of(output)
                    tool_errors += _is_tool_error(output)
                else:
                    output, cost, status = None, 0, "not_executed"
                running -= cost
                paper_id = _scalar_text(argd.get("paper_id"))
                section_query = _scalar_text(argd.get("section")) if tool == "read_section" else None
                resolved_header = resolved_index = None
                output_chars = len(output) if output is not None else 0
                if tool == "read_section" and status == "ok" and output is not None:
                    m = _HEADER_RE.match(output.split("\n", 1)[0])
                    if m:
                        resolved_header = m.group(1)
                        if self.bench is not None:
                            sec = resolve_section(self.bench, sample_id, paper_id, resolved_header, section_query)
                            if sec is not None:
                                resolved_index = sec.index
                                output_chars = len(resolved_header) + 10 + sec.n_chars
                self._add(
                    "tool_calls",
                    run_id=self.run_id,
                    sample_id=sample_id,
                    attempt=attempt,
                    turn=pos,
                    call_index=ci,
                    seq=seq,
                    tool=tool,
                    args_json=json.dumps(args, ensure_ascii=False),
                    paper_id=paper_id,
                    section_query=section_query,
                    resolved_header=resolved_header,
                    resolved_section_index=resolved_index,
                    search_query=_scalar_text(argd.get("query")) if tool == "search_papers" else None,
                    answer=_scalar_text(argd.get("answer")) if tool == "submit_answer" else None,
                    cost=cost,
                    status=status,
                    output_chars=output_chars,
                    budget_after=running,
                )
                seq += 1
            budget = after

        totals = {k: rec.int(k, 0 if k.startswith("cache") else None) for k in TOKEN_FIELDS}
        counts = {k: rec.int(k, 0) for k in MERGED_COUNTS}
        if subtract:
            for k in (*TOKEN_FIELDS, *MERGED_COUNTS):
                src = totals if k in totals else counts
                if src[k] < subtract.get(k, 0):
                    raise IngestError(
                        f"{where}: {k} is {src[k]}, less than the failed attempts' {subtract[k]}; "
                        f"the reference adds failed attempts into the final record, this file does not"
                    )
                src[k] -= subtract.get(k, 0)
        predicted = rec.str("predicted_answer", required=False)
        reasoning = rec.str("reasoning", required=False)
        self._add(
            "trajectories",
            run_id=self.run_id,
            sample_id=sample_id,
            attempt=attempt,
            is_final=is_final,
            predicted_answer=predicted or None,
            predicted_index=rec.int("predicted_index"),
            is_correct=rec.bool("is_correct"),
            terminated_by=terminated_by,
            total_turns=len(turns),
            budget_used=rec.int("budget_used"),
            total_prompt_tokens=totals["total_prompt_tokens"],
            total_completion_tokens=totals["total_completion_tokens"],
            cache_read_tokens=totals["cache_read_tokens"],
            cache_creation_tokens=totals["cache_creation_tokens"],
            total_tokens=totals["total_prompt_tokens"]
            + totals["total_completion_tokens"]
            + totals["cache_creation_tokens"],
            tool_errors=tool_errors,
            api_error_count=counts["api_error_count"],
            transient_retry_count=counts["transient_retry_count"],
            wall_time_s=rec.float("wall_time_s", 0.0),
            reasoning=reasoning or None,
        )
        for idx, m in enumerate(rec.list("messages")):
            role, name, tcid, content = _message_row(m)
            self._add(
                "messages",
                run_id=self.run_id,
                sample_id=sample_id,
                attempt=attempt,
                idx=idx,
                role=role,
                name=name,
                tool_call_id=tcid,
                content=content,
            )

    def tables(self, where: str) -> dict[str, pa.Table]:
        out = {}
        for name, cols in self.rows.items():
            schema = tschema.TABLES[name]
            try:
                t = pa.table(cols, schema=schema)
            except (pa.ArrowException, UnicodeError) as exc:
                raise IngestError(f"{where}: cannot build {name} rows: {exc}") from None
            out[name] = conform(t, schema, f"{where} ({name})")
        return out


def _merged_totals(rec: _Rec) -> dict[str, int]:
    return {k: rec.int(k, 0) for k in (*TOKEN_FIELDS, *MERGED_COUNTS)}


def _parse_time(v: Any) -> datetime | None:
    if not isinstance(v, str) or not v:
        return None
    try:
        dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _cfg_int(config: dict[str, Any], key: str, default: int, where: Path) -> int:
    v = config.get(key)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        raise IngestError(f"{where}: config.{key} must be an integer, found {v!r}")
    return v


def read_folder(
    folder: Path,
    checks: Checks,
    loaded_hashes: dict[str, str],
    bench: Callable[[], BenchIndex | None],
) -> RunData:
    """Convert one model folder to a validated RunData (or recognise it as unchanged).

    ``bench`` returns the section lookup of the loaded benchmark (built only when needed).
    """
    folder = folder.resolve()
    name = folder.name
    run_id = run_id_of(name)
    sha = content_sha256(folder)
    summary: dict[str, Any] = {}
    summary_path = folder / SUMMARY
    if summary_path.is_file():
        s = read_json(summary_path)
        if not isinstance(s, dict):
            raise IngestError(f"{summary_path}: expected a JSON object")
        summary = s
    fingerprint = summary.get("fingerprint") if isinstance(summary.get("fingerprint"), dict) else {}
    config = summary.get("config") if isinstance(summary.get("config"), dict) else {}
    bsha = fingerprint.get("benchmark_sha256") or checks.benchmark_sha256
    if loaded_hashes.get(run_id) == sha:
        return RunData(BACKEND, str(folder), run_id, sha, False, str(bsha or ""))
    if not bsha:
        raise IngestError(f"{folder}: no benchmark is loaded; pass --benchmark DIR to load one first")
    check_benchmark(run_id, str(bsha), checks, str(summary_path if summary else folder))

    failed: dict[str, list[tuple[int, Path]]] = defaultdict(list)
    fdir = folder / FAILED_DIR
    if fdir.is_dir():
        for p in sorted(fdir.glob("*.json")):
            m = FAILED_RE.match(p.name)
            if not m:
                raise IngestError(f"{p}: not named <sample_id>.attempt_<k>.json")
            failed[m.group(1)].append((int(m.group(2)), p))

    builder = _Builder(run_id, bench())
    known = set(checks.sample_ids.to_pylist()) if checks.sample_ids is not None else None
    models: set[str] = set()
    budget_total: int | None = None
    for path in _sample_files(folder):
        rec = _Rec(read_json(path), str(path))
        sample_id = rec.str("sample_id")
        assert sample_id is not None
        if sample_id != path.stem:
            raise IngestError(f"{path}: file is named {path.stem!r} but holds sample_id {sample_id!r}")
        if known is not None and sample_id not in known:
            raise IngestError(f"{path}: sample id {sample_id!r} is not in the loaded benchmark's items")
        if isinstance(rec.d.get("model"), str):
            models.add(rec.d["model"])
        if budget_total is None:
            budget_total = rec.int("budget_total")
        fails = sorted(failed.pop(sample_id, []))
        if fails and not rec.has("retry_count"):
            raise IngestError(f"{path}: missing field 'retry_count' although {FAILED_DIR}/ holds attempts of it")
        retry_count = rec.int("retry_count", 0)
        # retry_count failed attempts precede the final one; when every attempt failed, the
        # reference also saves the final attempt there (one extra file)
        all_failed = len(fails) == retry_count + 1 and rec.d.get("terminated_by") == "error"
        if len(fails) != retry_count and not all_failed:
            raise IngestError(
                f"{path}: retry_count is {retry_count} but {FAILED_DIR}/ holds {len(fails)} failed "
                f"attempt file(s) for {sample_id!r}; the attempts' tokens cannot be separated"
            )
        subtract: dict[str, int] = defaultdict(int)
        for k, (_, fpath) in enumerate(fails):
            frec = _Rec(read_json(fpath), str(fpath))
            if frec.str("sample_id") != sample_id:
                raise IngestError(f"{fpath}: holds sample_id {frec.d.get('sample_id')!r}, expected {sample_id!r}")
            for key, v in _merged_totals(frec).items():
                subtract[key] += v
            if k < retry_count:  # an extra file (all attempts failed) duplicates the final attempt
                builder.add_attempt(frec, sample_id, k, False, None)
        builder.add_attempt(rec, sample_id, retry_count, True, subtract if fails else None)

    tables = builder.tables(str(folder))
    for tname, t in tables.items():
        validate_table(tname, t, run_id, checks, f"{folder} ({tname})")
    runs = pa.table(
        {
            "run_id": [run_id],
            "model": [name],
            "backend": [BACKEND],
            "condition": [condition_of(name)],
            "replicate": [0],
            "benchmark_sha256": [str(bsha)],
            "budget_total": [_cfg_int(config, "budget", budget_total or DEFAULT_BUDGET, summary_path)],
            "max_turns": [_cfg_int(config, "max_turns", DEFAULT_MAX_TURNS, summary_path)],
            "max_total_tokens": [
                _cfg_int(config, "max_total_tokens", DEFAULT_MAX_TOTAL_TOKENS, summary_path)
            ],
            "harness_version": [f"reference:{fingerprint.get('schema_version') or 'unknown'}"],
            "config_json": [
                json.dumps(
                    {"fingerprint": fingerprint, "config": config, "file_models": sorted(models)},
                    ensure_ascii=False,
                    sort_keys=True,
                )
            ],
            "family": [None],
            "tier": [None],
            "started_at": [_parse_time(fingerprint.get("started_at"))],
            "finished_at": [_parse_time(fingerprint.get("completed_at"))],
        },
        schema=tschema.RUNS,
    )
    tables = {"runs": runs, **tables}
    return RunData(
        BACKEND,
        str(folder),
        run_id,
        sha,
        False,
        str(bsha),
        tables,
        {k: v.num_rows for k, v in tables.items()},
    )
