"""`agenthop-judge`: LLM verdicts for the loaded SciExplore runs, cached by prompt hash, resumable.

Reads the release and the responses from the warehouse, asks the model one prompt per unit
(llm_judge.py) through the harness's backends, appends every reply to a cache file as it arrives
(an interrupted judge resumes where it stopped: cached prompts are not asked again), then loads the
verdicts like a judgments file, in one ingest transaction.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from agenthop.harness.ask import ask_all
from agenthop.harness.errors import AgentHopError
from agenthop.harness.panel import ModelSpec

from .judge import judge_name_problem
from .llm_judge import SYSTEM_PROMPT, Unit, judge_version, prompt_key, read_verdict, units
from .release import Task, Where, json_problem
from .tables import Table

@dataclass(slots=True)
class JudgeResult:
    units: int = 0
    asked: int = 0
    cached: int = 0
    unreadable: int = 0
    failed: list[str] = field(default_factory=list)
    loaded: str = ""


def _parsed(task: Task, answer_json: str | None) -> Any:
    if answer_json is None:
        return None
    obj = json.loads(answer_json)
    if task.type == "T4":
        return Table(columns=tuple(obj["columns"]), rows=tuple(obj["rows"]))
    return obj


def collect(db: Path, run_ids: list[str] | None) -> tuple[list[tuple[str, str, Unit]], dict[str, tuple]]:
    """(run_id, status, unit) for every unit of the selected runs, and run_id -> (model, paradigm, replicate)."""
    from agenthop.ingest.sources.sciexplore_release import loaded_release

    if not db.exists():
        raise AgentHopError(f"warehouse {db} does not exist: load SciExplore responses with agenthop-ingest first")
    with duckdb.connect(str(db), read_only=True) as con:
        loaded = loaded_release(con)
        if loaded is None:
            raise AgentHopError(f"warehouse {db} holds no SciExplore release: run agenthop-ingest --benchmark DIR first")
        tasks = loaded[1]
        runs = {r[0]: r[1:] for r in con.execute(
            "SELECT run_id, model, paradigm, replicate FROM raw.sciexplore_runs ORDER BY run_id").fetchall()}
        if run_ids:
            unknown = sorted(set(run_ids) - set(runs))
            if unknown:
                raise AgentHopError(f"--run {unknown[0]}: no such SciExplore run (loaded: {', '.join(runs) or 'none'})")
            runs = {r: runs[r] for r in run_ids}
        rows = con.execute("SELECT run_id, task_id, status, answer_text, answer_json FROM raw.sciexplore_responses "
                           "ORDER BY run_id, task_id").fetchall()
    out = []
    for run_id, tid, status, text, aj in rows:
        if run_id in runs:
            task = tasks[tid]
            out += [(run_id, status, u) for u in units(task, status, text, _parsed(task, aj))]
    return out, runs


def read_cache(path: Path) -> dict[str, str]:
    """The cached replies (prompt key -> reply) of a cache file; a line that does not parse (one cut short
    by an interruption) is skipped and asked again. A file that is not UTF-8, or a line that is not an
    object of two strings ``key`` and ``reply``, is an error naming the file, line and field."""
    cache: dict[str, str] = {}
    if not path.exists():
        return cache
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise AgentHopError(f"{path}: judge cache is not UTF-8 ({exc.reason} at byte {exc.start}); "
                            "delete it or give another --cache") from None
    except OSError as exc:
        raise AgentHopError(f"{path}: cannot read the judge cache ({exc.strerror or exc})") from None
    for no, line in enumerate(text.splitlines(), 1):
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a line cut short by an interruption: asked again
        w = Where(path, no)
        if not isinstance(rec, dict):
            raise AgentHopError(f"{path}:{no}: a judge cache line is an object {{key, reply}}, got "
                                f"{type(rec).__name__}")
        bad = json_problem(rec)
        if bad is not None:
            raise w.fail(*bad)
        cache[w.get(rec, "key", str)] = w.get(rec, "reply", str)
    return cache


def run_judge(db: Path, spec: ModelSpec, *, judge_name: str | None = None, cache: Path | None = None,
              run_ids: list[str] | None = None, concurrency: int = 4,
              progress: Callable[[int, int], None] | None = None) -> JudgeResult:
    from agenthop.ingest.progress import Progress
    from agenthop.ingest.sources.sciexplore_ingest import run_sciexplore_ingest

    name = judge_name if judge_name is not None else f"llm:{spec.provider_model}"
    problem = judge_name_problem(name)
    if problem is not None:  # before any call is paid for
        raise AgentHopError(f"judge name {name[:60]!r}{'...' if len(name) > 60 else ''}: {problem}"
                            + ("" if judge_name is not None else " (name the judge with --judge-name)"))
    version = judge_version(spec.provider_model)
    cache_path = cache or db.with_name(db.name + ".judge-cache.jsonl")
    todo, runs = collect(db, run_ids)
    result = JudgeResult(units=len(todo))
    cached = read_cache(cache_path)
    keys: dict[int, str] = {}
    prompts: dict[str, str] = {}
    for i, (_, status, u) in enumerate(todo):
        if u.unit == "answer" and status == "not_attempted":
            continue  # the system itself declined: no call
        k = prompt_key(spec.provider_model, u.prompt)
        keys[i] = k
        if k not in cached:
            prompts.setdefault(k, u.prompt)
    result.cached = len({k for k in keys.values() if k in cached})
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress:
            progress(done[0], len(prompts))

    if prompts:
        asked = ask_all(spec, SYSTEM_PROMPT, prompts, cache_path, concurrency=concurrency, on_done=tick,
                        condition="judge")
        result.failed = asked.failed
        cached.update(asked.replies)
        result.asked = len(asked.replies)
    lines = []
    for i, (run_id, status, u) in enumerate(todo):
        if i not in keys:
            verdict, rationale = "not_attempted", "status not_attempted"
        else:
            reply = cached.get(keys[i])
            if reply is None:
                continue  # the call failed: judged on the next run
            verdict = read_verdict(reply)
            if verdict is None:
                result.unreadable += 1
                continue
            verdict, rationale = verdict.lower(), reply.strip()[:300]
        model, paradigm, replicate = runs[run_id]
        lines.append({"run_id": run_id, "task_id": u.task_id, "unit": u.unit, "slot": u.slot, "ref_index": u.ref_index,
                      "row_key": u.row_key, "column": u.column, "verdict": verdict, "judge": name,
                      "judge_version": version, "rationale": rationale})
    if lines:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"{re.sub(r'[^A-Za-z0-9._-]', '_', name)[:80]}.jsonl"
            path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
            result.loaded = run_sciexplore_ingest(db, judgments=(path,), progress=Progress(quiet=True)).summary()
    return result
