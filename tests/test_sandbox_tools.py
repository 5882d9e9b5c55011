"""The seven tools and section resolution, pinned to the reference harness (texts, costs, statuses)."""

from __future__ import annotations

import pytest

from agenthop.harness.benchmarks.agenthop.model import Graph, Item, Node, Paper, Section
from agenthop.harness.benchmarks.agenthop.sections import (
    alias,
    alias_to_index,
    normalize_header,
    resolve_in_sections,
    resolve_section,
)
from agenthop.harness.benchmarks.agenthop.tools import TOOL_COSTS, Sandbox, clear_caches, parse_answer_letter

# --------------------------------------------------------------------------------------------
# A tiny hand-made neighbourhood:
#   S (seed, full text, 3 refs: A, B, M) ; A (full text, 30 sections) ; B (full text, few sections)
#   M (arXiv id but not in the pool: metadata-only) ; N (no arXiv id) ; edge to a node X not in nodes.

BIG = Paper("2301.00002", "Paper A", tuple(Section(f"Part {i}", "a" * (i + 1)) for i in range(30)))
SMALL = Paper(
    "2301.00003",
    "Paper B",
    (
        Section("Introduction", "We introduce things."),
        Section("Experimental Setup", "Setup text."),
        Section("Experimental Results", "Results text."),
        Section("5.3.1. Rating Prediction", "Rating text."),
        Section("Apdx_A: Proof Details", "Proofs."),
    ),
)
SEED = Paper("2301.00001", "Seed paper", (Section("Introduction", "Seed intro."),))
PAPERS = {p.arxiv_id: p for p in (BIG, SMALL, SEED)}

NODES = {
    "S": Node("S", "Graph neural retrieval", "2301.00001", 2023, "We study graph retrieval.", ("Ann Lee",)),
    "A": Node("A", "Dense passage retrieval", "2301.00002", 2020, "Dense retrieval of passages.",
              ("Ann Lee", "Bo Chen")),
    "B": Node("B", "Sparse retrieval baselines", "2301.00003", None, "",
              ("Ann Lee", "Bo Chen", "Cy Dou")),
    "M": Node("M", "Graph transformers", "2301.09999", 2021, "Graph models with attention."),
    "N": Node("N", "Retrieval graph survey", "", 2019, "x" * 320),
}
EDGES = {"S": ("A", "B", "M", "X"), "A": ("N",)}
GRAPH = Graph("st_0001", NODES, EDGES)
ITEM = Item(
    id="st_0001", question_type="single-target", depth=1, reasoning_type="GROUND",
    cognitive_skill=None, venue=None, consensus_tier=None, question="Which?",
    options=("w", "x", "y", "z"), correct_index=2, distractor_types=None,
    seed_paper_id="S", seed_arxiv_id="2301.00001", seed_title="Graph neural retrieval",
    gold_paper_ids=("A",), gold_arxiv_ids=("2301.00002",),
)


@pytest.fixture()
def sb() -> Sandbox:
    return Sandbox(ITEM, GRAPH, PAPERS)


# --------------------------------------------------------------------------------------------
# Aliases and resolution


def test_alias_is_bijective_base_26() -> None:
    assert [alias(i) for i in (0, 1, 25, 26, 27, 51, 52, 701, 702)] == [
        "A", "B", "Z", "AA", "AB", "AZ", "BA", "ZZ", "AAA"]
    assert all(alias_to_index(alias(i)) == i for i in range(3000))


def test_alias_aa_is_section_26(sb: Sandbox) -> None:
    listing = sb.execute("list_sections", {"paper_id": "A"}).text.splitlines()
    assert listing[0] == "Sections for paper 'A' (30 sections):"
    assert listing[1] == ""
    assert listing[2] == "  (A) Part 0 (1 chars)"
    assert listing[2 + 26] == "  (AA) Part 26 (27 chars)"
    assert listing[2 + 27] == "  (AB) Part 27 (28 chars)"
    out = sb.execute("read_section", {"paper_id": "A", "section": "AA"})
    assert (out.status, out.resolved_section_index, out.resolved_header) == ("ok", 26, "Part 26")
    assert out.text == "=== Part 26 ===\n\n" + "a" * 27


