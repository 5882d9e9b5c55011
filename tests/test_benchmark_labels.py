"""Label normalisation/resolution (docs/metrics.md#label-resolution) and the describe statistics, on hand-built objects."""

from __future__ import annotations

import pytest

from agenthop.harness.benchmarks.agenthop.describe import describe, format_description, percentile
from agenthop.harness.benchmarks.agenthop.labels import HEADER, NONE, PARENT, norm_label, norm_text, resolve_label
from agenthop.harness.benchmarks.agenthop.model import Graph, Item, Label, Node, Paper, Release, Section


@pytest.mark.parametrize(("raw", "expected"), [
    ("3 Method", "method"),
    ("3.2 Method", "method"),
    ("5.3.1. Rating Prediction", "rating prediction"),
    ("  Related   Work ", "related work"),
    ("METHOD", "method"),
    ("3.1Training", "3.1training"),  # the number must be followed by white space
    ("2021 Results", "results"),
    ("IV Method", "iv method"),  # Roman numerals are not section numbers (docs/metrics.md#label-resolution)
    ("Apdx_B.1: Prompt Templates", "apdx_b.1: prompt templates"),
    ("", ""),
])
def test_norm_label(raw: str, expected: str) -> None:
    assert norm_label(raw) == expected


def test_norm_text_lowercases_and_collapses_whitespace() -> None:
    assert norm_text("  A\n\tB  C ") == "a b c"


PAPER = Paper("2101.00001", "P", (
    Section("1 Introduction", "We study X. Our method is new."),
    Section("Method", "Overview. 2.1 Training   Objective We minimise the loss. 2.2 Decoding Beam search."),
    Section("Experiments", "Results. 3.1 Main Results Table 1. The training objective matters."),
    Section("Apdx_A: Proofs", "Proof of lemma 1."),
))


@pytest.mark.parametrize(("label", "kind", "indices"), [
    ("Method", HEADER, (1,)),
    ("3 Method", HEADER, (1,)),
    ("method", HEADER, (1,)),
    ("Introduction", HEADER, (0,)),  # header "1 Introduction" normalises to "introduction"
    ("Apdx_A: Proofs", HEADER, (3,)),
    ("2.1 Training Objective", PARENT, (1, 2)),  # contained in two sections' texts (white space collapsed)
    ("Decoding", PARENT, (1,)),
    ("3.1 Main Results", PARENT, (2,)),
    ("Conclusion", NONE, ()),
    ("   ", NONE, ()),
])
def test_resolve_label(label: str, kind: str, indices: tuple[int, ...]) -> None:
    assert resolve_label(label, PAPER) == (kind, indices)
    lab = Label("P", "2101.00001", label, "direct")
    assert resolve_label(lab, PAPER, norm_texts=[norm_text(s.text) for s in PAPER.sections]) == (kind, indices)


def test_header_match_wins_over_containment() -> None:
    paper = Paper("x", "t", (Section("Overview", "the method is simple"), Section("Method", "details")))
    assert resolve_label("Method", paper) == (HEADER, (1,))
    assert resolve_label("Method", None) == (NONE, ())


def test_percentile_linear_interpolation() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10, 20, 30, 40, 50], 10) == 14.0
    assert percentile([7], 99) == 7


def _node(pid: str, aid: str) -> Node:
    return Node(pid, f"title {pid}", aid, 2020, "")


def test_describe_counts_by_hand() -> None:
    s, b, g, m1, m2 = "s" * 40, "b" * 40, "g" * 40, "m" * 40, "n" * 40
    g2 = "h" * 40
    items = [
        Item("st_0001", "single-target", 2, "RESULT", "reason", "ACL", "gold", "q?", ("a", "b", "c", "d"), 1,
             None, s, "1", "S", (g,), ("3",), (b,), ("2",)),
        Item("mt_0001", "multi-target", 1, "GROUND", "synthesize", "CVPR", "silver", "q?", ("a", "b", "c", "d"), 0,
             None, s, "1", "S", (b, g2), ("2", "5"), (), ()),
    ]
    graphs = {
        # 5 nodes: m1 has no arXiv id, m2 has one that is not in the pool -> 2 of 5 metadata-only
        "st_0001": Graph("st_0001", {s: _node(s, "1"), b: _node(b, "2"), m1: _node(m1, ""), g: _node(g, "3"),
                                     m2: _node(m2, "4")}, {s: (b, m1), b: (g, m2, "z" * 40), m1: ()}),
        # 3 nodes: g2's arXiv id "5" is not in the pool -> 1 of 3 metadata-only; a gold without full text
        "mt_0001": Graph("mt_0001", {s: _node(s, "1"), b: _node(b, "2"), g2: _node(g2, "5")}, {s: (b, g2)}),
    }
    papers = {
        "1": Paper("1", "S", (Section("Introduction", "x" * 10), Section("Method", "y" * 30))),
        "2": Paper("2", "B", (Section("Method", "a 2.1 Loss Design b"),)),
        "3": Paper("3", "G", (Section("Results", "z" * 20), Section("Apdx_A: More", "w" * 40),
                              Section("Analysis", "v" * 50))),
    }
    labels = {
        "st_0001": [
            Label("G", "3", "4 Results", "direct"),  # header
            Label("B", "2", "Loss Design", "supporting"),  # inside a parent's text
            Label("G", "", "Results", "supporting"),  # no arXiv id
            Label("G", "3", "Limitations", "direct"),  # found nowhere
        ],
        "mt_0001": [Label("X", "9", "Method", "direct"),  # arXiv id not in the graph
                    Label("B", "2", "method", "direct")],  # header, on gold b
    }
    d = describe(Release("root", items, graphs, papers, labels, "0123456789abcdef"))
    assert d["items"] == 2
    assert d["cells"] == {"st_d1": 0, "st_d2": 1, "mt_d1": 1, "mt_d2": 0}
    assert d["reasoning_types"] == {"GROUND": 1, "RESULT": 1}
    assert d["neighbourhood_size"] == {"mean": 4.0, "median": 4.0, "min": 3, "max": 5}
    assert d["nodes_total"] == 8
    assert d["metadata_only_share"] == round(3 / 8, 4)
    assert d["metadata_only_without_arxiv_id"] == 1 and d["metadata_only_arxiv_not_in_pool"] == 2
    assert d["edges_total"] == 7 and d["edges_to_unknown_nodes"] == 1
    assert d["gold_papers_without_full_text"] == 1
    assert d["papers_in_pool"] == 3
    assert d["sections_per_paper"] == {"mean": 2.0, "min": 1, "max": 3}
    # lengths sorted: 10, 19, 20, 30, 40, 50
    assert d["section_length"]["p50"] == 25.0 and d["section_length"]["max"] == 50
    assert d["section_length"]["p10"] == 14.5
    assert d["labels_total"] == 6
    assert d["labels_by_relevance"] == {"direct": 4, "supporting": 2}
    assert d["labels_by_kind"] == {HEADER: 2, PARENT: 1, NONE: 3}
    assert d["labels_unresolved_reasons"] == {"arXiv id not in the item's graph": 1, "no arXiv id": 1,
                                              "section found nowhere": 1}
    # golds: st g (direct header label resolves), mt b (direct "method" resolves), mt g2 (none)
    assert d["gold_papers"] == 3 and d["gold_papers_with_resolvable_direct_label"] == 2
    text = format_description(d)
    assert "items            2: st_d1 0, st_d2 1, mt_d1 1, mt_d2 0" in text
    assert "37.5% of 8 nodes" in text
    assert "header 2, inside a parent's text 1, unresolvable 3" in text
