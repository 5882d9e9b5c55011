"""The agent loop's rules, pinned to the reference harness (and docs/harness.md#deliberate-differences / docs/formats.md#trajectory-store)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agenthop.harness.backends.base import BackendError, TransientBackendError
from agenthop.harness.backends.scripted import ScriptedBackend, ScriptExhausted, call, reply, say
from agenthop.harness.benchmarks.agenthop.model import Graph, Item, Label, Node, Paper, Section
from agenthop.harness.loop import AttemptResult, Caps, LoopConfig, run_sample
from agenthop.harness.benchmarks.agenthop import prompts
from agenthop.schemas.trajectory import MESSAGES, TOOL_CALLS, TRAJECTORIES, TURNS

GOLD = Paper("2302.00002", "Gold", (Section("Introduction", "Intro."), Section("Results", "Gold result.")))
SEEDP = Paper("2302.00001", "Seed", (Section("Introduction", "Seed intro."),))
PAPERS = {p.arxiv_id: p for p in (GOLD, SEEDP)}
GRAPH = Graph(
    "st_0007",
    {
        "S": Node("S", "Seed title", "2302.00001", 2024, "Seed abstract."),
        "G": Node("G", "Gold title", "2302.00002", 2022, "Gold abstract."),
        "M": Node("M", "Meta title", "", 2021, "Meta abstract."),
    },
    {"S": ("G", "M")},
)
ITEM = Item(
    id="st_0007", question_type="single-target", depth=1, reasoning_type="RESULT",
    cognitive_skill="retrieve", venue="ACL", consensus_tier="gold", question="What did Gold report?",
    options=("alpha", "beta", "gamma", "delta"), correct_index=1, distractor_types=None,
    seed_paper_id="S", seed_arxiv_id="2302.00001", seed_title="Seed title",
    gold_paper_ids=("G",), gold_arxiv_ids=("2302.00002",),
)
LABELS = [Label("Gold", "2302.00002", "Results", "direct")]


class Sleeps:
    """An injectable sleep that records the requested waits and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def run(script: list[Any], caps: Caps = Caps(), condition: str = "full",
        record_messages: bool = False) -> tuple[list[AttemptResult], ScriptedBackend, Sleeps]:
    backend = ScriptedBackend(script)
    sleeps = Sleeps()
    cfg = LoopConfig(caps=caps, condition=condition, sleep=sleeps, record_messages=record_messages)
    results = asyncio.run(run_sample(ITEM, GRAPH, PAPERS, LABELS, backend, cfg, seed=7))
    return results, backend, sleeps


def info(pid: str = "G") -> Any:
    return call("get_paper_info", paper_id=pid)


def submit(letter: str = "B") -> Any:
    return call("submit_answer", answer=letter, reasoning="why")


# --------------------------------------------------------------------------------------------


def test_footer_exact_text() -> None:
    assert prompts.footer(3, 12345, 7) == "\nTurn: 3  |  Tokens used: 12,345  |  Budget used: 7"
    assert prompts.footer(1, 999, 0) == "\nTurn: 1  |  Tokens used: 999  |  Budget used: 0"


def test_same_footer_on_every_result_of_a_turn_computed_after_the_turn() -> None:
    script = [
        reply(info(), call("list_sections", paper_id="G"), call("read_section", paper_id="G", section="B"),
              prompt=1000, completion=234),
        reply(submit(), prompt=2000, completion=10),
    ]
    (res,), backend, _ = run(script)
    tools = backend.conversations[0].tool_messages()
    ft = "\nTurn: 1  |  Tokens used: 1,234  |  Budget used: 7"
    assert len(tools) == 4  # three results of turn 1, one of the submit turn
    assert all(t.endswith(ft) for t in tools[:3])
    assert tools[2] == "=== Results ===\n\nGold result." + ft
    assert tools[3] == "Answer submitted: B\nTurn: 2  |  Tokens used: 3,244  |  Budget used: 7"