@pytest.mark.parametrize("query", ["(b)", "B", "b", " (B) ", "(B"])
def test_parenthesised_and_bare_letters_resolve(query: str) -> None:
    assert resolve_section(query, SMALL) == 1


def test_alias_out_of_range_falls_through_to_headers() -> None:
    secs = (Section("Alpha", ""), Section("Zeta", ""))
    # 'Z' is index 25: out of range, so rule 4 (unique raw substring) resolves it.
    assert resolve_in_sections("Z", secs) == 1
    # 'AB' is index 27 of a 30-section paper: the alias wins over a header literally named 'AB'.
    big = tuple(Section("AB" if i == 0 else f"S{i}", "") for i in range(30))
    assert resolve_in_sections("AB", big) == 27
    small = tuple(Section("AB" if i == 0 else f"S{i}", "") for i in range(5))
    assert resolve_in_sections("ab", small) == 0  # alias out of range -> exact header


def test_digits_are_not_aliases() -> None:
    secs = tuple(Section(f"S{i}", "") for i in range(30))
    assert resolve_in_sections("B2", secs) is None  # not an alias, and no header contains 'b2'


def test_normalize_header_steps() -> None:
    assert normalize_header("Apdx_A.1: Proof of Lemma") == "proof of lemma"
    assert normalize_header("Apdx: Extra  Results") == "extra results"
    assert normalize_header("IV Method") == "method"
    assert normalize_header("IIi-b  Related") == "related"
    assert normalize_header("5.3.1. Rating Prediction") == "rating prediction"
    assert normalize_header("Results \u2014 Main: Table-2") == "results main table 2"
    assert normalize_header("Civil engineering") == "engineering"  # the reference's Roman-numeral GAP
    assert normalize_header("   ") == ""


def test_resolution_order() -> None:
    # 2. exact header, case-insensitive, stripped
    assert resolve_in_sections("introduction", (Section(" Introduction ", ""), Section("Intro", ""))) == 0
    # 3. normalised exact beats an ambiguous raw substring
    secs = (Section("2 Related Work", ""), Section("Related Work Extended", ""))
    assert resolve_in_sections("2. related work", secs) == 0
    assert resolve_in_sections("Related Work", secs) == 0  # normalised exact again (step 3)
    # 4. raw substring of exactly one header
    assert resolve_section("intro", SMALL) == 0
    assert resolve_section("setup", SMALL) == 1
    # ambiguous raw substring, and nothing else -> None
    assert resolve_section("experimental", SMALL) is None
    # 5. normalised substring of exactly one normalised header
    assert resolve_section("rating-pred", SMALL) == 3
    assert resolve_section("Apdx_B: proof", SMALL) == 4  # normalised query 'proof' is in 'proof details'
    # empty / white space
    assert resolve_section("   ", SMALL) is None


# --------------------------------------------------------------------------------------------
# Tool outputs


def test_costs_table() -> None:
    assert TOOL_COSTS == {
        "get_paper_info": 1, "get_references": 1, "search_papers": 1, "list_sections": 1,
        "read_section": 5, "think": 0, "submit_answer": 0,
    }


def test_get_paper_info_five_lines(sb: Sandbox) -> None:
    out = sb.execute("get_paper_info", {"paper_id": "A"})
    assert out.text == (
        "Title: Dense passage retrieval\nAuthors: Ann Lee, Bo Chen\nYear: 2020\n"
        "Abstract: Dense retrieval of passages.\nFull text available: Yes"
    )
    assert (out.cost, out.status, out.paper_id) == (1, "ok", "A")
    # metadata-only (arXiv id not in the pool), no authors
    assert sb.execute("get_paper_info", {"paper_id": "M"}).text == (
        "Title: Graph transformers\nAuthors: Unknown\nYear: 2021\n"
        "Abstract: Graph models with attention.\nFull text available: No"
    )
    # null year prints "None", as the reference's code does (its documentation said "Unknown");
    # empty abstract
    assert sb.execute("get_paper_info", {"paper_id": "B"}).text.splitlines()[2:4] == [
        "Year: None", "Abstract: (not available)"]


