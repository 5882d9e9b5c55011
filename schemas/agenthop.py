"""Arrow schemas of the benchmark tables in the warehouse (docs/formats.md#benchmark-tables, schema ``raw``).

The release itself is JSONL (the reference harness); these schemas describe the flattened,
typed tables that ingest writes from a loaded release. They are also the column lists the dbt
staging models rely on.
"""

from __future__ import annotations

import pyarrow as pa

from .evolution import added_later

#: The tools of AgentHop's sandbox (docs/harness.md); any other name is an unknown tool.
TOOL_NAMES: tuple[str, ...] = (
    "get_paper_info",
    "get_references",
    "search_papers",
    "list_sections",
    "read_section",
    "think",
    "submit_answer",
)

#: Paper roles in ``item_papers``.
PAPER_ROLES: tuple[str, ...] = ("seed", "bridge", "gold")

#: Label relevance values in ``recall_labels``.
RELEVANCES: tuple[str, ...] = ("direct", "supporting")

ITEMS = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        # 'single-target' / 'multi-target' exactly as in the release
        pa.field("question_type", pa.string(), nullable=False),
        pa.field("depth", pa.int32(), nullable=False),
        pa.field("reasoning_type", pa.string(), nullable=False),
        pa.field("cognitive_skill", pa.string()),
        pa.field("venue", pa.string()),
        pa.field("consensus_tier", pa.string()),
        pa.field("question", pa.string(), nullable=False),
        pa.field("options", pa.list_(pa.string()), nullable=False),
        pa.field("correct_index", pa.int32(), nullable=False),
        pa.field("distractor_types", pa.list_(pa.string())),
        pa.field("seed_paper_id", pa.string(), nullable=False),
        pa.field("seed_arxiv_id", pa.string()),
        pa.field("seed_title", pa.string()),
        # stored as text: the release leaves its type open (the reference harness)
        pa.field("filter_agreement", pa.string()),
        pa.field("bridge_necessary", pa.bool_()),
        pa.field("item_order", pa.int32(), nullable=False),
        # added after the first release: optional on read (schemas/evolution.py; docs/interchange.md#sample-hash)
        added_later(pa.field("sample_hash", pa.string())),
    ]
)

ITEM_PAPERS = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("paper_id", pa.string(), nullable=False),
        pa.field("arxiv_id", pa.string()),
        pa.field("role", pa.string(), nullable=False),
        pa.field("rank", pa.int32(), nullable=False),
    ]
)

GRAPH_NODES = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("paper_id", pa.string(), nullable=False),
        pa.field("node_order", pa.int32(), nullable=False),
        pa.field("arxiv_id", pa.string()),
        pa.field("title", pa.string()),
        pa.field("year", pa.int32()),
        pa.field("abstract", pa.string()),
        pa.field("has_full_text", pa.bool_(), nullable=False),
    ]
)

GRAPH_EDGES = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("src_paper_id", pa.string(), nullable=False),
        pa.field("dst_paper_id", pa.string(), nullable=False),
        pa.field("rank", pa.int32(), nullable=False),
    ]
)

PAPERS = pa.schema(
    [
        pa.field("arxiv_id", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("n_sections", pa.int32(), nullable=False),
    ]
)

SECTIONS = pa.schema(
    [
        pa.field("arxiv_id", pa.string(), nullable=False),
        pa.field("section_index", pa.int32(), nullable=False),
        pa.field("alias", pa.string(), nullable=False),
        pa.field("header", pa.string()),
        pa.field("n_chars", pa.int32(), nullable=False),
        pa.field("text", pa.string()),
    ]
)

RECALL_LABELS = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("label_index", pa.int32(), nullable=False),
        pa.field("paper_title", pa.string()),
        pa.field("arxiv_id", pa.string()),
        pa.field("label_section", pa.string(), nullable=False),
        pa.field("relevance", pa.string(), nullable=False),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "items": ITEMS,
    "item_papers": ITEM_PAPERS,
    "graph_nodes": GRAPH_NODES,
    "graph_edges": GRAPH_EDGES,
    "papers": PAPERS,
    "sections": SECTIONS,
    "recall_labels": RECALL_LABELS,
}

KEYS: dict[str, tuple[str, ...]] = {
    "items": ("sample_id",),
    "item_papers": ("sample_id", "role", "rank"),
    "graph_nodes": ("sample_id", "paper_id"),
    "graph_edges": ("sample_id", "src_paper_id", "rank"),
    "papers": ("arxiv_id",),
    "sections": ("arxiv_id", "section_index"),
    "recall_labels": ("sample_id", "label_index"),
}