def test_parallel_calls_charged_individually() -> None:
    script = [reply(info(), call("list_sections", paper_id="G"), call("read_section", paper_id="G", section="(b)")),
              reply(submit())]
    (res,), _, _ = run(script)
    calls = res.tool_calls
    assert [c["tool"] for c in calls[:3]] == ["get_paper_info", "list_sections", "read_section"]
    assert [c["cost"] for c in calls] == [1, 1, 5, 0]
    assert [c["budget_after"] for c in calls] == [29, 28, 23, 23]
    assert [c["seq"] for c in calls] == [0, 1, 2, 3]
    assert [c["call_index"] for c in calls] == [0, 1, 2, 0]
    assert [c["turn"] for c in calls] == [0, 0, 0, 1]
    assert calls[2]["resolved_section_index"] == 1 and calls[2]["resolved_header"] == "Results"
    turn0 = res.turns[0]
    assert (turn0["n_tool_calls"], turn0["budget_before"], turn0["budget_after"]) == (3, 30, 23)
    t = res.trajectory
    assert (t["terminated_by"], t["budget_used"], t["is_correct"], t["predicted_index"]) == ("answer", 7, True, 1)
    assert (t["total_turns"], t["total_tokens"]) == (2, 220)


def test_two_consecutive_rejections_end_as_budget() -> None:
    script = [
        reply(call("read_section", paper_id="G", section="Results")),  # 5 -> 0 left, advisory
        reply(info()),  # rejected (1)
        reply(info()),  # rejected (2) -> budget
    ]
    (res,), backend, _ = run(script, caps=Caps(budget=5))
    conv = backend.conversations[0]
    assert res.trajectory["terminated_by"] == "budget"
    assert [c["status"] for c in res.tool_calls] == ["ok", "rejected_budget", "rejected_budget"]
    assert [c["cost"] for c in res.tool_calls] == [5, 0, 0]
    rejection = ("REJECTED: Insufficient budget (0 remaining, get_paper_info costs 1). You cannot use this "
                 "tool. Call submit_answer immediately with your best guess based on evidence gathered so far.")
    assert conv.tool_messages()[1] == rejection + "\nTurn: 2  |  Tokens used: 220  |  Budget used: 5"
    # the advisory follows every turn that ends with no budget left (turns 1 and 2; turn 3 stopped)
    advisory = "Budget exhausted. You MUST call submit_answer now with your best guess."
    assert conv.user_messages()[1:] == [advisory, advisory]
    assert res.trajectory["tool_errors"] == 0 and res.trajectory["budget_used"] == 5


def test_two_rejections_in_one_parallel_turn_end_as_budget() -> None:
    script = [reply(call("read_section", paper_id="G", section="A"), info(), info(), submit())]
    (res,), _, _ = run(script, caps=Caps(budget=5))
    # the submit after the two rejections still runs: an answer ends the attempt first
    assert res.trajectory["terminated_by"] == "answer"
    (res,), _, _ = run([reply(call("read_section", paper_id="G", section="A"), info(), info())], caps=Caps(budget=5))
    assert res.trajectory["terminated_by"] == "budget"
    assert res.trajectory["total_turns"] == 1


def test_a_think_between_rejections_resets_the_count() -> None:
    script = [
        reply(call("read_section", paper_id="G", section="A")),
        reply(info()),  # rejected (1)
        reply(call("think", reasoning="hmm")),  # executed: resets to 0
        reply(info()),  # rejected (1)
        reply(submit("C")),
    ]
    (res,), _, _ = run(script, caps=Caps(budget=5))
    t = res.trajectory
    assert (t["terminated_by"], t["predicted_index"], t["is_correct"]) == ("answer", 2, False)
    assert [c["status"] for c in res.tool_calls] == ["ok", "rejected_budget", "ok", "rejected_budget", "ok"]


def test_disabled_calls_do_not_touch_the_rejection_count() -> None:
    script = [
        reply(call("read_section", paper_id="G", section="A")),
        reply(info(), call("search_papers", query="gold"), info()),
    ]
    (res,), backend, _ = run(script, caps=Caps(budget=5), condition="no_search")
    assert [c["status"] for c in res.tool_calls] == ["ok", "rejected_budget", "rejected_disabled", "rejected_budget"]
    assert res.trajectory["terminated_by"] == "budget"
    assert backend.conversations[0].tool_messages()[2].startswith(
        "REJECTED: Tool 'search_papers' is disabled in this run. Use only the tools listed in the system prompt.\n"
        "Turn: 2")


