"""Loader: hand-written small releases, one per error class, plus tolerance of real-release quirks."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from agenthop.harness.benchmarks.agenthop.loader import BenchmarkError, benchmark_sha256, load_release
from agenthop.harness.benchmarks.agenthop.model import MT, ST
from agenthop.harness.errors import AgentHopError

SEED, BRIDGE, GOLD, META = "a" * 40, "b" * 40, "c" * 40, "d" * 40
GOLD2 = "e" * 40


def _qa(sid: str = "st_0001", **over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": sid, "question_type": "single-target", "depth": 2, "reasoning_type": "RESULT",
        "cognitive_skill": "reason", "venue": "ACL", "consensus_tier": "gold",
        "question": "What does the cited study report?", "options": ["A", "B", "C", "D"],
        "correct_index": 2, "distractor_types": ["seed_only", "wrong_paper", "correct", "no_context"],
        "seed_paper_id": SEED, "seed_arxiv_id": "2301.00001", "seed_title": "Seed paper",
        "gold_paper_ids": [GOLD], "gold_arxiv_ids": ["2101.00003"],
        "bridge_paper_ids": [BRIDGE], "bridge_arxiv_ids": ["2201.00002"], "filter_agreement": 0,
    }
    row.update(over)
    return row


def _graph(sid: str = "st_0001") -> dict[str, Any]:
    return {
        "sample_id": sid, "seed": SEED,
        "nodes": {
            SEED: {"title": "Seed paper", "arxivId": "2301.00001", "year": 2023, "abstract": "seed abstract"},
            BRIDGE: {"title": "Bridge paper", "arxivId": "2201.00002", "year": 2022, "abstract": "",
                     "authors": [{"name": "Ana Silva"}, {"name": "Wei Zhang"}]},
            META: {"title": "Old paper", "arxivId": "", "year": None, "abstract": "metadata only"},
            GOLD: {"title": "Gold paper", "arxivId": "2101.00003", "year": 2021, "abstract": "gold abstract"},
        },
        "edges": {SEED: [BRIDGE, META], BRIDGE: [GOLD], META: []},
    }


def _paper(aid: str, title: str) -> dict[str, Any]:
    return {"arxiv_id": aid, "title": title, "sections": [
        {"header": "Introduction", "text": "Intro text."},
        {"header": "Method", "text": "We do things. 2.1 Training Objective The loss is L."},
    ], "tables": []}


def _labels(sid: str = "st_0001", labels: list[dict[str, Any]] | None = None, **analysis: Any) -> dict[str, Any]:
    if labels is None:
        labels = [
            {"paper": "Gold paper", "arxiv_id": "2101.00003", "section": "Method", "relevance": "direct",
             "what_it_contains": "the claim"},
            {"paper": "Seed paper", "arxiv_id": "", "section": "Introduction", "relevance": "supporting"},
        ]
    body: dict[str, Any] = {"query_quality": {"verdict": "pass"}, "chain_coherence": None,
                            "synthesis_check": None, "section_recall_labels": labels}
    body.update(analysis)
    return {"sample_id": sid, "analysis": body}


def _release() -> dict[str, list[Any]]:
    return {
        "qa/full.jsonl": [_qa()],
        "graphs/full.jsonl": [_graph()],
        "paper_pool/papers.jsonl": [_paper("2301.00001", "Seed paper"), _paper("2201.00002", "Bridge paper"),
                                    _paper("2101.00003", "Gold paper")],
        "audit/recall_labels.jsonl": [_labels()],
    }


def write(root: Path, files: dict[str, list[Any]]) -> Path:
    """Rows may be dicts (dumped as JSON) or raw str/bytes lines."""
    for rel, rows in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        out = b""
        for row in rows:
            if isinstance(row, bytes):
                out += row + b"\n"
            elif isinstance(row, str):
                out += row.encode("utf-8") + b"\n"
            else:
                out += json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n"
        path.write_bytes(out)
    return root


def errors_of(root: Path, **kwargs: Any) -> list[str]:
    with pytest.raises(BenchmarkError) as exc:
        load_release(root, **kwargs)
    assert isinstance(exc.value, AgentHopError)
    return exc.value.errors


# -------------------------------------------------------------------------------------------------
# valid input


def test_valid_release_loads_all_fields(tmp_path: Path) -> None:
    rel = load_release(write(tmp_path, _release()))
    assert [i.id for i in rel.items] == ["st_0001"]
    item = rel.items[0]
    assert item.question_type == ST and item.depth == 2 and item.cell == "st_d2"
    assert item.options == ("A", "B", "C", "D") and item.correct_index == 2
    assert item.distractor_types == ("seed_only", "wrong_paper", "correct", "no_context")
    assert item.gold_paper_ids == (GOLD,) and item.bridge_arxiv_ids == ("2201.00002",)
    assert item.filter_agreement == "0"  # int in the file, text in the model
    assert item.bridge_necessary is None

    graph = rel.graphs["st_0001"]
    assert list(graph.nodes) == [SEED, BRIDGE, META, GOLD]  # file order kept
    assert graph.nodes[BRIDGE].authors == ("Ana Silva", "Wei Zhang")
    assert graph.nodes[SEED].authors == ()  # authors are optional
    assert graph.nodes[META].year is None and graph.nodes[META].arxiv_id == ""
    assert graph.edges[SEED] == (BRIDGE, META) and graph.edges[META] == ()

    assert sorted(rel.papers) == ["2101.00003", "2201.00002", "2301.00001"]
    gold = rel.papers["2101.00003"]
    assert [s.header for s in gold.sections] == ["Introduction", "Method"]
    assert gold.sections[1].text.startswith("We do things.")

    labels = rel.labels["st_0001"]
    assert [(lab.arxiv_id, lab.section, lab.relevance) for lab in labels] == [
        ("2101.00003", "Method", "direct"), ("", "Introduction", "supporting")]
    assert labels[0].paper_title == "Gold paper"

    data = (tmp_path / "qa/full.jsonl").read_bytes()
    assert rel.benchmark_sha256 == hashlib.sha256(data).hexdigest()[:16] == benchmark_sha256(tmp_path)
    assert len(rel.benchmark_sha256) == 16


def test_real_release_quirks_are_tolerated(tmp_path: Path) -> None:
    files = _release()
    qa = files["qa/full.jsonl"][0]
    qa["extra_key"] = {"anything": 1}
    qa["filter_agreement"] = 2.5
    del qa["cognitive_skill"], qa["bridge_paper_ids"], qa["bridge_arxiv_ids"]
    qa["depth"] = 1
    qa["venue"] = None
    graph = files["graphs/full.jsonl"][0]
    graph["nodes"][GOLD]["authors"] = ["Plain Name"]
    graph["nodes"][META]["title"] = None
    graph["edges"][SEED].append(GOLD)
    files["paper_pool/papers.jsonl"][0]["sections"].append({"text": "no header"})
    files["audit/recall_labels.jsonl"][0]["analysis"]["section_recall_labels"][0]["_repointed_from"] = "Intro"
    rel = load_release(write(tmp_path, files))
    item = rel.items[0]
    assert item.cognitive_skill is None and item.venue is None
    assert item.bridge_paper_ids == () and item.filter_agreement == "2.5"
    assert rel.graphs["st_0001"].nodes[GOLD].authors == ("Plain Name",)
    assert rel.graphs["st_0001"].nodes[META].title == ""
    assert rel.papers["2301.00001"].sections[-1].header == ""


def test_bridge_necessary_from_qa_row_then_audit(tmp_path: Path) -> None:
    files = _release()
    files["audit/recall_labels.jsonl"][0]["analysis"]["chain_coherence"] = {"verdict": "pass",
                                                                            "bridge_necessary": True}
    assert load_release(write(tmp_path / "a", files)).items[0].bridge_necessary is True
    files["qa/full.jsonl"][0]["bridge_necessary"] = False  # the qa row wins when present
    assert load_release(write(tmp_path / "b", files)).items[0].bridge_necessary is False


def test_crlf_bom_blank_lines_and_line_separator_in_text(tmp_path: Path) -> None:
    files = _release()
    files["paper_pool/papers.jsonl"][0]["sections"][0]["text"] = "before\u2028after\u0085end"
    write(tmp_path, files)
    qa = tmp_path / "qa/full.jsonl"
    qa.write_bytes(b"\xef\xbb\xbf" + qa.read_bytes().replace(b"\n", b"\r\n") + b"\n\n")
    rel = load_release(tmp_path)
    assert len(rel.items) == 1
    assert rel.papers["2301.00001"].sections[0].text == "before\u2028after\u0085end"


def test_limit_keeps_first_items_and_only_validates_them(tmp_path: Path) -> None:
    files = _release()
    second = _qa("mt_0002", question_type="multi-target", depth=1, gold_paper_ids=[BRIDGE, META],
                 gold_arxiv_ids=["2201.00002", ""], bridge_paper_ids=[], bridge_arxiv_ids=[])
    third = _qa("st_0003", correct_index=7)  # invalid, but beyond the limit
    files["qa/full.jsonl"] += [second, third]
    files["graphs/full.jsonl"] += [_graph("mt_0002"), _graph("st_0003")]
    files["audit/recall_labels.jsonl"] += [_labels("mt_0002")]
    files["paper_pool/papers.jsonl"].append(_paper("9999.99999", "Unused paper"))
    write(tmp_path, files)
    rel = load_release(tmp_path, limit=2)
    assert [i.id for i in rel.items] == ["st_0001", "mt_0002"]
    assert rel.items[1].question_type == MT and rel.items[1].cell == "mt_d1"
    assert sorted(rel.graphs) == ["mt_0002", "st_0001"]
    assert "9999.99999" not in rel.papers and len(rel.papers) == 3  # only papers the kept graphs use
    assert rel.benchmark_sha256 == benchmark_sha256(tmp_path)  # always the whole qa file
    assert len(load_release(tmp_path, limit=0).items) == 0
    assert any("qa/full.jsonl:3: field 'correct_index'" in e for e in errors_of(tmp_path))


# -------------------------------------------------------------------------------------------------
# error classes


def test_bad_json_names_file_and_line(tmp_path: Path) -> None:
    files = _release()
    files["graphs/full.jsonl"].append('{"sample_id": "st_0002", "nodes": {')
    files["qa/full.jsonl"].append("[1, 2]")
    errors = errors_of(write(tmp_path, files))
    assert any(e.startswith("graphs/full.jsonl:2: invalid JSON") for e in errors)
    assert "qa/full.jsonl:2: expected a JSON object, got list" in errors


def test_lone_surrogate_escape_names_file_line_and_field(tmp_path: Path) -> None:
    files = _release()
    qa = json.dumps(files["qa/full.jsonl"][0]).replace('"options": ["', '"options": ["\\ud800 ', 1)
    files["qa/full.jsonl"][0] = qa
    paper = json.dumps(files["paper_pool/papers.jsonl"][0])
    files["paper_pool/papers.jsonl"][0] = paper.replace('"text": "', '"text": "x\\udfff', 1)
    errors = errors_of(write(tmp_path, files))
    assert "qa/full.jsonl:1: field 'options[0]': holds a lone surrogate escape (\\ud800), which is not text" in errors
    assert any(e.startswith("paper_pool/papers.jsonl:1: field 'sections[0].text': holds a lone surrogate")
               for e in errors), errors


@pytest.mark.parametrize("field", ["correct_index", "options", "question", "gold_paper_ids", "seed_paper_id",
                                   "question_type", "depth", "seed_arxiv_id"])
def test_missing_required_qa_field_is_an_error_not_a_default(tmp_path: Path, field: str) -> None:
    files = _release()
    files["qa/full.jsonl"].insert(0, _qa("st_0000"))
    files["graphs/full.jsonl"].insert(0, _graph("st_0000"))
    del files["qa/full.jsonl"][1][field]
    errors = errors_of(write(tmp_path, files))
    assert f"qa/full.jsonl:2: field '{field}': missing required field" in errors


def test_wrong_types_are_errors(tmp_path: Path) -> None:
    files = _release()
    qa = files["qa/full.jsonl"][0]
    qa["correct_index"] = "2"
    qa["depth"] = True  # bool is not an int
    qa["options"] = ["A", "B", 3, "D"]
    files["graphs/full.jsonl"][0]["nodes"][GOLD]["year"] = "2021"
    files["paper_pool/papers.jsonl"][1]["sections"][1]["text"] = None
    files["audit/recall_labels.jsonl"][0]["analysis"]["section_recall_labels"][0]["relevance"] = "primary"
    errors = errors_of(write(tmp_path, files))
    assert "qa/full.jsonl:1: field 'correct_index': expected integer, got string ('2')" in errors
    assert "qa/full.jsonl:1: field 'depth': expected integer, got boolean (true)" in errors
    assert "qa/full.jsonl:1: field 'options[2]': expected string, got integer (3)" in errors
    assert f"graphs/full.jsonl:1: field 'nodes.{GOLD}.year': expected integer, got string ('2021')" in errors
    assert "paper_pool/papers.jsonl:2: field 'sections[1].text': expected string, got null" in errors
    assert ("audit/recall_labels.jsonl:1: field 'analysis.section_recall_labels[0].relevance': "
            "must be 'direct' or 'supporting', got 'primary'") in errors


def test_value_errors_correct_index_options_depth(tmp_path: Path) -> None:
    files = _release()
    qa = files["qa/full.jsonl"][0]
    qa["correct_index"] = 4
    qa["options"] = ["A", "B", "C"]
    qa["distractor_types"] = ["correct", "seed_only", "no_context"]
    qa["depth"] = 3
    qa["question_type"] = "single"
    errors = errors_of(write(tmp_path, files))
    assert "qa/full.jsonl:1: field 'correct_index': must be 0-3, got 4" in errors
    assert "qa/full.jsonl:1: field 'options': must have exactly 4 options, got 3" in errors
    assert "qa/full.jsonl:1: field 'depth': must be 1 or 2, got 3" in errors
    assert "qa/full.jsonl:1: field 'question_type': must be 'single-target' or 'multi-target', got 'single'" in errors


def test_correct_index_minus_one_is_rejected(tmp_path: Path) -> None:
    files = _release()
    files["qa/full.jsonl"][0]["correct_index"] = -1
    assert errors_of(write(tmp_path, files)) == ["qa/full.jsonl:1: field 'correct_index': must be 0-3, got -1"]


def test_paper_ids_absent_from_graph(tmp_path: Path) -> None:
    files = _release()
    qa = files["qa/full.jsonl"][0]
    qa["gold_paper_ids"] = [GOLD, GOLD2]
    qa["gold_arxiv_ids"] = ["2101.00003", "2101.00009"]
    qa["bridge_paper_ids"] = ["f" * 40]
    qa["seed_paper_id"] = "0" * 40
    errors = errors_of(write(tmp_path, files))
    assert errors == [
        f"qa/full.jsonl:1: field 'seed_paper_id': paper '{'0' * 40}' is not a node of the item's graph "
        "(graphs/full.jsonl:1)",
        f"qa/full.jsonl:1: field 'gold_paper_ids[1]': paper '{GOLD2}' is not a node of the item's graph "
        "(graphs/full.jsonl:1)",
        f"qa/full.jsonl:1: field 'bridge_paper_ids[0]': paper '{'f' * 40}' is not a node of the item's graph "
        "(graphs/full.jsonl:1)",
    ]


def test_gold_arxiv_ids_must_align_with_gold_paper_ids(tmp_path: Path) -> None:
    files = _release()
    files["qa/full.jsonl"][0]["gold_arxiv_ids"] = []
    assert errors_of(write(tmp_path, files)) == [
        "qa/full.jsonl:1: field 'gold_arxiv_ids': has 0 entries, gold_paper_ids has 1"]


def test_label_on_unknown_paper(tmp_path: Path) -> None:
    files = _release()
    labels = files["audit/recall_labels.jsonl"][0]["analysis"]["section_recall_labels"]
    labels.append({"paper": "Elsewhere", "arxiv_id": "1999.12345", "section": "Method", "relevance": "direct"})
    write(tmp_path, files)
    assert errors_of(tmp_path, strict_labels=True) == [
        "audit/recall_labels.jsonl:1: field 'analysis.section_recall_labels[2].arxiv_id': "
        "'1999.12345' is not the arXiv id of any node of st_0001's graph"]
    # default: loaded like the real release's stray ids; it belongs to no paper (docs/metrics.md#label-resolution)
    rel = load_release(tmp_path)
    assert rel.labels["st_0001"][2].arxiv_id == "1999.12345"
    # ... but never silently: the same finding is reported as a warning naming file:line and field
    assert rel.warnings == [
        "audit/recall_labels.jsonl:1: field 'analysis.section_recall_labels[2].arxiv_id': "
        "'1999.12345' is not the arXiv id of any node of st_0001's graph (label belongs to no paper)"]


def test_label_missing_section_field(tmp_path: Path) -> None:
    files = _release()
    del files["audit/recall_labels.jsonl"][0]["analysis"]["section_recall_labels"][1]["section"]
    assert errors_of(write(tmp_path, files)) == [
        "audit/recall_labels.jsonl:1: field 'analysis.section_recall_labels[1].section': missing required field"]


def test_duplicate_ids(tmp_path: Path) -> None:
    files = _release()
    files["qa/full.jsonl"].append(_qa())
    files["graphs/full.jsonl"].append(_graph())
    files["paper_pool/papers.jsonl"].append(_paper("2201.00002", "Bridge again"))
    files["audit/recall_labels.jsonl"].append(_labels())
    errors = errors_of(write(tmp_path, files))
    assert errors == [
        "qa/full.jsonl:2: field 'id': duplicate id 'st_0001' (first on line 1)",
        "graphs/full.jsonl:2: field 'sample_id': duplicate graph for 'st_0001' (first on line 1)",
        "paper_pool/papers.jsonl:4: field 'arxiv_id': duplicate paper '2201.00002' (first on line 2)",
        "audit/recall_labels.jsonl:2: field 'sample_id': duplicate labels row for 'st_0001' (first on line 1)",
    ]


def test_graph_for_unknown_sample_and_item_without_graph(tmp_path: Path) -> None:
    files = _release()
    files["qa/full.jsonl"].append(_qa("st_0002"))
    files["graphs/full.jsonl"].append(_graph("st_0099"))
    files["audit/recall_labels.jsonl"].append(_labels("st_0098"))
    errors = errors_of(write(tmp_path, files))
    assert errors == [
        "graphs/full.jsonl:2: field 'sample_id': 'st_0099' is not an item of qa/full.jsonl",
        "audit/recall_labels.jsonl:2: field 'sample_id': 'st_0098' is not an item of qa/full.jsonl",
        "qa/full.jsonl:2: field 'id': item 'st_0002' has no graph row in graphs/full.jsonl",
    ]


def test_missing_file_and_missing_directory(tmp_path: Path) -> None:
    files = _release()
    del files["paper_pool/papers.jsonl"]
    errors = errors_of(write(tmp_path, files))
    assert len(errors) == 1 and errors[0].startswith("paper_pool/papers.jsonl: file not found")
    with pytest.raises(BenchmarkError, match="release directory not found"):
        load_release(tmp_path / "nope")
    with pytest.raises(BenchmarkError, match="qa/full.jsonl: cannot read"):
        benchmark_sha256(tmp_path / "nope")


def test_non_utf8_bytes(tmp_path: Path) -> None:
    files = _release()
    good = json.dumps(_graph("st_0002")).encode()
    files["graphs/full.jsonl"].append(good.replace(b"seed abstract", b"seed \xff abstract"))
    files["qa/full.jsonl"].append(_qa("st_0002"))
    errors = errors_of(write(tmp_path, files))
    assert errors[0].startswith("graphs/full.jsonl:2: not valid UTF-8")
    assert "qa/full.jsonl:2: field 'id': item 'st_0002' has no graph row in graphs/full.jsonl" in errors


def test_all_errors_are_collected_and_the_message_lists_the_first_twenty(tmp_path: Path) -> None:
    files = _release()
    for k in range(30):
        row = _qa(f"st_{k + 10:04d}", correct_index=9)
        files["qa/full.jsonl"].append(row)
        files["graphs/full.jsonl"].append(_graph(f"st_{k + 10:04d}"))
    files["paper_pool/papers.jsonl"].append({"arxiv_id": "", "title": "x", "sections": []})
    write(tmp_path, files)
    with pytest.raises(BenchmarkError) as exc:
        load_release(tmp_path)
    assert len(exc.value.errors) == 31
    message = str(exc.value)
    assert message.startswith(f"invalid AgentHop release {tmp_path}: 31 problems")
    assert "qa/full.jsonl:2: field 'correct_index': must be 0-3, got 9" in message
    assert "... and 11 more" in message
    assert "paper_pool/papers.jsonl:4: field 'arxiv_id': must not be empty" in exc.value.errors


def test_input_rows_are_not_mutated_by_validation(tmp_path: Path) -> None:
    files = _release()
    before = copy.deepcopy(files)
    load_release(write(tmp_path, files))
    assert files == before


def test_numbers_read_as_json_reads_them(tmp_path: Path) -> None:
    """Lines are read by orjson only where it gives json's value: an integer past 64 bits stays an
    integer (orjson would read a float), NaN is json's float (orjson refuses it)."""
    files = _release()
    files["graphs/full.jsonl"][0]["nodes"][GOLD]["year"] = 10**20
    files["graphs/full.jsonl"][0]["nodes"][SEED]["year"] = -(2**63) - 1  # 19 digits
    rel = load_release(write(tmp_path / "a", files))
    assert rel.graphs["st_0001"].nodes[GOLD].year == 10**20
    assert rel.graphs["st_0001"].nodes[SEED].year == -(2**63) - 1
    files["graphs/full.jsonl"][0]["nodes"][GOLD]["year"] = float("nan")  # json.dumps writes NaN
    errors = errors_of(write(tmp_path / "b", files))
    assert f"graphs/full.jsonl:1: field 'nodes.{GOLD}.year': expected integer, got number (NaN)" in errors


