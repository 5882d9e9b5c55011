"""The prompts of a SciExplore run (docs/sciexplore.md#prompts).

``system_prompt(paradigm, native)`` says which tools exist (none, the four corpus tools, or with
``--search native`` the provider's own web search); ``task_prompt(task)`` is the task's question
followed by the answer format its type needs, the shape ``answers.parse_final_answer`` reads back:

* T1, T2: reasoning is free; the last line is ``Final answer: <identifier or title>``;
* T3: a JSON object in a ```json block, slot -> list of references (title, authors, venue, year, doi);
* T4: one Markdown table with exactly the task's columns, in the given order, one row per entity.

Every prompt asks the system to say ``I could not find the answer.`` rather than guess, the
abstention the judge and the status rule recognise.
"""

from __future__ import annotations

import json

from .release import Task

ABSTAIN = "I could not find the answer."
FINAL_ANSWER = "Final answer:"

_SYSTEM_TOOLS = (
    "You are a scientific research assistant. You have search tools over a collection of papers, web pages "
    "and scientific database records: web_search (everything), scholar_search (papers), db_search (database "
    "records, optionally one database) and open_page (read a document by id). Search, open the documents you "
    "need, check your answer against what you read, then reply without a tool call in the format the task "
    f"asks for. If the evidence is not there, say: {ABSTAIN}"
)
_SYSTEM_NATIVE = (
    "You are a scientific research assistant. You can search the web with your built-in web search tool. "
    "Search, read the sources you need, check your answer against them, then reply in the format the task "
    f"asks for. If the evidence is not there, say: {ABSTAIN}"
)
_SYSTEM_NO_TOOLS = (
    "You are a scientific research assistant. Answer from your own knowledge; you have no tools. Reply in the "
    f"format the task asks for. If you do not know, say: {ABSTAIN}"
)


def system_prompt(paradigm: str, native: bool = False) -> str:
    """The system prompt of a paradigm; ``native``: the provider searches (no corpus tools declared)."""
    if paradigm == "foundation":
        return _SYSTEM_NO_TOOLS
    return _SYSTEM_NATIVE if native else _SYSTEM_TOOLS


def answer_format(task: Task) -> str:
    if task.type in ("T1", "T2"):
        what = "the identifier" if task.type == "T1" else "the paper's title"
        return (f"Answer format: end your reply with one line `{FINAL_ANSWER} <{what}>`, nothing after it. "
                f"If you cannot find it, write `{FINAL_ANSWER} {ABSTAIN}`")
    if task.type == "T3":
        example = {g.slot: [{"title": "...", "authors": ["..."], "venue": "...", "year": 2020, "doi": "..."}]
                   for g in task.groups[:2]}
        slots = ", ".join(g.slot for g in task.groups)
        return ("Answer format: one JSON object in a ```json block mapping every slot "
                f"({slots}) to the list of references it cites, e.g.\n```json\n{json.dumps(example, indent=1)}\n```\n"
                "Leave a slot's list empty when you cannot find its references.")
    header = "| " + " | ".join(task.columns) + " |"
    return ("Answer format: one Markdown table with exactly these columns in this order, a header line, a "
            f"separator line and one row per {task.primary_key}:\n{header}\n|" + "---|" * len(task.columns))


def task_prompt(task: Task) -> str:
    return f"{task.question}\n\n{answer_format(task)}"
