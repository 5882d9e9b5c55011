"""Agent-visible texts: system prompts, first user messages, tool schemas, footer, nudges, rejections.

Conditions (docs/harness.md#deliberate-differences, ``schemas.trajectory.CONDITIONS``):

* ``full``: the reference ``direct`` prompt structure (the reference harness): intro, Task Overview, Tools
  (navigation 1 point / reading 5 points / free), Constraints with the caps and the status-line
  explanation, Seed Paper, Question, Answer Options; all seven tools in the schema.
* ``no_search``: the same without ``search_papers`` (schema, bullet, "six tools").
* ``closed_book``: a prompt that describes no tools, navigation or budget and asks for an answer from
  the model's own knowledge; only ``think`` and ``submit_answer`` are offered.

Texts the reference fixes verbatim (footer, nudge, advisory, rejections, first user message of the
tool conditions) are reproduced exactly; the prose of the prompt and of the schema descriptions is
our own and, unlike the reference's schema text, promises no venue or citation context (never
returned by the tools).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agenthop.schemas.trajectory import CONDITIONS
from ...backends.base import ToolSpec
from .model import Item
from ...errors import AgentHopError
from .tools import TOOL_COSTS, TOOL_NAMES

# ---------------------------------------------------------------------------------------------
# Fixed texts of the loop (the reference harness)

NUDGE = "Please use the available tools to investigate, or call submit_answer if you're ready."
CLOSED_BOOK_NUDGE = "Please call submit_answer with your chosen option (A, B, C, or D)."
BUDGET_ADVISORY = "Budget exhausted. You MUST call submit_answer now with your best guess."


def footer(turn: int, tokens_used: int, budget_used: int) -> str:
    """Status footer appended to every tool result and nudge: turn is 1-based (error turns count),
    tokens are the cumulative prompt + completion + cache-write tokens including the current call."""
    return f"\nTurn: {turn}  |  Tokens used: {tokens_used:,}  |  Budget used: {budget_used}"


def rejected_budget_text(remaining: int, name: str, cost: int) -> str:
    return (
        f"REJECTED: Insufficient budget ({remaining} remaining, {name} costs {cost}). "
        "You cannot use this tool. Call submit_answer immediately with your best guess based on "
        "evidence gathered so far."
    )


def rejected_disabled_text(name: str) -> str:
    return (
        f"REJECTED: Tool '{name}' is disabled in this run. "
        "Use only the tools listed in the system prompt."
    )


def nudge(condition: str) -> str:
    """The user message after a text-only turn (the loop appends the footer)."""
    return CLOSED_BOOK_NUDGE if condition == "closed_book" else NUDGE


# ---------------------------------------------------------------------------------------------
# Tool schemas (the reference harness: names, arguments, types, required, top_k default 5 / max 10, enum)


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


_TOOL_SCHEMAS: dict[str, ToolSpec] = {
    "get_paper_info": ToolSpec(
        "get_paper_info",
        "Get a paper's metadata: title, authors, year, abstract, and whether its full text is available.",
        _obj({"paper_id": {"type": "string", "description": "The paper ID (Semantic Scholar paper ID)."}},
             ["paper_id"]),
    ),
    "get_references": ToolSpec(
        "get_references",
        "Get the papers cited by a paper. Returns each cited paper's ID, title, authors, year, and "
        "whether its full text is available.",
        _obj({"paper_id": {"type": "string", "description": "The paper ID whose references to list."}},
             ["paper_id"]),
    ),
    "search_papers": ToolSpec(
        "search_papers",
        "Keyword search over the papers available for this question. Returns the best-matching papers "
        "with their IDs, titles and abstracts.",
        _obj(
            {
                "query": {"type": "string", "description": "Search keywords."},
                "top_k": {
                    "type": "integer",
                    "description": "Number of results to return (default: 5, max: 10).",
                    "default": 5,
                },
            },
            ["query"],
        ),
    ),
    "list_sections": ToolSpec(
        "list_sections",
        "List a paper's sections with their sizes. Each section carries an alphabet alias such as "
        "(A), (B), ... that read_section accepts instead of the full header.",
        _obj({"paper_id": {"type": "string", "description": "The paper ID."}}, ["paper_id"]),
    ),
    "read_section": ToolSpec(
        "read_section",
        "Read the full text of one section of a paper. This is the most expensive tool; use it "
        "selectively.",
        _obj(
            {
                "paper_id": {"type": "string", "description": "The paper ID."},
                "section": {
                    "type": "string",
                    "description": "The section: its alias from list_sections (e.g. '(A)' or 'A'), its "
                    "full header, or a case-insensitive substring that matches exactly one header.",
                },
            },
            ["paper_id", "section"],
        ),
    ),
    "think": ToolSpec(
        "think",
        "Free scratchpad: plan next steps, review what you have learned, or reason about the evidence. "
        "Costs no budget.",
        _obj({"reasoning": {"type": "string", "description": "Your thoughts or interim reasoning."}},
             ["reasoning"]),
    ),
    "submit_answer": ToolSpec(
        "submit_answer",
        "Submit your final answer: exactly one option (A, B, C, or D), with your reasoning.",
        _obj(
            {
                "answer": {
                    "type": "string",
                    "enum": ["A", "B", "C", "D"],
                    "description": "Your chosen answer (A, B, C, or D).",
                },
                "reasoning": {"type": "string", "description": "Brief explanation of your choice."},
            },
            ["answer", "reasoning"],
        ),
    ),
}

_CLOSED_BOOK_TOOLS = ("think", "submit_answer")

#: Tools offered per condition, in reference order.
OFFERED_TOOLS: dict[str, tuple[str, ...]] = {
    "full": TOOL_NAMES,
    "no_search": tuple(n for n in TOOL_NAMES if n != "search_papers"),
    "closed_book": _CLOSED_BOOK_TOOLS,
}

#: Tools a condition disables: calls to them are rejected with ``rejected_disabled`` (cost 0).
DISABLED_TOOLS: dict[str, frozenset[str]] = {
    c: frozenset(TOOL_NAMES) - frozenset(OFFERED_TOOLS[c]) for c in OFFERED_TOOLS
}

assert set(OFFERED_TOOLS) == set(CONDITIONS)
assert set(TOOL_COSTS) == set(_TOOL_SCHEMAS)


def check_condition(condition: str) -> str:
    if condition not in OFFERED_TOOLS:
        raise AgentHopError(
            f"unknown condition {condition!r}; expected one of {', '.join(CONDITIONS)}"
        )
    return condition


def tool_specs(condition: str) -> list[ToolSpec]:
    """Tool schemas offered under ``condition`` (a new list; the specs are shared: do not mutate)."""
    return [_TOOL_SCHEMAS[n] for n in OFFERED_TOOLS[check_condition(condition)]]


def disabled_tools(condition: str) -> frozenset[str]:
    return DISABLED_TOOLS[check_condition(condition)]


# ---------------------------------------------------------------------------------------------
# System prompts


@dataclass(frozen=True, slots=True)
class PromptCaps:
    """The caps a prompt states (mirrors ``loop.Caps``; kept here so prompts need no loop import)."""

    budget: int = 30
    max_turns: int = 20
    max_total_tokens: int = 200_000


_INTRO = (
    "You are a research assistant answering a multi-hop scientific question. You will navigate a "
    "citation graph of academic papers with a set of tools and gather enough evidence from the papers "
    "to choose the correct answer."
)

_TASK_OVERVIEW = (
    "## Task Overview\n"
    "You start from a seed paper. The answer needs information from one or more papers reachable "
    "through the citation graph: papers cited by the seed, or papers cited by those papers (up to 2 "
    "hops). Explore the graph deliberately, read the relevant sections, and combine the evidence to "
    "choose the best answer."
)

_BULLETS: dict[str, str] = {
    "get_paper_info": "- **get_paper_info**(paper_id) — Returns a paper's title, authors, year, abstract, "
    "and whether its full text is available. Use it to judge quickly whether a paper is relevant "
    "before reading it.",
    "get_references": "- **get_references**(paper_id) — Returns the papers cited by a paper, with their "
    "IDs, titles, years, and whether their full text is available. This is your main tool for "
    "moving through the citation graph.",
    "search_papers": "- **search_papers**(query, top_k) — Keyword search over the papers available for "
    "this question, best matches first. Useful when you know the topic you need but not the paper.",
    "list_sections": "- **list_sections**(paper_id) — Returns the section names and sizes of a paper, "
    "each with a letter alias. Use it before read_section to find the section most likely to hold "
    "the evidence.",
    "read_section": "- **read_section**(paper_id, section) — Returns the full text of one section. This "
    "is expensive: use it only on a section you have reason to believe holds evidence for the "
    "question.",
    "think": "- **think**(reasoning) — Organise your thoughts, plan the next steps, or review the "
    "evidence so far. Use it whenever it helps before deciding what to do next.",
    "submit_answer": "- **submit_answer**(answer, reasoning) — Submit your final answer (A, B, C, or D) "
    "with brief reasoning. You may only submit once.",
}

_COUNT_WORDS = {7: "seven", 6: "six"}


def _tools_block(offered: tuple[str, ...]) -> str:
    nav = [_BULLETS[n] for n in ("get_paper_info", "get_references", "search_papers", "list_sections")
           if n in offered]
    return "\n".join(
        [
            "## Tools",
            "",
            f"You have {_COUNT_WORDS[len(offered)]} tools. Each tool call costs budget points, so plan "
            "your exploration.",
            "",
            "### Navigation Tools (1 point each)",
            "These tools help you find and identify papers. They are cheap: use them to orient yourself.",
            "",
            *nav,
            "",
            "### Reading Tool (5 points)",
            _BULLETS["read_section"],
            "",
            "### Free Tools (0 points)",
            _BULLETS["think"],
            _BULLETS["submit_answer"],
        ]
    )


def _constraints_block(caps: Any) -> str:
    return (
        "## Constraints\n"
        "You work under three independent limits. The run ends as soon as any one of them is hit:\n"
        f"- **Budget**: {caps.budget} points in total. Navigation tools cost 1 point; read_section "
        "costs 5 points.\n"
        f"- **Turns**: at most {caps.max_turns} conversational turns.\n"
        f"- **Tokens**: at most {caps.max_total_tokens:,} cumulative prompt + completion tokens for "
        "this question.\n"
        "\n"
        "After every tool result you will see a status line with the counters only:\n"
        "`Turn: T  |  Tokens used: U  |  Budget used: B`.\n"
        "It is up to you to keep track of these against the limits above.\n"
        "\n"
        "Spend your resources wisely:\n"
        "- Use the navigation tools (1 point) to identify the right papers and sections first.\n"
        "- Use read_section (5 points) only on sections you expect to contain relevant evidence.\n"
        "- Submit your answer once you have enough evidence; do not use up the budget exploring when "
        "you already have a solid basis for an answer."
    )


def _options(item: Item) -> str:
    return "\n".join(f"({chr(65 + i)}) {opt}" for i, opt in enumerate(item.options))


def _task_block(item: Item) -> str:
    return (
        "## Seed Paper\n"
        "Your starting point in the citation graph:\n"
        f"- **ID**: {item.seed_paper_id}\n"
        f"- **Title**: {item.seed_title}\n"
        "\n"
        "## Question\n"
        f"{item.question}\n"
        "\n"
        "## Answer Options\n"
        f"{_options(item)}\n"
        "\n"
        "Select exactly one option (A, B, C, or D) and submit it with submit_answer."
    )


def _closed_book_prompt(item: Item) -> str:
    return (
        "You are a research assistant answering a multiple-choice scientific question. Answer from "
        "your own knowledge of the scientific literature.\n"
        "\n"
        "Read the question and the four options carefully and consider which option is most "
        "consistent with what is known in the field: the claims each option makes, their technical "
        "plausibility and their specificity.\n"
        "\n"
        "## Question\n"
        f"{item.question}\n"
        "\n"
        "## Answer Options\n"
        f"{_options(item)}\n"
        "\n"
        "You may use think to reason first. You MUST then call submit_answer with exactly one option "
        "(A, B, C, or D) and your reasoning.\n"
    )


def system_prompt(item: Item, condition: str, caps: Any = PromptCaps()) -> str:
    """The system prompt of ``item`` under ``condition``; ``caps`` has budget, max_turns and
    max_total_tokens (``loop.Caps`` or :class:`PromptCaps`)."""
    check_condition(condition)
    if condition == "closed_book":
        return _closed_book_prompt(item)
    return (
        f"{_INTRO}\n\n{_TASK_OVERVIEW}\n\n{_tools_block(OFFERED_TOOLS[condition])}\n\n"
        f"{_constraints_block(caps)}\n\n{_task_block(item)}\n"
    )


_FIRST_USER = {
    "full": "Please solve the question above using the available tools. Start by examining the seed paper.",
    "no_search": "Please solve the question above using the available tools. Start by examining the seed "
    "paper.",
    "closed_book": "Please answer the question above from your own knowledge, then call submit_answer.",
}


def first_user_message(condition: str) -> str:
    return _FIRST_USER[check_condition(condition)]
