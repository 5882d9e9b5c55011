"""A hand-built one-item release (Item, Graph, Papers, Labels) for backend trajectory tests.

Seed paper S (full text) cites gold paper G (full text, sections 'Introduction' and 'Results')
and M (metadata only). The correct answer is C (index 2).
"""

from __future__ import annotations

from agenthop.harness.backends.base import SampleContext
from agenthop.harness.benchmarks.agenthop.model import MT, ST, Graph, Item, Label, Node, Paper, Section
from agenthop.harness.benchmarks.agenthop import prompts

SAMPLE_ID = "tiny-001"
SEED_ID, GOLD_ID, META_ID = "p_seed", "p_gold", "p_meta"
SEED_ARXIV, GOLD_ARXIV = "2301.00001", "2301.00002"
RESULTS_TEXT = "Widget accuracy rose from 61.0% to 74.5% when the sprocket loss was added."


def item() -> Item:
    assert MT != ST
    return Item(
        id=SAMPLE_ID,
        question_type=ST,
        depth=1,
        reasoning_type="RESULT",
        cognitive_skill=None,
        venue="NeurIPS",
        consensus_tier=None,
        question="By how much did the cited work's auxiliary loss improve widget accuracy?",
        options=("2.1 points", "7.0 points", "13.5 points", "20.0 points"),
        correct_index=2,
        distractor_types=("numeric", "numeric", "correct", "numeric"),
        seed_paper_id=SEED_ID,
        seed_arxiv_id=SEED_ARXIV,
        seed_title="Seed Paper on Widgets",
        gold_paper_ids=(GOLD_ID,),
        gold_arxiv_ids=(GOLD_ARXIV,),
    )


def graph() -> Graph:
    nodes = {
        SEED_ID: Node(SEED_ID, "Seed Paper on Widgets", SEED_ARXIV, 2024, "We study widgets."),
        GOLD_ID: Node(GOLD_ID, "Sprocket Losses for Widget Models", GOLD_ARXIV, 2023, "A sprocket loss."),
        META_ID: Node(META_ID, "An Old Survey of Gadgets", "", 2019, "Gadgets, surveyed."),
    }
    return Graph(sample_id=SAMPLE_ID, nodes=nodes, edges={SEED_ID: (GOLD_ID, META_ID)})


def papers() -> dict[str, Paper]:
    return {
        SEED_ARXIV: Paper(SEED_ARXIV, "Seed Paper on Widgets", (
            Section("Introduction", "Widgets matter. We build on the sprocket loss [2]."),
            Section("Method", "Our method reuses the sprocket loss."),
        )),
        GOLD_ARXIV: Paper(GOLD_ARXIV, "Sprocket Losses for Widget Models", (
            Section("Introduction", "We introduce the sprocket loss."),
            Section("Results", RESULTS_TEXT),
        )),
    }


def labels() -> list[Label]:
    return [Label("Sprocket Losses for Widget Models", GOLD_ARXIV, "Results", "direct")]


def context() -> SampleContext:
    """The item's conversation context with every tool (condition ``full``), prompts "SYS" / "QUESTION"."""
    return SampleContext(item=item(), system_prompt="SYS", user_prompt="QUESTION",
                         tools=prompts.tool_specs("full"), condition="full")