def test_token_overflow_ends_as_token_limit_and_calls_are_not_executed() -> None:
    script = [
        reply(info(), prompt=600, completion=100),  # 700
        reply(info(), call("read_section", paper_id="G", section="A"), prompt=300, completion=0,
              cache_creation=1, cache_read=5000),  # 1001 > 1000 (cache reads excluded)
    ]
    (res,), backend, _ = run(script, caps=Caps(max_total_tokens=1000))
    t = res.trajectory
    assert t["terminated_by"] == "token_limit"
    assert (t["total_tokens"], t["cache_read_tokens"], t["cache_creation_tokens"]) == (1001, 5000, 1)
    assert t["budget_used"] == 1 and t["total_turns"] == 2
    last = res.turns[-1]
    assert (last["role"], last["n_tool_calls"], last["prompt_tokens"], last["cumulative_tokens"]) == (
        "assistant", 2, 300, 1001)
    assert [(c["status"], c["cost"], c["output_chars"]) for c in res.tool_calls[1:]] == [
        ("not_executed", 0, 0), ("not_executed", 0, 0)]
    assert [c["seq"] for c in res.tool_calls] == [0, 1, 2]
    assert res.tool_calls[2]["paper_id"] == "G" and res.tool_calls[2]["section_query"] == "A"
    assert len(backend.conversations[0].tool_messages()) == 1  # nothing ran after the cap


def test_token_cap_is_strict() -> None:
    script = [reply(info(), prompt=900, completion=100), reply(submit(), prompt=0, completion=0)]
    (res,), _, _ = run(script, caps=Caps(max_total_tokens=1000))
    assert res.trajectory["terminated_by"] == "answer"  # exactly 1000 is not over the cap


def test_max_turns() -> None:
    script = [reply(call("think", reasoning=str(i))) for i in range(3)]
    (res,), _, _ = run(script, caps=Caps(max_turns=3))
    t = res.trajectory
    assert (t["terminated_by"], t["total_turns"], t["predicted_index"], t["predicted_answer"]) == (
        "max_turns", 3, -1, None)
    assert t["is_correct"] is False


def test_text_only_turn_gets_the_nudge_with_footer() -> None:
    script = [say("Let me think about this.", prompt=500, completion=500), reply(submit())]
    (res,), backend, _ = run(script)
    nudge = ("Please use the available tools to investigate, or call submit_answer if you're ready."
             "\nTurn: 1  |  Tokens used: 1,000  |  Budget used: 0")
    assert backend.conversations[0].user_messages()[1] == nudge
    assert res.turns[0]["n_tool_calls"] == 0 and res.turns[0]["content_chars"] == 24
    assert res.trajectory["terminated_by"] == "answer" and res.trajectory["total_turns"] == 2


def test_empty_response_errors_and_the_sample_is_retried() -> None:
    script = [say("", prompt=50, completion=0), reply(submit(), prompt=70, completion=5)]
    results, backend, sleeps = run(script)
    assert [r.trajectory["attempt"] for r in results] == [0, 1]
    assert [r.trajectory["terminated_by"] for r in results] == ["error", "answer"]
    assert [r.trajectory["is_final"] for r in results] == [False, True]
    # each attempt carries only its own tokens
    assert [r.trajectory["total_tokens"] for r in results] == [50, 75]
    assert all(row["attempt"] == 1 for row in results[1].turns + results[1].tool_calls)
    assert sleeps.waits == [30.0]
    assert [c.attempt for c in backend.contexts] == [0, 1]
    assert len(backend.conversations) == 2


def test_at_most_three_attempts() -> None:
    results, _, sleeps = run([say(""), say(""), say("")])
    assert [r.trajectory["terminated_by"] for r in results] == ["error"] * 3
    assert [r.trajectory["is_final"] for r in results] == [False, False, True]
    assert sleeps.waits == [30.0, 60.0]


