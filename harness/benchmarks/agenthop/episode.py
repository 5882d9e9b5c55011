"""AgentHop's side of one attempt for the agent loop (harness/episode.py): the seven tools over the
item's neighbourhood, the reference's prompts and fixed texts, and the option answer scored 1/0."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...backends.base import SampleContext
from ...episode import Answer, CallResult
from . import prompts
from .model import Graph, Item, Label, Paper
from .tools import ERROR_STATUSES, TOOL_COSTS, Sandbox, ToolOutcome, call_fields

ANSWER_TOOL = "submit_answer"


def _answer(item: Item, out: ToolOutcome) -> Answer:
    index = -1 if out.predicted_index is None else out.predicted_index
    correct = index == item.correct_index
    return Answer(
        is_correct=correct,
        score=1.0 if correct else 0.0,
        columns={"predicted_answer": out.answer, "predicted_index": index, "reasoning": out.reasoning,
                 "answer_json": None},
    )


def _call_columns(out: ToolOutcome) -> dict[str, Any]:
    return {
        "paper_id": out.paper_id,
        "section_query": out.section_query,
        "resolved_header": out.resolved_header,
        "resolved_section_index": out.resolved_section_index,
        "search_query": out.search_query,
        "answer": out.answer,
    }


@dataclass(slots=True)
class AgentHopEpisode:
    context: SampleContext
    sandbox: Sandbox
    item: Item
    condition: str
    answer_tool: str = ANSWER_TOOL
    error_statuses: frozenset[str] = ERROR_STATUSES
    budget_advisory: str = prompts.BUDGET_ADVISORY

    @property
    def disabled_tools(self) -> frozenset[str]:
        return self.sandbox.disabled_tools

    def cost(self, tool: str) -> int:
        return TOOL_COSTS.get(tool, 0)

    def execute(self, tool: str, args: Any) -> CallResult:
        out = self.sandbox.execute(tool, args)
        answer = _answer(self.item, out) if tool == ANSWER_TOOL else None
        return CallResult(out.text, out.cost, out.status, _call_columns(out), answer)

    def emitted_columns(self, tool: str, args: Any) -> dict[str, Any]:
        paper_id, section_query, search_query, answer = call_fields(tool, args)
        return {"paper_id": paper_id, "section_query": section_query, "resolved_header": None,
                "resolved_section_index": None, "search_query": search_query, "answer": answer}

    def no_answer(self) -> Answer:
        return Answer(False, 0.0, {"predicted_answer": None, "predicted_index": -1, "reasoning": None,
                                   "answer_json": None})

    def nudge(self) -> str:
        return prompts.nudge(self.condition)

    def footer(self, turn: int, tokens_used: int, budget_used: int) -> str:
        return prompts.footer(turn, tokens_used, budget_used)

    def rejected_budget_text(self, remaining: int, tool: str, cost: int) -> str:
        return prompts.rejected_budget_text(remaining, tool, cost)

    def rejected_disabled_text(self, tool: str) -> str:
        return prompts.rejected_disabled_text(tool)


def context(item: Item, graph: Graph, papers: dict[str, Paper], labels: list[Label], condition: str, caps: Any,
            seed: int, attempt: int) -> SampleContext:
    """What a backend sees of one attempt (prompts, tool schemas; labels etc. for simulated agents)."""
    return SampleContext(
        item=item,
        system_prompt=prompts.system_prompt(item, condition, caps),
        user_prompt=prompts.first_user_message(condition),
        tools=prompts.tool_specs(condition),
        condition=condition,
        labels=list(labels),
        graph=graph,
        papers=papers,
        seed=seed,
        attempt=attempt,
        cache_after_tools=frozenset({"read_section"}),
    )


def episode(item: Item, graph: Graph, papers: dict[str, Paper], labels: list[Label], *, condition: str,
            caps: Any, seed: int, attempt: int) -> AgentHopEpisode:
    """One attempt of ``item`` under ``condition``: a fresh sandbox and context."""
    ctx = context(item, graph, papers, labels, condition, caps, seed, attempt)
    return AgentHopEpisode(ctx, Sandbox(item, graph, papers, prompts.disabled_tools(condition)), item, condition)
