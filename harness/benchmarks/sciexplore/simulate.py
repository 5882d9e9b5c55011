"""Simulated SciExplore systems and the responses file they write (docs/sciexplore.md#simulated-systems).

For the demo and the benchmarks until harness runs of SciExplore exist: systems of the three
paradigms (invented names), each with a skill per task type, an abstention rate, a table-format
compliance and a search-call rate; every (system, replicate) answers every task of a release. The
answers are drawn from the ground truth (right, wrong, abstaining, or a table with missing rows,
wrong cells or a missing column), so every judge verdict and metric has cases. Seeded: same
release, seed and systems give the same file.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .judge import judge_task
from .release import Release, Task
from .tables import parse_table


@dataclass(frozen=True, slots=True)
class SimSystem:
    model: str
    paradigm: str
    #: probability of a correct answer / reference / row per type
    skill: dict[str, float]
    abstain: float
    format_ok: float
    #: mean search calls per task (0 for foundation models)
    searches: float


SYSTEMS: tuple[SimSystem, ...] = (
    SimSystem("quill-base", "foundation", {"T1": 0.15, "T2": 0.08, "T3": 0.08, "T4": 0.30}, 0.30, 0.95, 0.0),
    SimSystem("larch-70b", "foundation", {"T1": 0.20, "T2": 0.05, "T3": 0.05, "T4": 0.25}, 0.20, 0.90, 0.0),
    SimSystem("quill-search", "search", {"T1": 0.30, "T2": 0.40, "T3": 0.30, "T4": 0.45}, 0.15, 0.95, 3.0),
    SimSystem("larch-search", "search", {"T1": 0.25, "T2": 0.30, "T3": 0.20, "T4": 0.35}, 0.25, 0.85, 1.5),
    SimSystem("sounder-dr", "deep_research", {"T1": 0.45, "T2": 0.55, "T3": 0.55, "T4": 0.60}, 0.08, 0.70, 12.0),
    SimSystem("fathom-dr", "deep_research", {"T1": 0.40, "T2": 0.50, "T3": 0.45, "T4": 0.55}, 0.10, 0.90, 9.0),
)
REPLICATES = 4
ABSTENTION = "I could not find the answer."


def _searches(rng: random.Random, system: SimSystem, task: Task, gave_up: bool) -> list[dict[str, Any]]:
    if system.searches <= 0:
        return []
    scale = {"T1": 1.0, "T2": 0.8, "T3": 1.2, "T4": 1.6}[task.type]
    n = 1 + rng.randrange(0, 2) if gave_up else max(0, round(rng.gauss(system.searches * scale, 1.5)))
    tools = ("db_search",) if task.type == "T1" else ("web_search", "scholar_search")
    out: list[dict[str, Any]] = []
    for i in range(n):
        out.append({"tool": rng.choice(tools), "query": f"{task.domain} {task.id} query {i + 1}",
                    "result_chars": rng.randrange(200, 4000)})
        if rng.random() < 0.3:
            out.append({"tool": "open_page", "target": f"doc_{rng.randrange(1, 600):05d}",
                        "result_chars": rng.randrange(500, 9000)})
    return out


def _exact(rng: random.Random, task: Task, p: float) -> str:
    if rng.random() < p:
        return rng.choice((task.answer, f"The answer is {task.answer}.", *task.aliases))
    return f"{task.answer[:-1]}X" if task.type == "T1" else f"A survey of {task.domain} methods"


def _citations(rng: random.Random, task: Task, p: float) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for g in task.groups:
        refs = [{"title": r.title.upper() if rng.random() < 0.2 else r.title, "year": r.year,
                 "authors": list(r.authors)} for r in g.references if rng.random() < p]
        if rng.random() < 0.4:
            refs.append({"title": f"An unrelated study of {task.domain}", "year": 2015})
        out[g.slot] = refs
    return out


def _table(rng: random.Random, task: Task, p: float, fmt: float) -> str | dict[str, Any]:
    columns = list(task.columns)
    if rng.random() > fmt and len(columns) > 2:
        columns.pop(rng.randrange(1, len(columns)))  # structural non-compliance: a column is dropped
    rows = []
    for gold in task.rows:
        if rng.random() > p + 0.2:
            continue
        rows.append({c: gold[c] if rng.random() < p + 0.3 else "n/a" for c in columns})
    if rng.random() < 0.25:
        return {"columns": columns, "rows": rows}
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(r[c] for c in columns) + " |" for r in rows]
    return "Here is the comparison table.\n\n" + "\n".join(lines) + "\n\nValues come from the cited papers."


def respond(system: SimSystem, replicate: int, task: Task, seed: int) -> dict[str, Any]:
    rng = random.Random(f"{seed}:{system.model}:{system.paradigm}:{replicate}:{task.id}")
    p = min(1.0, max(0.0, system.skill[task.type] + rng.gauss(0, 0.04)))
    gave_up = rng.random() < system.abstain
    status, answer = "answered", None
    if rng.random() < 0.01:
        status = "error"
    elif gave_up:
        status, answer = ("not_attempted", ABSTENTION) if task.type != "T4" else ("not_attempted", None)
    elif task.type in ("T1", "T2"):
        answer = _exact(rng, task, p)
    elif task.type == "T3":
        answer = _citations(rng, task, p)
    else:
        answer = _table(rng, task, p, system.format_ok)
    trace = _searches(rng, system, task, gave_up)
    return {"model": system.model, "paradigm": system.paradigm, "replicate": replicate, "simulated": True,
            "task_id": task.id,
            "status": status, "answer": answer, "trace": trace,
            "prompt_tokens": 800 + 1200 * len(trace) + rng.randrange(0, 400),
            "completion_tokens": 150 + rng.randrange(0, 600), "wall_time_s": round(2 + 6 * len(trace) * rng.random(), 2)}


def write_responses(path: Path, release: Release, seed: int = 0, systems: tuple[Any, ...] = SYSTEMS,
                    replicates: int = REPLICATES,
                    answer: Callable[[Any, int, Task, int], dict[str, Any]] = respond) -> int:
    """Write one line per (system, replicate, task), each ``answer(system, replicate, task, seed)``;
    returns the number of lines."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for system in systems:
            for rep in range(replicates):
                for task in release.tasks:
                    fh.write(json.dumps(answer(system, rep, task, seed), ensure_ascii=False,
                                        separators=(",", ":")) + "\n")
                    n += 1
    return n


