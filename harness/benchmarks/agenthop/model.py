"""Typed objects of an AgentHop release (the reference harness).

The loader (``loader.py``) builds these from the four JSONL files; the generator
(``generator.py``) writes JSONL that loads into them; the sandbox and ingest consume them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ST = "single-target"
MT = "multi-target"


@dataclass(frozen=True, slots=True)
class Section:
    header: str
    text: str


@dataclass(frozen=True, slots=True)
class Paper:
    """One entry of ``paper_pool/papers.jsonl`` (deduplicated full text, keyed by arXiv id)."""

    arxiv_id: str
    title: str
    sections: tuple[Section, ...]


@dataclass(frozen=True, slots=True)
class Node:
    """One node of an item's citation neighbourhood (``graphs/full.jsonl``)."""

    paper_id: str
    title: str
    arxiv_id: str  # "" when the node has no arXiv id
    year: int | None
    abstract: str
    authors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Graph:
    """``nodes`` in insertion order (seed, depth-1, depth-2); ``edges`` in S2 reference order."""

    sample_id: str
    nodes: dict[str, Node]
    edges: dict[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Label:
    """One section-recall label from ``audit/recall_labels.jsonl``."""

    paper_title: str
    arxiv_id: str  # may be "" or wrong in the release
    section: str
    relevance: str  # 'direct' | 'supporting'


@dataclass(frozen=True, slots=True)
class Item:
    """One row of ``qa/full.jsonl``."""

    id: str
    question_type: str  # ST or MT constant above
    depth: int
    reasoning_type: str
    cognitive_skill: str | None
    venue: str | None
    consensus_tier: str | None
    question: str
    options: tuple[str, str, str, str]
    correct_index: int
    distractor_types: tuple[str, ...] | None
    seed_paper_id: str
    seed_arxiv_id: str
    seed_title: str
    gold_paper_ids: tuple[str, ...]
    gold_arxiv_ids: tuple[str, ...]
    bridge_paper_ids: tuple[str, ...] = ()
    bridge_arxiv_ids: tuple[str, ...] = ()
    filter_agreement: str | None = None
    bridge_necessary: bool | None = None

    @property
    def is_multi_target(self) -> bool:
        return self.question_type == MT

    @property
    def cell(self) -> str:
        """'st_d1', 'st_d2', 'mt_d1' or 'mt_d2'."""
        return f"{'mt' if self.is_multi_target else 'st'}_d{self.depth}"


@dataclass(slots=True)
class Release:
    """A loaded release: items in file order plus their graphs, the paper pool and labels."""

    root: str
    items: list[Item]
    graphs: dict[str, Graph]
    papers: dict[str, Paper]
    labels: dict[str, list[Label]] = field(default_factory=dict)
    #: first 16 hex chars of the SHA-256 of qa/full.jsonl (the reference harness)
    benchmark_sha256: str = ""
    #: the registry name of the benchmark (harness/benchmarks)
    benchmark: str = "agenthop"
    #: non-fatal findings, each ``<file>:<line>: field '<name>': <problem>`` (e.g. a label on a
    #: paper that is not in the item's graph, which the real release contains)
    warnings: list[str] = field(default_factory=list)

    def item(self, sample_id: str) -> Item:
        for it in self.items:
            if it.id == sample_id:
                return it
        raise KeyError(sample_id)
