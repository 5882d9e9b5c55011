"""Read SciExplore judgments files (docs/sciexplore.md#judgments-files): verdicts of other judges.

One verdict per line: the run (``model``, ``paradigm``, ``replicate`` or its ``run_id``), ``task_id``,
``unit`` and the unit's key (``slot`` + ``ref_index`` for a citation, ``row_key`` + ``column`` for a
cell), ``verdict``, ``judge``, ``judge_version``, ``rationale``. A verdict for a unit that does not
exist (no such run, task, slot, predicted reference, ground-truth row or column) refuses the file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agenthop.harness.benchmarks.sciexplore.judge import judge_name_problem
from agenthop.harness.benchmarks.sciexplore.release import ReleaseError, Task, Where, read_jsonl, slot_name
from agenthop.schemas.sciexplore import UNITS, VERDICTS

from ..conform import IngestError
from .sciexplore_responses import _run_fields, responses_run_id

UNIT_TYPES = {"answer": ("T1", "T2"), "citation": ("T3",), "cell": ("T4",)}

#: (run_id, task_id) -> the stored answer_json (None when the answer did not parse), or a KeyError
AnswerLookup = Callable[[str, str], Any]


def judgment_key(row: dict[str, Any]) -> tuple:
    return (row["run_id"], row["task_id"], row["unit"], row["slot"], row["ref_index"], row["row_key"],
            row["column"], row["judge"])


def _unit(w: Where, obj: dict, task: Task, answer: Any) -> dict[str, Any]:
    unit = w.text(obj, "unit")
    if unit not in UNITS:
        raise w.fail("unit", f"must be one of {', '.join(UNITS)}, got {unit!r}")
    if task.type not in UNIT_TYPES[unit]:
        raise w.fail("unit", f"task {task.id!r} is {task.type}: it has no {unit!r} units")
    key: dict[str, Any] = {"unit": unit, "slot": None, "ref_index": None, "row_key": None, "column": None}
    if unit == "citation":
        slot = slot_name(w.text(obj, "slot"))
        if slot not in {g.slot for g in task.groups}:
            raise w.fail("slot", f"task {task.id!r} has no slot {slot!r}")
        idx = w.get(obj, "ref_index", int)
        n = len((answer or {}).get(slot) or []) if isinstance(answer, dict) else 0
        if not 0 <= idx < n:
            raise w.fail("ref_index", f"the system gave {n} reference(s) for {slot} of {task.id!r}: "
                         f"no predicted reference {idx}")
        key.update(slot=slot, ref_index=idx)
    elif unit == "cell":
        row_key = w.text(obj, "row_key")
        if row_key not in {r[task.primary_key] for r in task.rows}:
            raise w.fail("row_key", f"{row_key!r} is not a primary key of {task.id!r}'s ground-truth rows")
        column = w.text(obj, "column")
        if column not in task.columns:
            raise w.fail("column", f"{column!r} is not a column of {task.id!r}")
        key.update(row_key=row_key, column=column)
    return key


def read_judgments(paths: list[Path], tasks: dict[str, Task], benchmark_sha256: str, known_runs: set[str],
                   answer_of: AnswerLookup) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The verdict rows of every file, and the number of verdicts per file."""
    rows: list[dict[str, Any]] = []
    per_file: dict[str, int] = {}
    first: dict[tuple, str] = {}
    for path in paths:
        try:
            for no, obj in read_jsonl(path):
                w = Where(path, no)
                if "run_id" in obj:
                    run_id = w.text(obj, "run_id")
                else:
                    run_id = responses_run_id(*_run_fields(w, obj), benchmark_sha256)
                if run_id not in known_runs:
                    raise w.fail("run_id" if "run_id" in obj else "model",
                                 f"no SciExplore run {run_id!r} is loaded (load its responses first)")
                tid = w.text(obj, "task_id")
                task = tasks.get(tid)
                if task is None:
                    raise w.fail("task_id", f"unknown task id {tid!r}")
                try:
                    answer = answer_of(run_id, tid)
                except KeyError:
                    raise w.fail("task_id", f"run {run_id!r} has no response to task {tid!r}") from None
                key = _unit(w, obj, task, answer)
                verdict = w.text(obj, "verdict")
                if verdict not in VERDICTS:
                    raise w.fail("verdict", f"must be one of {', '.join(VERDICTS)}, got {verdict!r}")
                judge = w.get(obj, "judge", str)
                problem = judge_name_problem(judge)
                if problem is not None:
                    raise w.fail("judge", problem)
                row = {"run_id": run_id, "task_id": tid, **key, "verdict": verdict, "judge": judge,
                       "judge_version": w.text(obj, "judge_version"),
                       "rationale": w.get(obj, "rationale", str, nullable=True)}
                k = judgment_key(row)
                if k in first:
                    raise w.fail("unit", f"the same unit and judge is already given at {first[k]}")
                first[k] = f"{path}:{no}"
                rows.append(row)
                per_file[str(path)] = per_file.get(str(path), 0) + 1
        except ReleaseError as exc:
            raise IngestError(str(exc)) from None
    return rows, per_file
