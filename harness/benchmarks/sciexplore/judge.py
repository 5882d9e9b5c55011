"""The deterministic ``normalized-match`` judge (docs/sciexplore.md#normalized-match).

``judge_task(task, status, answer)`` returns the verdicts of one system's answer to one task, one
per unit: ``answer`` (T1, T2), ``citation`` (T3: each predicted reference of each slot) and
``cell`` (T4: each cell of each ground-truth row a predicted row matched). Pure: the same inputs
give the same verdicts.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

from .normalize import contains_phrase, normalize, normalize_doi
from .release import Task, slot_name
from .tables import ParseFailure, Table, parse_table

JUDGE_NAME = "normalized-match"
JUDGE_VERSION = "1"
#: the longest name a judge may have (it is a key of raw.judgments and a label in the reports)
MAX_JUDGE_NAME_CHARS = 120


def judge_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a judge of a judgments file or ``agenthop-judge`` (None: it can): empty,
    whitespace around it, a control character, more than ``MAX_JUDGE_NAME_CHARS`` characters, or the
    built-in judge's name in any case or Unicode form."""
    if not name.strip():
        return "is empty"
    if name != name.strip():
        return f"{name.strip()[:40]!r} has whitespace around it; give the name without it"
    if len(name) > MAX_JUDGE_NAME_CHARS:
        return f"has {len(name)} characters; a judge name has at most {MAX_JUDGE_NAME_CHARS}"
    if any(unicodedata.category(c).startswith("C") for c in name):
        return "holds a control or unassigned character"
    if unicodedata.normalize("NFKC", name).casefold() == JUDGE_NAME:
        return f"{JUDGE_NAME!r} is the built-in judge that ingest applies itself; name this judge otherwise"
    return None

#: an answer containing one of these (normalised, as a whole phrase) and not the ground truth abstains
ABSTENTION_PHRASES = (
    "I could not find the answer",
    "I could not find",
    "I couldn't find",
    "I was unable to find",
    "I don't know",
    "I do not know",
    "unable to determine",
    "cannot be determined",
    "can't be determined",
    "could not be determined",
    "not enough information",
)
_ABSTENTIONS = tuple(normalize(p) for p in ABSTENTION_PHRASES)


@dataclass(frozen=True, slots=True)
class Verdict:
    unit: str  # answer | citation | cell
    verdict: str  # correct | incorrect | not_attempted
    rationale: str
    slot: str | None = None
    ref_index: int | None = None
    row_key: str | None = None
    column: str | None = None


def is_abstention(text: str | None) -> bool:
    n = normalize(text)
    return not n or any(contains_phrase(n, p) for p in _ABSTENTIONS)


def judge_exact(task: Task, status: str, answer: Any) -> Verdict:
    """T1/T2: correct iff the normalised answer equals the answer or an alias, or contains one as a whole phrase.

    A matching answer is correct even when it hedges; otherwise an empty answer, a not_attempted
    status or an abstention phrase makes it not_attempted; anything else is incorrect.
    """
    text = answer if isinstance(answer, str) else ("" if answer is None else str(answer))
    if status == "not_attempted":
        return Verdict("answer", "not_attempted", "status not_attempted")
    pred = normalize(text)
    for gold in (task.answer, *task.aliases):
        g = normalize(gold)
        if g and (pred == g or contains_phrase(pred, g)):
            return Verdict("answer", "correct", f"matches {gold!r}")
    if not pred:
        return Verdict("answer", "not_attempted", "empty answer")
    if is_abstention(text):
        return Verdict("answer", "not_attempted", "abstention phrase")
    return Verdict("answer", "incorrect", "no match with the answer or its aliases")


def judge_citations(task: Task, status: str, answer: Any) -> list[Verdict]:
    """T3: one verdict per predicted reference; each ground-truth reference is matched at most once."""
    if status == "not_attempted" or not isinstance(answer, dict):
        return []
    groups = {g.slot: g for g in task.groups}
    out: list[Verdict] = []
    for raw_slot, refs in answer.items():
        slot = slot_name(raw_slot)
        group = groups.get(slot)
        if group is None or not isinstance(refs, list):
            continue  # a slot the task lacks is refused by the responses reader
        used: set[int] = set()
        for i, ref in enumerate(refs):
            out.append(_judge_reference(group.references, used, slot, i, ref))
    return out


def _judge_reference(gold, used: set[int], slot: str, i: int, ref: Any) -> Verdict:
    if not isinstance(ref, dict):
        return Verdict("citation", "incorrect", "not a reference object", slot=slot, ref_index=i)
    title = normalize(ref.get("title") if isinstance(ref.get("title"), str) else None)
    doi = normalize_doi(ref.get("doi") if isinstance(ref.get("doi"), str) else None)
    year = ref.get("year") if isinstance(ref.get("year"), int) and not isinstance(ref.get("year"), bool) else None
    identified = False
    for j, g in enumerate(gold):
        if not ((title and title == normalize(g.title)) or (doi and doi == normalize_doi(g.doi))):
            continue
        identified = True
        if year is not None and g.year is not None and year != g.year:
            continue
        if j in used:
            continue
        used.add(j)
        return Verdict("citation", "correct", f"ground-truth reference {j}", slot=slot, ref_index=i)
    if identified:
        why = "year disagrees or reference already matched by an earlier prediction"
    else:
        why = "no title or DOI match in the group"
    return Verdict("citation", "incorrect", why, slot=slot, ref_index=i)


def judge_cells(task: Task, table: Table | ParseFailure) -> list[Verdict]:
    """T4: rows matched by normalised primary key; one verdict per column of every matched ground-truth row."""
    if isinstance(table, ParseFailure):
        return []
    by_norm = {normalize(c): c for c in table.columns}
    pred_pk = by_norm.get(normalize(task.primary_key))
    if pred_pk is None:
        return []
    first: dict[str, dict[str, str]] = {}
    for row in table.rows:
        first.setdefault(normalize(row.get(pred_pk, "")), row)
    out: list[Verdict] = []
    for gold in task.rows:
        key = gold[task.primary_key]
        pred = first.get(normalize(key))
        if pred is None or not normalize(key):
            continue
        for col in task.columns:
            pcol = by_norm.get(normalize(col))
            if pcol is None:
                out.append(Verdict("cell", "incorrect", "column missing", row_key=key, column=col))
                continue
            p, g = normalize(pred.get(pcol, "")), normalize(gold[col])
            ok = bool(g) and (p == g or contains_phrase(p, g))
            out.append(Verdict("cell", "correct" if ok else "incorrect",
                               "matches" if ok else f"{pred.get(pcol, '')!r} vs {gold[col]!r}"[:200],
                               row_key=key, column=col))
    return out


def judge_task(task: Task, status: str, answer: Any) -> list[Verdict]:
    if task.type in ("T1", "T2"):
        return [judge_exact(task, status, answer)]
    if task.type == "T3":
        return judge_citations(task, status, answer)
    if status != "answered":  # a T4 answer that errored or was not attempted matches no row
        return []
    return judge_cells(task, answer if isinstance(answer, (Table, ParseFailure)) else parse_table(answer))
