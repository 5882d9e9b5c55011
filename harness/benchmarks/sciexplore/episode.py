"""SciExplore's side of one attempt for the agent loop (harness/episode.py; docs/sciexplore.md#runs).

A task is answered by the system's final text: there is no answer tool, a reply without a tool call
ends the attempt (``text_is_answer``), and a task that reaches a cap is judged on its last text.
``answers.final_answer`` turns the text into the status and the answer in the task type's shape; the
trajectory stores the text (``predicted_answer``) and the parsed answer as JSON (``answer_json``);
``score`` stays null (the judges score SciExplore in its marts: ingest applies ``normalized-match``),
and ``is_correct`` says whether ``normalized-match`` finds the task wholly right (every verdict correct
and, for T3 and T4, the whole ground truth found), for progress lines.

Tools by paradigm and search mode: ``foundation`` none; ``search`` and ``deep_research`` the four
offline tools over the release's corpus (``--search corpus``, one tool call = one point of the
paradigm's tool-call cap) or, with ``--search native``, no function tools and
``SampleContext.native_search`` set: the provider searches on its side.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agenthop.schemas.limits import bytes_over_cap

from ...backends.base import SampleContext, ToolSpec
from ...episode import Answer, CallResult
from . import paradigms, prompts
from .answers import final_answer
from .judge import judge_task
from .release import Release, Task

SEARCH_MODES = ("corpus", "native")
TOOL_NAMES = ("web_search", "scholar_search", "db_search", "open_page")
ERROR_STATUSES = frozenset({"invalid_args", "unknown_tool", "tool_error"})
BUDGET_ADVISORY = ("You have used every tool call this task allows. Reply now, without a tool call, with your "
                   "final answer in the format the task asks for.")


def wholly_right(task: Task, verdicts: list[Any]) -> bool:
    """Every ``normalized-match`` verdict correct, and for T3/T4 the whole ground truth covered."""
    if not verdicts or any(v.verdict != "correct" for v in verdicts):
        return False
    if task.type == "T3":
        return len(verdicts) == sum(len(g.references) for g in task.groups)
    if task.type == "T4":
        return len(verdicts) == len(task.rows) * len(task.columns)
    return True


@dataclass(slots=True)
class SciExploreEpisode:
    context: SampleContext
    task: Task
    #: the offline tools (None: no function tools, i.e. foundation or native search)
    tools: Any
    answer_tool: str = ""
    text_is_answer: bool = True
    error_statuses: frozenset[str] = ERROR_STATUSES
    disabled_tools: frozenset[str] = frozenset()
    budget_advisory: str = BUDGET_ADVISORY

    def cost(self, tool: str) -> int:
        return 1 if tool in TOOL_NAMES else 0

    def execute(self, tool: str, args: Any) -> CallResult:
        if self.tools is None:
            text = f"Unknown tool: {tool}. No tools are available for this task."
            return CallResult(text, 0, "unknown_tool", self.emitted_columns(tool, args))
        out = self.tools.call(tool, args)
        rec = out.record
        return CallResult(out.text, 0 if rec.status == "unknown_tool" else self.cost(tool), rec.status,
                          {"search_query": rec.query, "paper_id": rec.target}, None, rec.error_type)

    def emitted_columns(self, tool: str, args: Any) -> dict[str, Any]:
        a = args if isinstance(args, dict) else {}
        query = a.get("query") if isinstance(a.get("query"), str) else None
        target = a.get("id") if tool == "open_page" and isinstance(a.get("id"), str) else None
        return {"search_query": query, "paper_id": target}

    def answer_from_text(self, text: str | None, terminated_by: str) -> Answer:
        """The final text as the task's answer (status, parsed answer, ``normalized-match`` flag)."""
        status, answer = final_answer(self.task, terminated_by, text)
        right = wholly_right(self.task, judge_task(self.task, status, answer))
        answer_json: str | None = json.dumps(answer, ensure_ascii=False)
        if bytes_over_cap(answer_json):  # escaping made it longer than a stored text may be: the text is kept
            answer_json = None
        return Answer(is_correct=right, score=None,
                      columns={"predicted_answer": text or None, "predicted_index": -1, "reasoning": None,
                               "answer_json": answer_json})

    def no_answer(self) -> Answer:
        return self.answer_from_text(None, "error")

    def nudge(self) -> str:
        return ""

    def footer(self, turn: int, tokens_used: int, budget_used: int) -> str:
        return ""

    def rejected_budget_text(self, remaining: int, tool: str, cost: int) -> str:
        return f"Rejected: {tool} was not run; this task's tool calls are used up. Reply with your final answer."

    def rejected_disabled_text(self, tool: str) -> str:
        return f"Rejected: {tool} is not available."


def context(task: Task, paradigm: str, native: bool, seed: int, attempt: int) -> SampleContext:
    """What a backend sees of one attempt: the prompts, the tool declarations, whether to search natively."""
    specs = [] if native else [ToolSpec(t["name"], t["description"], t["parameters"])
                               for t in paradigms.tool_schemas(paradigm)]
    return SampleContext(item=task, system_prompt=prompts.system_prompt(paradigm, native),
                         user_prompt=prompts.task_prompt(task), tools=specs, condition=paradigm, seed=seed, attempt=attempt, native_search=native,
                         cache_after_tools=frozenset({"open_page"}))


def uses_native_search(paradigm: str, options: Mapping[str, Any]) -> bool:
    """Whether a run of ``paradigm`` with ``options`` has the provider search (``--search native``;
    the foundation paradigm has no tools at all)."""
    return paradigm != "foundation" and options.get("search", "corpus") == "native"


def episode(task: Task, release: Release, *, condition: str, caps: Any, seed: int, attempt: int,
            options: dict[str, Any] | None = None) -> SciExploreEpisode:
    """One attempt of ``task`` under paradigm ``condition`` (``options``: ``search`` corpus | native)."""
    native = uses_native_search(condition, options or {})
    tools = None
    if condition != "foundation" and not native:
        from .sim_agents import corpus_tools  # bm25s is imported only by runs that search the corpus

        tools = corpus_tools(release, condition)
    return SciExploreEpisode(context(task, condition, native, seed, attempt), task, tools)