def test_transient_errors_are_retried_without_using_a_turn() -> None:
    script = [TransientBackendError("429 rate limited"), TransientBackendError("503"), reply(info()), reply(submit())]
    (res,), backend, sleeps = run(script)
    t = res.trajectory
    assert (t["transient_retry_count"], t["api_error_count"], t["total_turns"]) == (2, 0, 2)
    # no server hint: full jitter over [0, 1 s], then [0, 2 s]; deterministic per (seed, attempt)
    assert len(sleeps.waits) == 2 and 0 <= sleeps.waits[0] <= 1.0 and 0 <= sleeps.waits[1] <= 2.0
    assert t["wait_s"] == pytest.approx(sum(sleeps.waits))
    assert run(script)[2].waits == sleeps.waits
    assert [r["turn"] for r in res.turns] == [0, 1]
    assert backend.conversations[0].tool_messages()[0].endswith("Turn: 1  |  Tokens used: 110  |  Budget used: 1")


def test_transient_backoff_caps_and_abandons_after_ten_retries() -> None:
    script = [TransientBackendError("overloaded")] * 11 + [reply(submit())]
    results, _, sleeps = run(script)
    first = results[0]
    assert first.trajectory["terminated_by"] == "error"
    assert first.trajectory["transient_retry_count"] == 11
    assert [r["role"] for r in first.turns] == ["error"]
    backoffs, retry = sleeps.waits[:10], sleeps.waits[10:]  # ten backoffs, then the sample retry
    assert all(0 <= w <= min(60.0, 2.0 ** k) for k, w in enumerate(backoffs)) and retry == [30.0]
    assert max(backoffs) > 2.0  # the bound grows
    assert results[1].trajectory["terminated_by"] == "answer"


def test_non_transient_errors_use_turns_and_five_in_a_row_end_the_attempt() -> None:
    script = [BackendError("400 bad request"), reply(info()), reply(submit())]
    (res,), backend, sleeps = run(script)
    assert [r["role"] for r in res.turns] == ["error", "assistant", "assistant"]
    assert res.turns[0]["content_chars"] == len("400 bad request")
    assert res.trajectory["api_error_count"] == 1 and res.trajectory["total_turns"] == 3
    # the footer's turn number counts the error turn
    assert backend.conversations[0].tool_messages()[0].endswith("Turn: 2  |  Tokens used: 110  |  Budget used: 1")
    assert sleeps.waits == [2.0]

    results, _, sleeps = run([BackendError("x")] * 5 + [reply(submit())])
    assert results[0].trajectory["terminated_by"] == "error"
    assert results[0].trajectory["api_error_count"] == 5 and results[0].trajectory["total_turns"] == 5
    assert sleeps.waits == [2.0, 4.0, 8.0, 15.0, 30.0]
    assert results[1].trajectory["terminated_by"] == "answer"


def test_errors_on_the_last_turns_end_as_max_turns() -> None:
    (res,), _, _ = run([reply(info()), BackendError("boom")], caps=Caps(max_turns=2))
    assert res.trajectory["terminated_by"] == "max_turns"


def test_calls_after_submit_still_run_and_the_last_submit_wins() -> None:
    script = [reply(submit("A"), info(), call("list_sections", paper_id="G"), submit("B"))]
    (res,), _, _ = run(script)
    t = res.trajectory
    assert (t["terminated_by"], t["predicted_answer"], t["predicted_index"], t["is_correct"]) == (
        "answer", "B", 1, True)
    assert t["budget_used"] == 2 and t["total_turns"] == 1
    assert [c["status"] for c in res.tool_calls] == ["ok"] * 4


