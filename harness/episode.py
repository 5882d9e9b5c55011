"""What the agent loop needs from a benchmark for one attempt of one sample: an :class:`Episode`.

The loop (harness/loop.py) owns the rules every benchmark shares: turns, caps, token accounting,
retries, budget rejections, the rows of the trajectory store. The episode, built by the benchmark
(its registry entry's ``episode`` hook), owns what is the benchmark's: the prompts and tool schemas
(its :class:`~agenthop.harness.backends.base.SampleContext`), what each tool costs and does, which
tool ends the attempt with an answer, how an answer is scored, the agent-visible fixed texts, and the
columns of its own that the store records per call and per trajectory (nullable columns of the
shared tables, docs/formats.md#trajectory-store).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .backends.base import SampleContext


@dataclass(slots=True)
class Answer:
    """The scored answer of an attempt (or the absence of one)."""

    is_correct: bool
    #: the shared score (1/0 for right/wrong benchmarks, graded otherwise; None when not scored here)
    score: float | None
    #: the trajectory's answer columns (predicted_answer, reasoning, answer_json and the benchmark's own)
    columns: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class CallResult:
    """One executed tool call."""

    text: str  # agent-visible result (the loop appends the status footer)
    cost: int  # budget points charged
    status: str  # the shared status vocabulary
    #: the benchmark's own tool_calls columns for this call (nullable shared columns)
    columns: dict[str, Any] = field(default_factory=dict)
    #: the answer, when this call was the answer tool
    answer: Answer | None = None
    #: the source's error type when status is ``tool_error``
    error_type: str | None = None


class Episode(Protocol):
    """One attempt's benchmark side (see the module docstring)."""

    #: prompts, tool schemas and what backends may know of the sample
    context: SampleContext
    #: tools whose calls are rejected without running (an ablation condition)
    disabled_tools: frozenset[str]
    #: the tool whose executed call ends the attempt (after its turn) with an answer
    answer_tool: str
    #: statuses counted in ``trajectories.tool_errors``
    error_statuses: frozenset[str]

    def cost(self, tool: str) -> int:
        """Budget points ``tool`` costs (0 for unknown names)."""
        ...

    def execute(self, tool: str, args: Any) -> CallResult:
        """Run one call (unknown names and bad arguments included: a status says what happened)."""
        ...

    def emitted_columns(self, tool: str, args: Any) -> dict[str, Any]:
        """The benchmark's call columns of a call that did not run (rejected, not executed)."""
        ...

    def no_answer(self) -> Answer:
        """The answer columns and score of an attempt that ended without an answer."""
        ...

    def nudge(self) -> str:
        """The user message after a text-only turn."""
        ...

    def footer(self, turn: int, tokens_used: int, budget_used: int) -> str:
        """The status line appended to every tool result and nudge."""
        ...

    def rejected_budget_text(self, remaining: int, tool: str, cost: int) -> str: ...

    def rejected_disabled_text(self, tool: str) -> str: ...

    #: the user message after a turn that left no budget
    budget_advisory: str


class TextAnswerEpisode(Episode, Protocol):
    """An episode whose answer is the model's final text, not an answer tool's call (optional: the
    loop reads ``text_is_answer`` with a default of False). A reply without a tool call ends the attempt
    as ``answer``; an attempt that a cap or an error ends is scored on the last text the model wrote."""

    text_is_answer: bool

    def answer_from_text(self, text: str | None, terminated_by: str) -> Answer:
        """The answer a final text gives (``text`` None when the model wrote none)."""
        ...
