"""A minimal episode (harness/episode.py) for native-search trajectories through the real loop.

One question, native search on, one function tool ``final_answer`` (the answer tool, free) and the
benchmark columns of a searching benchmark: the query of a ``web_search`` call in ``search_query``,
the URL of a page read in ``paper_id`` (any nullable tool_calls column does for the test). Nothing
here comes from a benchmark module, so the tests do not depend on one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agenthop.harness.backends.base import SampleContext, ToolSpec
from agenthop.harness.episode import Answer, CallResult

ANSWER_TOOL = "final_answer"
GOLD = "Kepler-186f"
ANSWER_TOOL_DEF = ToolSpec(ANSWER_TOOL, "Give the final answer.",
                       {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]})
NUDGE = "Continue, then call final_answer."


@dataclass(slots=True)
class Question:
    id: str = "nq-001"
    text: str = "Which exoplanet was the first Earth-size planet found in a habitable zone?"


@dataclass(slots=True)
class NativeSearchEpisode:
    context: SampleContext
    disabled_tools: frozenset[str] = frozenset()
    answer_tool: str = ANSWER_TOOL
    error_statuses: frozenset[str] = frozenset({"tool_error", "invalid_args", "unknown_tool"})
    budget_advisory: str = "No budget left."
    executed: list[tuple[str, Any]] = field(default_factory=list)

    def cost(self, tool: str) -> int:
        return 0

    def execute(self, tool: str, args: Any) -> CallResult:
        self.executed.append((tool, args))
        if tool != ANSWER_TOOL:
            return CallResult(f"unknown tool {tool}", 0, "unknown_tool", self.emitted_columns(tool, args))
        answer = str(args.get("answer", "")) if isinstance(args, dict) else ""
        correct = answer.strip() == GOLD
        return CallResult("recorded", 0, "ok", self.emitted_columns(tool, args),
                          Answer(correct, 1.0 if correct else 0.0, {"predicted_answer": answer}))

    def emitted_columns(self, tool: str, args: Any) -> dict[str, Any]:
        a = args if isinstance(args, dict) else {}
        return {"search_query": a.get("query") if tool == "web_search" else None,
                "paper_id": a.get("url") if tool in ("open_page", "find_in_page") else None}

    def no_answer(self) -> Answer:
        return Answer(False, 0.0, {"predicted_answer": None})

    def nudge(self) -> str:
        return NUDGE

    def footer(self, turn: int, tokens_used: int, budget_used: int) -> str:
        return f"\n[turn {turn}]"

    def rejected_budget_text(self, remaining: int, tool: str, cost: int) -> str:
        return "rejected"

    def rejected_disabled_text(self, tool: str) -> str:
        return "disabled"


def context(native_search: bool = True) -> SampleContext:
    q = Question()
    return SampleContext(item=q, system_prompt="Answer with the help of web search.", user_prompt=q.text,
                         tools=[ANSWER_TOOL_DEF], condition="full", native_search=native_search)


def run_native(backend: Any, waits: Any, **cfg: Any) -> list[Any]:
    """One sample of the native-search episode through ``run_episodes``; the backend is closed after."""
    from agenthop.harness.loop import Caps, LoopConfig, run_episodes

    from .loop_driver import run

    config = LoopConfig(caps=cfg.pop("caps", Caps()), sleep=waits, record_messages=True, max_attempts=1, **cfg)
    return run(run_episodes(lambda attempt: NativeSearchEpisode(context()), backend, config), backend)
