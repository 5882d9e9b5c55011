"""The judge audit (docs/sciexplore.md#judge-audit): how many of `normalized-match`'s T1/T2 verdicts rest on
answers its documented rules treat leniently. The verdicts keep those rules; the audit only counts.

- A `correct` verdict on an answer that **names several candidates**: the answer, split at commas,
  semicolons, vertical bars, line breaks and the word "or", has a part that is (normalised) exactly the
  ground truth or an alias, and another non-empty part that neither is nor contains one ("CID-41019,
  CID-41020, CID-41021" for CID-41019). An answer that adds a clause after the exact answer
  ("CID-41019, a compound") counts too: the count is of answers to read, an upper bound of lists.
- A `not_attempted` verdict on an answer that **hedges, then answers**: the response was answered (its
  status is not `not_attempted`) and, after the last abstention phrase in it, at least two more words
  follow ("I don't know, but it is probably CID-41019"); "I could not find the answer." alone is a plain
  abstention.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agenthop.harness.benchmarks.sciexplore.judge import ABSTENTION_PHRASES
from agenthop.harness.benchmarks.sciexplore.normalize import contains_phrase, normalize

#: where an answer's candidates are split apart
SEPARATORS = re.compile(r"[,;|\n]|\bor\b", re.IGNORECASE)
#: words after the last abstention phrase that make a hedged answer
MIN_WORDS_AFTER = 2
_ABSTENTIONS = tuple(normalize(p) for p in ABSTENTION_PHRASES)


def names_several_candidates(answer: str | None, golds: Iterable[str]) -> bool:
    """True when the answer lists the ground truth (or an alias) exactly beside another candidate."""
    targets = {g for g in (normalize(x) for x in golds) if g}
    parts = [p for p in (normalize(x) for x in SEPARATORS.split(answer or "")) if p]
    exact = any(p in targets for p in parts)
    other = any(p not in targets and not any(contains_phrase(p, g) for g in targets) for p in parts)
    return exact and other


def hedges_then_answers(answer: str | None) -> bool:
    """True when at least MIN_WORDS_AFTER words follow the answer's last abstention phrase."""
    padded = f" {normalize(answer)} "
    ends = [i + len(p) + 1 for p in _ABSTENTIONS for i in [padded.rfind(f" {p} ")] if i >= 0]
    return bool(ends) and len(padded[max(ends):].split()) >= MIN_WORDS_AFTER


@dataclass(frozen=True)
class AuditCounts:
    correct: int = 0
    several_candidates: int = 0
    not_attempted: int = 0
    hedged: int = 0


def audit(rows: Sequence[dict[str, Any]]) -> dict[str, AuditCounts]:
    """Per run: the `normalized-match` T1/T2 verdicts counted. Each row is one verdict with its response:
    run_id, verdict, status, answer_text and the task's answer and aliases."""
    acc: dict[str, list[int]] = {}
    for r in rows:
        c = acc.setdefault(r["run_id"], [0, 0, 0, 0])
        if r["verdict"] == "correct":
            c[0] += 1
            c[1] += names_several_candidates(r["answer_text"], [r["answer"], *(r["aliases"] or [])])
        elif r["verdict"] == "not_attempted" and r["status"] != "not_attempted":
            c[2] += 1
            c[3] += hedges_then_answers(r["answer_text"])
    return {run: AuditCounts(*c) for run, c in acc.items()}