def test_malformed_submit_ends_as_answer_with_index_minus_one() -> None:
    script = [reply(call("submit_answer", reasoning="no letter"))]
    (res,), _, _ = run(script)
    t = res.trajectory
    assert (t["terminated_by"], t["predicted_index"], t["predicted_answer"], t["tool_errors"]) == (
        "answer", -1, None, 1)
    assert t["reasoning"] == "no letter" and t["is_correct"] is False
    (res,), _, _ = run([reply(call("submit_answer", answer="E", reasoning="r"))])
    assert (res.trajectory["predicted_answer"], res.trajectory["predicted_index"]) == ("E", -1)


def test_unknown_tools_and_bad_args_are_tool_errors_and_reset_the_count() -> None:
    script = [
        reply(call("read_section", paper_id="G", section="A")),
        reply(info()),  # rejected (1)
        reply(call("fly")),  # executed (cost 0): resets
        reply(info(), call("get_references", _raw="{oops")),  # rejected (1), rejected (2)
    ]
    (res,), _, _ = run(script, caps=Caps(budget=5))
    assert [c["status"] for c in res.tool_calls] == [
        "ok", "rejected_budget", "unknown_tool", "rejected_budget", "rejected_budget"]
    assert res.trajectory["terminated_by"] == "budget"
    assert res.trajectory["tool_errors"] == 1
    (res,), _, _ = run([reply(call("get_paper_info", _raw="{oops")), reply(submit())])
    assert res.tool_calls[0]["status"] == "invalid_args" and res.tool_calls[0]["cost"] == 1
    assert res.tool_calls[0]["args_json"] == '{"_raw": "{oops"}'
    assert res.trajectory["tool_errors"] == 1 and res.trajectory["budget_used"] == 1


def test_row_keys_are_the_schema_columns_minus_run_id() -> None:
    script = [BackendError("x"), say("hmm"), reply(info(), submit())]
    (res,), _, _ = run(script, record_messages=True)

    def cols(schema: Any) -> set[str]:
        return set(schema.names) - {"run_id"}

    assert set(res.trajectory) == cols(TRAJECTORIES)
    assert all(set(r) == cols(TURNS) for r in res.turns)
    assert all(set(r) == cols(TOOL_CALLS) for r in res.tool_calls)
    assert res.messages and all(set(r) == cols(MESSAGES) for r in res.messages)
    assert [m["role"] for m in res.messages] == ["system", "user", "assistant", "user", "assistant", "tool", "tool"]
    assert [m["idx"] for m in res.messages] == list(range(7))
    (res,), _, _ = run([reply(submit())])
    assert res.messages == []  # not recorded unless asked


def test_context_carries_prompts_specs_and_labels() -> None:
    (_,), backend, _ = run([reply(submit())])
    ctx = backend.contexts[0]
    assert ctx.user_prompt == ("Please solve the question above using the available tools. "
                               "Start by examining the seed paper.")
    assert [t.name for t in ctx.tools] == list(prompts.TOOL_COSTS)
    assert ctx.labels == LABELS and ctx.graph is GRAPH and ctx.seed == 7 and ctx.condition == "full"
    assert "(A) alpha\n(B) beta\n(C) gamma\n(D) delta" in ctx.system_prompt


def test_script_exhaustion_is_loud() -> None:
    with pytest.raises(ScriptExhausted):
        run([reply(info())])


# --------------------------------------------------------------------------------------------
# Prompts per condition


def test_full_prompt_structure() -> None:
    p = prompts.system_prompt(ITEM, "full", Caps(budget=30, max_turns=20, max_total_tokens=200_000))
    order = ["## Task Overview", "## Tools", "### Navigation Tools (1 point each)", "### Reading Tool (5 points)",
             "### Free Tools (0 points)", "## Constraints", "## Seed Paper", "## Question", "## Answer Options"]
    positions = [p.index(h) for h in order]
    assert positions == sorted(positions)
    assert "You have seven tools." in p
    for name in prompts.TOOL_COSTS:
        assert f"- **{name}**(" in p
    assert "- **search_papers**(query, top_k) — " in p
    assert "`Turn: T  |  Tokens used: U  |  Budget used: B`" in p
    assert "**Budget**: 30 points" in p and "at most 20 conversational turns" in p and "200,000" in p
    assert "- **ID**: S\n- **Title**: Seed title" in p
    assert "(A) alpha\n(B) beta\n(C) gamma\n(D) delta" in p


