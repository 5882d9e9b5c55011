"""The offline search tools over a corpus, the tool declarations and the caps per paradigm."""

from __future__ import annotations

import json

import pytest

from agenthop.harness.benchmarks.sciexplore.generator import generate
from agenthop.harness.benchmarks.sciexplore.paradigms import CAPS, caps, tool_schemas
from agenthop.harness.benchmarks.sciexplore.release import Document
from agenthop.harness.benchmarks.sciexplore.search_tools import (
    OPEN_PAGE_CHARS, SEARCH_TOOL_KINDS, TOOL_NAMES, CorpusTools,
)


def doc(i: int, kind: str, title: str, text: str, database: str | None = None) -> Document:
    return Document(id=f"d{i}", kind=kind, database=database, title=title, text=text,
                    url=f"https://x.invalid/{i}", year=2020 if kind == "paper" else None)


CORPUS = [
    doc(1, "paper", "Beta methods", "beta beta beta beta beta of solids"),
    doc(2, "paper", "Kalo beta", "the kalo material and beta"),
    doc(3, "record", "Kalos [PDB]", "kalos record beta", database="PDB"),
    doc(4, "record", "Mira [UniProt]", "mira record kalo beta", database="UniProt"),
    doc(5, "page", "A page", "gamma " * 3000),
]


def test_bm25_ranks_by_rare_terms_not_by_substrings() -> None:
    tools = CorpusTools(CORPUS)
    r = tools.call("web_search", {"query": "kalo beta"})
    ids = [h.id for h in r.hits]
    # 'kalo' is rare (2 of 5 documents), 'beta' is everywhere: the documents holding 'kalo' lead;
    # d3 holds 'kalos', which is another token, so it ranks only by 'beta'
    assert ids[:2] == ["d2", "d4"] and set(ids) == {"d1", "d2", "d3", "d4"}
    assert r.hits[0].score > r.hits[2].score > 0
    assert tools.call("web_search", {"query": "zeta"}).hits == ()
    assert "no results for 'zeta'" in tools.call("web_search", {"query": "zeta"}).text


def test_each_tool_searches_its_own_kinds() -> None:
    tools = CorpusTools(CORPUS)
    kinds = {name: {h.kind for h in tools.call(name, {"query": "beta record gamma"}).hits} for name in SEARCH_TOOL_KINDS}
    assert kinds == {"web_search": {"paper", "record", "page"}, "scholar_search": {"paper"}, "db_search": {"record"}}
    only = tools.call("db_search", {"query": "beta", "database": "uniprot"})
    assert [h.id for h in only.hits] == ["d4"]


def test_max_results_caps_the_hits_and_the_text_shows_ids_titles_snippets() -> None:
    r = CorpusTools(CORPUS, max_results=2).call("web_search", {"query": "beta"})
    assert len(r.hits) == 2
    assert "[1] " + r.hits[0].id in r.text and "Title: " + r.hits[0].title in r.text and "Snippet: " in r.text
    assert r.record.status == "ok" and r.record.result_chars == len(r.text) and r.record.query == "beta"
    assert r.record.trace_entry() == {"tool": "web_search", "query": "beta", "result_chars": len(r.text)}
    assert r.record.is_search


def test_open_page_truncates_and_records_the_target() -> None:
    tools = CorpusTools(CORPUS)
    r = tools.call("open_page", {"id": "d5"})
    assert r.record.status == "ok" and r.record.target == "d5" and not r.record.is_search
    assert f"[truncated: {OPEN_PAGE_CHARS} of {len(CORPUS[4].text)} characters shown]" in r.text
    assert len(r.text) < OPEN_PAGE_CHARS + 200
    assert tools.call("open_page", {"id": "https://x.invalid/2"}).record.target == "d2"
    short = tools.call("open_page", {"id": "d2"})
    assert "truncated" not in short.text and CORPUS[1].text in short.text
    row = short.record.row_fields()
    assert row["paper_id"] == "d2" and json.loads(row["args_json"]) == {"id": "d2"} and row["output_chars"] == len(short.text)


def test_bad_calls_get_a_status_and_a_message() -> None:
    tools = CorpusTools(CORPUS)
    missing = tools.call("open_page", {"id": "nope"})
    assert (missing.record.status, missing.record.error_type) == ("tool_error", "not_found")
    assert tools.call("web_search", {}).record.status == "invalid_args"
    assert tools.call("web_search", ["beta"]).record.status == "invalid_args"
    assert tools.call("db_search", {"query": "x", "database": 3}).record.status == "invalid_args"
    unknown = tools.call("browse", {"url": "x"})
    assert unknown.record.status == "unknown_tool" and "open_page" in unknown.text


def test_on_the_synthetic_corpus_a_t1_chain_start_is_found_by_db_search() -> None:
    tasks, docs = generate(seed=3)
    tools = CorpusTools(docs)
    t1 = next(t for t in tasks if t.type == "T1")
    entity = t1.question.split(" entry ")[1].split(" and follow")[0]
    top = tools.call("db_search", {"query": entity, "database": t1.databases[0]}).hits[0]
    assert top.title == f"{entity} [{t1.databases[0]}]"
    t2 = next(t for t in tasks if t.type == "T2")
    assert tools.call("scholar_search", {"query": t2.answer}).hits[0].title == t2.answer
    # deterministic: a second instance ranks the same
    assert CorpusTools(docs).call("web_search", {"query": t2.answer}).text == tools.call(
        "web_search", {"query": t2.answer}).text


def test_tools_and_caps_per_paradigm() -> None:
    assert tool_schemas("foundation") == []
    for p in ("search", "deep_research"):
        schemas = tool_schemas(p)
        assert tuple(s["name"] for s in schemas) == TOOL_NAMES
        assert all(s["parameters"]["type"] == "object" and s["parameters"]["required"] for s in schemas)
    assert caps("foundation").max_tool_calls == 0
    deep, search = CAPS["deep_research"], CAPS["search"]
    assert all(getattr(deep, f) > getattr(search, f) for f in deep.__slots__)
    with pytest.raises(ValueError, match="unknown paradigm"):
        caps("agentic")
