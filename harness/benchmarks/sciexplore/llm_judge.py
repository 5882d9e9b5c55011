"""An LLM judge for SciExplore answers (`agenthop-judge`, docs/sciexplore.md#llm-judge).

The units are the ones the normalized-match judge judges (a T1/T2 answer; each predicted T3
reference; each cell of every ground-truth T4 row a predicted row matched by primary key), so the
two judges' verdicts line up for the agreement mart; the LLM decides whether the content is right.
One prompt per unit, answered with one word. Pure: prompts and the reading of replies; calling a
model and caching live in ``judge_run``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from .judge import judge_task
from .normalize import normalize
from .release import Task
from .tables import Table

PROMPT_VERSION = "sciexplore-judge-1"
SYSTEM_PROMPT = (
    "You grade answers of a scientific information-seeking benchmark against the ground truth. "
    "Judge meaning, not surface form: formatting, casing, abbreviations and harmless extra words do not "
    "matter; a different entity, value, paper or year does. Reply with exactly one word: CORRECT, "
    "INCORRECT, or NOT_ATTEMPTED (only when the answer declines or gives no answer)."
)
_VERDICT_RE = re.compile(r"\b(NOT[_ ]ATTEMPTED|INCORRECT|CORRECT)\b", re.I)


@dataclass(frozen=True, slots=True)
class Unit:
    task_id: str
    unit: str
    prompt: str
    slot: str | None = None
    ref_index: int | None = None
    row_key: str | None = None
    column: str | None = None


def judge_version(model_id: str) -> str:
    """What identifies this judge's verdicts: prompt version, prompt hash and the model id."""
    digest = hashlib.sha256(SYSTEM_PROMPT.encode()).hexdigest()[:12]
    return f"{PROMPT_VERSION} prompt-sha256:{digest} model:{model_id}"


def prompt_key(model_id: str, prompt: str) -> str:
    """Cache key of one call: SHA-256 of the model id, the system prompt and the unit's prompt."""
    return hashlib.sha256("\0".join((model_id, SYSTEM_PROMPT, prompt)).encode()).hexdigest()


def read_verdict(reply: str) -> str | None:
    """The verdict a reply names first (None when it names none)."""
    m = _VERDICT_RE.search(reply or "")
    return None if m is None else m.group(1).upper().replace(" ", "_")


def _ref_text(ref: Any) -> str:
    if not isinstance(ref, dict):
        return json.dumps(ref, ensure_ascii=False)
    return "; ".join(f"{k}: {ref[k]}" for k in ("title", "authors", "venue", "year", "doi") if ref.get(k))


def units(task: Task, status: str, answer_text: str | None, answer: Any) -> list[Unit]:
    """The units of one response, with their prompts (`answer` is the parsed answer or a Table)."""
    head = f"Task ({task.type}, {task.domain}):\n{task.question}\n\n"
    if task.type in ("T1", "T2"):
        gold = "; ".join([task.answer or "", *task.aliases])
        return [Unit(task.id, "answer", f"{head}Ground-truth answer (or accepted aliases): {gold}\n\n"
                                       f"Status reported by the system: {status}\nSystem answer:\n{answer_text or ''}")]
    out: list[Unit] = []
    if task.type == "T3":
        groups = {g.slot: g for g in task.groups}
        for slot, refs in (answer or {}).items():
            gold = "\n".join(f"- {_ref_text({'title': r.title, 'authors': list(r.authors), 'venue': r.venue, 'year': r.year, 'doi': r.doi})}"
                             for r in groups[slot].references)
            for i, ref in enumerate(refs or []):
                out.append(Unit(task.id, "citation", f"{head}Ground-truth references for [{slot}]:\n{gold}\n\n"
                                                     f"Predicted reference for [{slot}]: {_ref_text(ref)}\n"
                                                     "Is the predicted reference one of the ground-truth references, with "
                                                     "correct bibliographic details?", slot=slot, ref_index=i))
        return out
    if not isinstance(answer, Table):
        return out
    rows = {r[task.primary_key]: r for r in task.rows}
    by_norm = {normalize(c): c for c in answer.columns}
    for v in judge_task(task, status, answer):  # the cells normalized-match judges: matched rows x columns
        gold_row = rows[v.row_key]
        pred_row = _matched_row(task, answer, v.row_key)
        pcol = by_norm.get(normalize(v.column or ""))
        predicted = "" if pred_row is None or pcol is None else pred_row.get(pcol, "")
        out.append(Unit(task.id, "cell", f"{head}Row with {task.primary_key} = {v.row_key}, column {v.column!r}.\n"
                                         f"Ground-truth value: {gold_row[v.column]}\nPredicted value: {predicted}",
                        row_key=v.row_key, column=v.column))
    return out


def _matched_row(task: Task, table: Table, key: str) -> dict[str, str] | None:
    pk = next((c for c in table.columns if normalize(c) == normalize(task.primary_key)), None)
    if pk is None:
        return None
    return next((r for r in table.rows if normalize(r.get(pk, "")) == normalize(key)), None)