def test_unknown_paper_everywhere(sb: Sandbox) -> None:
    msg = "Paper 'Q' not found in the available paper pool."
    for tool, args, cost in [
        ("get_paper_info", {"paper_id": "Q"}, 1),
        ("get_references", {"paper_id": "Q"}, 1),
        ("list_sections", {"paper_id": "Q"}, 1),
        ("read_section", {"paper_id": "Q", "section": "A"}, 5),
    ]:
        out = sb.execute(tool, args)
        assert (out.text, out.cost, out.status, out.paper_id) == (msg, cost, "unknown_paper", "Q")


def test_get_references_blocks(sb: Sandbox) -> None:
    out = sb.execute("get_references", {"paper_id": "S"})
    assert out.text == (
        "References for paper 'S' (4 papers):\n\n"
        "  [1] A\n      Title: Dense passage retrieval\n      Authors: Ann Lee and Bo Chen (2020)\n"
        "      Full text: Available\n"
        "  [2] B\n      Title: Sparse retrieval baselines\n      Authors: Ann Lee et al. (None)\n"
        "      Full text: Available\n"
        "  [3] M\n      Title: Graph transformers\n      Authors: Unknown (2021)\n"
        "      Full text: Not available\n"
        "  [4] X\n      Title: Unknown\n      Authors: Unknown (?)\n      Full text: Not available"
    )
    assert sb.execute("get_references", {"paper_id": "S"}).text == out.text  # cached, identical
    single = sb.execute("get_references", {"paper_id": "A"}).text
    assert "Authors: Unknown (2019)" in single
    none = sb.execute("get_references", {"paper_id": "N"})
    assert none.text == "No references found for this paper (or references not available in pool)."
    assert (none.cost, none.status) == (1, "ok")


def test_list_sections_and_no_full_text(sb: Sandbox) -> None:
    assert sb.execute("list_sections", {"paper_id": "B"}).text == (
        "Sections for paper 'B' (5 sections):\n\n"
        "  (A) Introduction (20 chars)\n  (B) Experimental Setup (11 chars)\n"
        "  (C) Experimental Results (13 chars)\n  (D) 5.3.1. Rating Prediction (12 chars)\n"
        "  (E) Apdx_A: Proof Details (7 chars)"
    )
    out = sb.execute("list_sections", {"paper_id": "M"})
    assert out.text == "Full text not available for paper 'M'. Only abstract is available via get_paper_info."
    assert (out.cost, out.status) == (1, "no_full_text")


def test_read_on_metadata_only_paper(sb: Sandbox) -> None:
    for pid in ("M", "N"):  # arXiv id outside the pool / no arXiv id
        out = sb.execute("read_section", {"paper_id": pid, "section": "A"})
        assert out.text == f"Full text not available for paper '{pid}'."
        assert (out.cost, out.status, out.section_query) == (5, "no_full_text", "A")


def test_read_section_full_text_without_truncation() -> None:
    long = Paper("9999.00001", "Long", (Section("Body", "z" * 70_000),))
    graph = Graph("s", {"L": Node("L", "Long", "9999.00001", 2024, "")}, {})
    out = Sandbox(ITEM, graph, {"9999.00001": long}).execute("read_section", {"paper_id": "L", "section": "body"})
    assert out.text == "=== Body ===\n\n" + "z" * 70_000


def test_missing_header_shows_as_section_number() -> None:
    """the reference harness: a missing header shows as 'Section {i+1}' (list, read and not-found list)."""
    paper = Paper("9999.00002", "Headless", (Section("", "first text"), Section("Method", "m")))
    graph = Graph("s", {"H": Node("H", "Headless", "9999.00002", 2024, "")}, {})
    box = Sandbox(ITEM, graph, {"9999.00002": paper})
    listed = box.execute("list_sections", {"paper_id": "H"}).text
    assert "  (A) Section 1 (10 chars)" in listed and "  (B) Method (1 chars)" in listed
    read = box.execute("read_section", {"paper_id": "H", "section": "A"})
    assert read.text == "=== Section 1 ===\n\nfirst text" and read.resolved_header == "Section 1"
    missing = box.execute("read_section", {"paper_id": "H", "section": "Results"}).text
    assert missing.endswith("Available sections: (A) Section 1; (B) Method")


