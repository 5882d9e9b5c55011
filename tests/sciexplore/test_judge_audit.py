"""The judge audit's counts (reports/sciexplore/audit.py) on hand-built answers, worked out by hand."""

from __future__ import annotations

import pytest

from agenthop.reports.sciexplore.audit import AuditCounts, audit, hedges_then_answers, names_several_candidates

GOLD = ["CID-41019", "CID41019"]  # the answer and its alias


@pytest.mark.parametrize(("answer", "expected"), [
    ("CID-41019, CID-41020, CID-41021, CID-41022", True),  # four candidate ids, the right one among them
    ("CID-41020 or CID-41019", True),
    ("CID-41019; CID-41020", True),
    ("CID-41019\nCID-99999", True),
    ("CID-41019, a compound", True),  # an exact answer and a clause: counted (an upper bound)
    ("CID-41019", False),
    ("The answer is CID-41019.", False),  # in a sentence, no list
    ("CID-41019 or CID41019", False),  # the answer and its alias: one candidate
    ("Based on my search, the compound is CID-41019", False),  # no part is exactly the answer
    ("", False),
    (None, False),
])
def test_names_several_candidates(answer: str | None, expected: bool) -> None:
    assert names_several_candidates(answer, GOLD) is expected


@pytest.mark.parametrize(("answer", "expected"), [
    ("I don't know, but it is probably CID-41019X", True),
    ("I do not know. Maybe CID-2", True),
    ("I don't know for sure, but CID-2", True),
    ("I could not find the answer.", False),
    ("Sorry, I don't know.", False),
    ("I don't know X", False),  # one word after it
    ("I don't know. I could not find it.", False),  # after the last phrase: "it"
    ("CID-2", False),  # no abstention phrase
])
def test_hedges_then_answers(answer: str, expected: bool) -> None:
    assert hedges_then_answers(answer) is expected


def test_audit_counts_per_run_by_hand() -> None:
    def row(run: str, verdict: str, answer: str | None, status: str = "answered") -> dict:
        return {"run_id": run, "verdict": verdict, "status": status, "answer_text": answer,
                "answer": "CID-41019", "aliases": ["CID41019"]}

    rows = [
        row("a", "correct", "CID-41019"),                           # correct, one candidate
        row("a", "correct", "CID-41019, CID-41020"),                # correct, several
        row("a", "incorrect", "CID-41020, CID-41021"),              # wrong: not counted at all
        row("a", "not_attempted", "I don't know, probably CID-7"),  # hedged, then answered
        row("a", "not_attempted", "I could not find the answer."),  # plain abstention
        row("a", "not_attempted", "I don't know, probably CID-7", status="not_attempted"),  # status wins: left out
        row("b", "not_attempted", ""),                               # empty answer: not attempted, not hedged
        row("b", "correct", "CID41019 or CID-9"),                   # the alias among two
    ]
    assert audit(rows) == {"a": AuditCounts(correct=2, several_candidates=1, not_attempted=2, hedged=1),
                           "b": AuditCounts(correct=1, several_candidates=1, not_attempted=1, hedged=0)}
    assert audit([]) == {}