def test_release_tables_give_each_graph_row_its_node_values(tmp_path: Path) -> None:
    """raw.graph_nodes takes the values of the node objects the graphs share (each converted once):
    every row still holds its own graph's node, also where another graph's node of the same paper
    differs."""
    from agenthop.ingest.sources.agenthop_release import release_tables

    files = _release()
    second = _graph("st_0002")
    second["nodes"][GOLD] = dict(second["nodes"][GOLD], title="Gold paper, revised", year=2024)
    del second["nodes"][META]
    second["edges"] = {SEED: [BRIDGE]}
    files["qa/full.jsonl"].append(_qa("st_0002"))
    files["graphs/full.jsonl"].append(second)
    rel = load_release(write(tmp_path, files))
    assert rel.graphs["st_0002"].nodes[SEED] is rel.graphs["st_0001"].nodes[SEED]  # shared
    nodes = release_tables(rel)["graph_nodes"].to_pylist()
    got = [(n["sample_id"], n["paper_id"], n["node_order"], n["title"], n["year"], n["arxiv_id"], n["has_full_text"])
           for n in nodes]
    assert got == [
        ("st_0001", SEED, 0, "Seed paper", 2023, "2301.00001", True),
        ("st_0001", BRIDGE, 1, "Bridge paper", 2022, "2201.00002", True),
        ("st_0001", META, 2, "Old paper", None, None, False),
        ("st_0001", GOLD, 3, "Gold paper", 2021, "2101.00003", True),
        ("st_0002", SEED, 0, "Seed paper", 2023, "2301.00001", True),
        ("st_0002", BRIDGE, 1, "Bridge paper", 2022, "2201.00002", True),
        ("st_0002", GOLD, 2, "Gold paper, revised", 2024, "2101.00003", True),
    ]
    assert [n["abstract"] for n in nodes] == ["seed abstract", "", "metadata only", "gold abstract",
                                              "seed abstract", "", "gold abstract"]