def test_ambiguous_substring_gives_not_found_with_alias_list(sb: Sandbox) -> None:
    out = sb.execute("read_section", {"paper_id": "B", "section": "Experimental"})
    assert out.text == (
        "Section 'Experimental' not found in paper 'B'.\n"
        "Available sections: (A) Introduction; (B) Experimental Setup; (C) Experimental Results; "
        "(D) 5.3.1. Rating Prediction; (E) Apdx_A: Proof Details"
    )
    # a failed read costs 5
    assert (out.cost, out.status, out.resolved_section_index, out.resolved_header) == (
        5, "section_not_found", None, None)
    assert sb.execute("read_section", {"paper_id": "B", "section": "Conclusion"}).status == "section_not_found"


def test_search_overlap_ties_keep_graph_order(sb: Sandbox) -> None:
    # 'graph' + 'retrieval': S has both (2); A has retrieval (1); B retrieval (1); M graph (1);
    # N has both (2). Ties keep graph order: S, N, then A, B, M.
    out = sb.execute("search_papers", {"query": "Graph graph RETRIEVAL", "top_k": 10})
    ids = [line.split("] ")[1] for line in out.text.splitlines() if line.startswith("  [")]
    assert ids == ["S", "N", "A", "B", "M"]
    assert out.text.splitlines()[0] == "Search results for 'Graph graph RETRIEVAL' (5 matches):"
    assert (out.cost, out.status, out.search_query) == (1, "ok", "Graph graph RETRIEVAL")


def test_search_block_format_and_abstract_cut(sb: Sandbox) -> None:
    out = sb.execute("search_papers", {"query": "survey sparse"})
    assert out.text == (
        "Search results for 'survey sparse' (2 matches):\n\n"
        "  [1] B\n      Title: Sparse retrieval baselines\n      Authors: Ann Lee et al. (None)\n"
        "      Abstract: (no abstract)\n      Full text: Available\n"
        "  [2] N\n      Title: Retrieval graph survey\n      Authors: Unknown (2019)\n"
        f"      Abstract: {'x' * 300}...\n      Full text: Not available"
    )


def test_search_top_k_clamped_and_default() -> None:
    nodes = {f"p{i}": Node(f"p{i}", "common topic", "", 2020, "") for i in range(12)}
    sb = Sandbox(ITEM, Graph("s", nodes, {}), {})

    def count(args: dict) -> int:
        return sum(line.startswith("  [") for line in sb.execute("search_papers", args).text.splitlines())

    assert count({"query": "topic"}) == 5
    assert count({"query": "topic", "top_k": 0}) == 1
    assert count({"query": "topic", "top_k": -3}) == 1
    assert count({"query": "topic", "top_k": 50}) == 10
    assert count({"query": "topic", "top_k": 7}) == 7


def test_search_empty_no_match_and_bad_top_k(sb: Sandbox) -> None:
    empty = sb.execute("search_papers", {"query": "?! --"})
    assert (empty.text, empty.cost) == ("Empty query. Please provide search keywords.", 1)
    none = sb.execute("search_papers", {"query": "quantum"})
    assert (none.text, none.status) == ("No papers found matching 'quantum'.", "ok")
    bad = sb.execute("search_papers", {"query": "graph", "top_k": "5"})
    assert bad.text == (
        "Error calling search_papers: Missing or invalid parameter \u2014 "
        "'>' not supported between instances of 'str' and 'int'"
    )
    assert (bad.cost, bad.status) == (1, "invalid_args")


def test_search_full_text_flag_depends_on_the_pool() -> None:
    # the per-item cache is keyed by graph AND pool: a different pool changes the flags
    clear_caches()
    with_pool = Sandbox(ITEM, GRAPH, PAPERS).execute("search_papers", {"query": "dense"}).text
    without = Sandbox(ITEM, GRAPH, {}).execute("search_papers", {"query": "dense"}).text
    assert with_pool.endswith("Full text: Available")
    assert without.endswith("Full text: Not available")
    assert Sandbox(ITEM, GRAPH, {}).execute("get_references", {"paper_id": "S"}).text.count("Not available") == 4


