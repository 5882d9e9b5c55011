"""From a system's final text to the answer and status a run stores (docs/sciexplore.md#final-answers).

``parse_final_answer(task, text)`` gives the answer in the shape of a responses file:

* T1, T2: the text after the last ``Final answer:`` marker (the whole text, stripped, without one);
* T3: slot -> list of reference objects, from the first JSON object in the text (fenced or bare); failing
  that, from lines naming a slot (``[CITE_1] Title (2019). doi:...``), one reference per line or per
  ``;``-separated part;
* T4: the parsed table as ``{"columns", "rows"}`` (``tables.parse_table``), or the text itself when it
  holds no table (it then matches no row and fails the format check).

``answer_status(task, terminated_by, text)``: ``error`` when the task ended by an error,
``not_attempted`` when the final text is empty or an abstention (the judge's list), else ``answered``.
For T3 and T4 an abstention phrase counts only when nothing was parsed: a table that comes with an
apology is an answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .judge import is_abstention
from .prompts import FINAL_ANSWER
from .release import SLOT_RE, Task, slot_name
from .tables import ParseFailure, parse_table

_FINAL_RE = re.compile(re.escape(FINAL_ANSWER.rstrip(":")) + r"\s*:\s*", re.IGNORECASE)
_FENCE_RE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.DOTALL)
_YEAR_RE = re.compile(r"\b(19\d\d|20\d\d)\b")
_DOI_RE = re.compile(r"\b(10\.\d{4,9}/[^\s;,]+)")


def final_text(text: str | None) -> str:
    """T1/T2: the answer after the last ``Final answer:`` marker, else the whole text."""
    s = (text or "").strip()
    marks = list(_FINAL_RE.finditer(s))
    if marks:
        s = s[marks[-1].end():].strip()
    return s.strip("`*").strip()


def _json_objects(text: str):
    for m in _FENCE_RE.finditer(text):
        yield m.group(1)
    start = text.find("{")
    if start >= 0:
        yield text[start:text.rfind("}") + 1]


def _references_from_json(task: Task, text: str) -> dict[str, list[dict[str, Any]]] | None:
    slots = {g.slot for g in task.groups}
    for chunk in _json_objects(text):
        try:
            obj = json.loads(chunk)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        out: dict[str, list[dict[str, Any]]] = {}
        for k, refs in obj.items():
            slot = slot_name(k)
            if slot in slots and isinstance(refs, list):
                out[slot] = [_clean_ref(r) for r in refs if isinstance(r, (dict, str))]
        if out:
            return out
    return None


def _clean_ref(ref: dict | str) -> dict[str, Any]:
    if isinstance(ref, str):
        return _reference_from_text(ref)
    out = {k: ref[k] for k in ("title", "authors", "venue", "year", "doi") if ref.get(k) not in (None, "")}
    if isinstance(out.get("year"), str) and out["year"].strip().isdigit():
        out["year"] = int(out["year"].strip())
    return out


def _reference_from_text(part: str) -> dict[str, Any]:
    ref: dict[str, Any] = {}
    s = part.strip(" -*•\t")
    if m := _DOI_RE.search(s):
        ref["doi"] = m.group(1).rstrip(".")
        s = (s[:m.start()] + s[m.end():]).replace("doi:", "").replace("DOI", "")
    if m := _YEAR_RE.search(s):
        ref["year"] = int(m.group(1))
        s = s[:m.start()].rstrip(" (,.")
    title = s.strip(" .,;:\"'()")
    if title:
        ref["title"] = title
    return ref


def _references_from_lines(task: Task, text: str) -> dict[str, list[dict[str, Any]]] | None:
    slots = {g.slot for g in task.groups}
    out: dict[str, list[dict[str, Any]]] = {}
    current: str | None = None
    for line in text.splitlines():
        m = SLOT_RE.search(line) or re.match(r"\s*[-*]?\s*(CITE_\d+)\s*:", line)
        rest = line
        if m:
            current = slot_name(m.group(1))
            rest = line[m.end():].lstrip(" :-")
        if current not in slots:
            continue
        for part in rest.split(";"):
            ref = _reference_from_text(part)
            if ref.get("title") or ref.get("doi"):
                out.setdefault(current, []).append(ref)
        out.setdefault(current, [])
    return out or None


def parse_final_answer(task: Task, text: str | None) -> Any:
    s = text or ""
    if task.type in ("T1", "T2"):
        return final_text(s)
    if task.type == "T3":
        refs = _references_from_json(task, s) or _references_from_lines(task, s) or {}
        return {g.slot: refs.get(g.slot, []) for g in task.groups} if refs else {}
    table = parse_table(s)
    return s if isinstance(table, ParseFailure) else table.to_json()


def _parsed_something(task: Task, answer: Any) -> bool:
    if task.type == "T3":
        return any(answer.values()) if isinstance(answer, dict) else False
    if task.type == "T4":
        return isinstance(answer, dict)
    return False


def answer_status(task: Task, terminated_by: str, text: str | None, answer: Any | None = None) -> str:
    if terminated_by == "error":
        return "error"
    parsed = parse_final_answer(task, text) if answer is None else answer
    if task.type in ("T1", "T2"):
        return "not_attempted" if is_abstention(parsed) else "answered"
    if not (text or "").strip() or (not _parsed_something(task, parsed) and is_abstention(text)):
        return "not_attempted"
    return "answered"


def final_answer(task: Task, terminated_by: str, text: str | None) -> tuple[str, Any]:
    """(status, answer) of a task's final text, the answer as a responses file holds it."""
    answer = parse_final_answer(task, text)
    return answer_status(task, terminated_by, text, answer), answer