def test_no_search_prompt_and_schema() -> None:
    p = prompts.system_prompt(ITEM, "no_search")
    assert "search_papers" not in p and "You have six tools." in p
    assert [t.name for t in prompts.tool_specs("no_search")] == [
        "get_paper_info", "get_references", "list_sections", "read_section", "think", "submit_answer"]
    assert prompts.disabled_tools("no_search") == frozenset({"search_papers"})


def test_closed_book_prompt_describes_no_tools_or_budget() -> None:
    p = prompts.system_prompt(ITEM, "closed_book")
    for word in ("read_section", "get_references", "search_papers", "list_sections", "citation graph",
                 "Budget", "budget", "points", "seed", "Turn:"):
        assert word not in p
    assert "own knowledge" in p and "submit_answer" in p and "(D) delta" in p
    assert [t.name for t in prompts.tool_specs("closed_book")] == ["think", "submit_answer"]
    assert "tools" not in prompts.first_user_message("closed_book")


def test_prompt_wording_is_a_listed_difference_and_the_fixed_texts_are_the_references() -> None:
    # the texts the reference fixes, verbatim (docs/harness.md)
    assert prompts.first_user_message("full") == (
        "Please solve the question above using the available tools. Start by examining the seed paper.")
    assert prompts.first_user_message("no_search") == prompts.first_user_message("full")
    assert prompts.NUDGE == "Please use the available tools to investigate, or call submit_answer if you're ready."
    assert prompts.BUDGET_ADVISORY == "Budget exhausted. You MUST call submit_answer now with your best guess."
    # the prose is ours: docs/harness.md lists it among the deliberate differences
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "harness.md").read_text(encoding="utf-8")
    differences = doc.split("## Deliberate differences from the reference", 1)[1].split("\n## ", 1)[0]
    assert "**Prompt wording.**" in differences and "tool-schema descriptions" in differences


def test_closed_book_rejects_navigation_calls() -> None:
    (res,), backend, _ = run([reply(call("get_references", paper_id="S")), reply(submit())], condition="closed_book")
    assert res.tool_calls[0]["status"] == "rejected_disabled" and res.tool_calls[0]["cost"] == 0
    assert res.trajectory["budget_used"] == 0 and res.trajectory["terminated_by"] == "answer"
    assert "think" in [t.name for t in backend.contexts[0].tools]


def test_tool_schemas() -> None:
    specs = {t.name: t.parameters for t in prompts.tool_specs("full")}
    assert specs["read_section"]["required"] == ["paper_id", "section"]
    assert specs["search_papers"]["required"] == ["query"]
    assert specs["search_papers"]["properties"]["top_k"]["default"] == 5
    assert "max: 10" in specs["search_papers"]["properties"]["top_k"]["description"]
    assert specs["submit_answer"]["properties"]["answer"]["enum"] == ["A", "B", "C", "D"]
    assert specs["submit_answer"]["required"] == ["answer", "reasoning"]
    assert specs["think"]["required"] == ["reasoning"]
    assert all(s["type"] == "object" for s in specs.values())


def test_unknown_condition_is_a_user_error() -> None:
    from agenthop.harness.errors import AgentHopError

    with pytest.raises(AgentHopError, match="unknown condition 'oracle'"):
        LoopConfig(condition="oracle")


def test_a_callable_step_sees_the_conversation() -> None:
    def pick_from_listing(conv: Any) -> Any:
        listing = conv.tool_messages()[-1]
        line = next(ln for ln in listing.splitlines() if "Results" in ln)
        return reply(call("read_section", paper_id="G", section=line.split(")")[0].strip(" (")))

    script = [reply(call("list_sections", paper_id="G")), pick_from_listing, reply(submit())]
    (res,), backend, _ = run(script)
    assert res.tool_calls[1]["section_query"] == "B"
    assert res.tool_calls[1]["resolved_header"] == "Results"
    assert backend.conversations[0].calls_seen == [2, 4, 6]  # history length at each model call