def test_think_and_submit(sb: Sandbox) -> None:
    assert (sb.execute("think", {"reasoning": "hm"}).text, sb.execute("think", {}).cost) == ("Noted.", 0)
    out = sb.execute("submit_answer", {"answer": "(c)", "reasoning": "because"})
    assert (out.text, out.cost, out.status) == ("Answer submitted: (c)", 0, "ok")
    assert (out.answer, out.predicted_index, out.reasoning) == ("(c)", 2, "because")


@pytest.mark.parametrize(
    "answer,index",
    [("A", 0), ("b", 1), (" (C) ", 2), ("D.", 3), ("a:", 0), ("B)", 1), ("(d).", 3), ("\tC\n", 2),
     ("AB", -1), ("E", -1), ("A. because", -1), ("", -1), ("Option A", -1), (1, -1), (None, -1)],
)
def test_letter_parser(answer: object, index: int) -> None:
    assert parse_answer_letter(answer) == index


def test_dispatcher_errors(sb: Sandbox) -> None:
    unknown = sb.execute("fly", {"to": "moon"})
    assert (unknown.text, unknown.cost, unknown.status) == ("Unknown tool: fly", 0, "unknown_tool")
    raw = sb.execute("get_paper_info", {"_raw": "{not json"})
    assert raw.text == "Error calling get_paper_info: Missing or invalid parameter \u2014 'paper_id'"
    assert (raw.cost, raw.status) == (1, "invalid_args")
    read = sb.execute("read_section", {"paper_id": "B"})
    assert read.text == "Error calling read_section: Missing or invalid parameter \u2014 'section'"
    assert (read.cost, read.status, read.paper_id) == (5, "invalid_args", "B")
    sub = sb.execute("submit_answer", {"reasoning": "r"})
    assert sub.text == "Error calling submit_answer: Missing or invalid parameter \u2014 'answer'"
    assert (sub.cost, sub.status, sub.predicted_index, sub.answer) == (0, "invalid_args", -1, None)
    # a non-string section is an argument error (the reference crashed here); unhashable ids too
    assert sb.execute("read_section", {"paper_id": "B", "section": 3}).status == "invalid_args"
    assert sb.execute("get_paper_info", {"paper_id": ["A"]}).text == (
        "Error calling get_paper_info: Missing or invalid parameter \u2014 unhashable type: 'list'")
    # think ignores its arguments, as in the reference
    assert sb.execute("think", {"_raw": "x"}).status == "ok"


@pytest.mark.parametrize("tool,args,message,cost", [
    ("get_paper_info", ["A"], "list indices must be integers or slices, not str", 1),
    ("read_section", ["A", "B"], "list indices must be integers or slices, not str", 5),
    ("search_papers", "retrieval", "string indices must be integers, not 'str'", 1),
    ("list_sections", 7, "'int' object is not subscriptable", 1),
    ("submit_answer", None, "'NoneType' object is not subscriptable", 0),
])
def test_arguments_that_are_json_but_not_an_object(sb: Sandbox, tool: str, args: object, message: str,
                                                   cost: int) -> None:
    # the reference subscripts the parsed value directly, so the text is Python's own TypeError
    out = sb.execute(tool, args)
    assert out.text == f"Error calling {tool}: Missing or invalid parameter \u2014 {message}"
    assert (out.cost, out.status, out.paper_id, out.answer) == (cost, "invalid_args", None, None)
    if tool == "submit_answer":
        assert (out.predicted_index, out.reasoning) == (-1, None)
    assert sb.execute("think", ["x"]).text == "Noted."


def test_search_cache_uses_each_graphs_own_text() -> None:
    # the same paper id with different metadata in two neighbourhoods
    g1 = Graph("s1", {"P": Node("P", "Alpha", "", 2020, "apples")}, {})
    g2 = Graph("s2", {"P": Node("P", "Alpha", "", 2020, "bananas")}, {})
    assert Sandbox(ITEM, g1, {}).execute("search_papers", {"query": "apples"}).text.startswith("Search results")
    assert Sandbox(ITEM, g2, {}).execute("search_papers", {"query": "apples"}).text == (
        "No papers found matching 'apples'.")
    assert "(1 matches)" in Sandbox(ITEM, g2, {}).execute("search_papers", {"query": "bananas"}).text
