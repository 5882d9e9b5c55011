"""Prompts per task type, the final-answer parser and the status rule."""

from __future__ import annotations

import json

import pytest

from agenthop.harness.benchmarks.sciexplore.answers import final_answer, final_text, parse_final_answer
from agenthop.harness.benchmarks.sciexplore.judge import judge_task
from agenthop.harness.benchmarks.sciexplore.prompts import ABSTAIN, system_prompt, task_prompt
from agenthop.harness.benchmarks.sciexplore.release import CitationGroup, Reference, Task
from agenthop.harness.benchmarks.sciexplore.tables import format_ok, parse_table

T1 = Task(id="a", type="T1", domain="g", question="Which accession?", answer="ACC-1", aliases=("ACC1",), hops=2)
T2 = Task(id="b", type="T2", domain="e", question="Which paper?", answer="Birds of Kalo", year=2020)
T3 = Task(id="c", type="T3", domain="c", question="Fill [CITE_1] and [CITE_2].", paragraph="x [CITE_1] y [CITE_2].",
          groups=(CitationGroup("CITE_1", (Reference("Paper One", 2019, (), None, "10.1234/one"),)),
                  CitationGroup("CITE_2", (Reference("Paper Three", 2018, (), None, None),))))
T4 = Task(id="d", type="T4", domain="m", question="Build a table.", columns=("Material", "Gap (eV)"),
          primary_key="Material", rows=({"Material": "Kalo", "Gap (eV)": "1.2"},))


def test_prompts_name_the_answer_shape_of_each_type() -> None:
    assert "no tools" in system_prompt("foundation") and "db_search" in system_prompt("search")
    assert system_prompt("deep_research") == system_prompt("search")
    # --search native declares no corpus tools: its prompt names none of them
    native = system_prompt("search", native=True)
    assert "web search" in native and not any(t in native for t in ("db_search", "open_page", "scholar_search"))
    assert "Final answer: <the identifier>" in task_prompt(T1) and "title" in task_prompt(T2)
    p3 = task_prompt(T3)
    assert "```json" in p3 and "CITE_1, CITE_2" in p3
    p4 = task_prompt(T4)
    assert "| Material | Gap (eV) |" in p4 and p4.startswith("Build a table.")
    # the format the T4 prompt shows parses as a table with exactly the task's columns
    assert format_ok(parse_table(p4), T4.columns)
    assert all(ABSTAIN in task_prompt(t) or ABSTAIN in system_prompt("search") for t in (T1, T2, T3, T4))


@pytest.mark.parametrize(("text", "expected"), [
    ("I looked it up.\nFinal answer: ACC-1", "ACC-1"),
    ("final answer:  **ACC-1**", "ACC-1"),
    ("Final answer: X\nOn reflection... Final Answer: ACC1", "ACC1"),
    ("  ACC-1 \n", "ACC-1"),
    (None, ""),
])
def test_t1_t2_final_text(text, expected) -> None:
    assert final_text(text) == expected


def test_status_rule() -> None:
    assert final_answer(T1, "answer", "Final answer: ACC-1") == ("answered", "ACC-1")
    assert final_answer(T1, "answer", f"Searched twice.\nFinal answer: {ABSTAIN}")[0] == "not_attempted"
    assert final_answer(T2, "answer", "I don't know")[0] == "not_attempted"
    assert final_answer(T2, "max_turns", "")[0] == "not_attempted"
    assert final_answer(T2, "error", "Final answer: Birds of Kalo")[0] == "error"
    assert final_answer(T3, "answer", ABSTAIN)[0] == "not_attempted"
    assert final_answer(T4, "answer", "I don't know.")[0] == "not_attempted"
    # an apology with a table is an answer
    assert final_answer(T4, "answer", "I could not find all of them.\n\n| Material | Gap (eV) |\n|---|---|\n| Kalo | 1.2 |")[0] == "answered"
    assert final_answer(T4, "answer", "The gap of Kalo is 1.2 eV.") == ("answered", "The gap of Kalo is 1.2 eV.")


def test_t3_json_block_and_slot_lines() -> None:
    text = ("Here they are.\n```json\n" + json.dumps({"[CITE_1]": [{"title": "Paper One", "year": "2019", "venue": ""}],
                                                      "CITE_9": [{"title": "x"}]}) + "\n```")
    assert parse_final_answer(T3, text) == {"CITE_1": [{"title": "Paper One", "year": 2019}], "CITE_2": []}
    lines = "[CITE_1] Paper One (2019). doi:10.1234/one; Paper Two, 2020\nCITE_2: Paper Three (2018)"
    assert parse_final_answer(T3, lines) == {
        "CITE_1": [{"doi": "10.1234/one", "year": 2019, "title": "Paper One"}, {"year": 2020, "title": "Paper Two"}],
        "CITE_2": [{"year": 2018, "title": "Paper Three"}]}
    status, answer = final_answer(T3, "answer", lines)
    verdicts = [v.verdict for v in judge_task(T3, status, answer)]
    assert verdicts == ["correct", "incorrect", "correct"]
    assert parse_final_answer(T3, "no references here") == {}


def test_t4_answer_is_the_parsed_table_that_the_judge_reads() -> None:
    text = "Table:\n\n| Material | Gap (eV) |\n|---|---|\n| Kalo | 1.2 |\n\nSources: the papers."
    status, answer = final_answer(T4, "answer", text)
    assert answer == {"columns": ["Material", "Gap (eV)"], "rows": [{"Material": "Kalo", "Gap (eV)": "1.2"}]}
    assert [v.verdict for v in judge_task(T4, status, answer)] == ["correct", "correct"]