#: the simulated second judge of the demo: stricter than normalized-match on some units
SIM_JUDGE = "sim-strict-judge"


def second_opinion(rng: random.Random, verdict: str) -> str:
    """A stricter judge: rejects 15% of the correct verdicts, accepts 3% of the incorrect ones."""
    if verdict == "correct" and rng.random() < 0.15:
        return "incorrect"
    if verdict == "incorrect" and rng.random() < 0.03:
        return "correct"
    return verdict


def write_judgments(path: Path, release: Release, responses: Path, seed: int = 0) -> int:
    """A judgments file of SIM_JUDGE for every unit normalized-match judges in ``responses``."""
    n = 0
    with Path(responses).open(encoding="utf-8") as src, Path(path).open("w", encoding="utf-8", newline="\n") as fh:
        for line in src:
            r = json.loads(line)
            task = release.by_id[r["task_id"]]
            answer = parse_table(r["answer"]) if task.type == "T4" else r["answer"]
            rng = random.Random(f"{seed}:judge:{r['model']}:{r['paradigm']}:{r['replicate']}:{task.id}")
            for v in judge_task(task, r["status"], answer):
                fh.write(json.dumps({
                    "model": r["model"], "paradigm": r["paradigm"], "replicate": r["replicate"], "task_id": task.id,
                    "unit": v.unit, "slot": v.slot, "ref_index": v.ref_index, "row_key": v.row_key, "column": v.column,
                    "verdict": second_opinion(rng, v.verdict), "judge": SIM_JUDGE, "judge_version": "simulated-1",
                    "rationale": "simulated judge"}, ensure_ascii=False, separators=(",", ":")) + "\n")
                n += 1
    return n
