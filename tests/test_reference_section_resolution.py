"""resolve_sections on a hand-built benchmark: which section a reference read_section call names."""

from __future__ import annotations

import pyarrow as pa

from agenthop.ingest.reference_json import SectionIndex, resolve_sections
from agenthop.ingest.reference_parse import ALIAS_COLUMN


def _index() -> SectionIndex:
    nodes = pa.table({
        "sample_id": ["s1", "s1", "s2", "s2"],
        "paper_id": ["P", "Q", "P", "R"],
        # the same paper id names a different arXiv paper in another item's graph; R has no full text
        "arxiv_id": ["2101.1", "2101.2", "2101.2", ""],
    })
    sections = pa.table({
        "arxiv_id": ["2101.1", "2101.1", "2101.1", "2101.1", "2101.2"],
        "section_index": [0, 1, 2, 3, 0],
        "header": ["Intro", "Results", "Results", "", "Methods"],
        "n_chars": [100, 200, 300, 400, 50],
    })
    return SectionIndex((nodes, sections))


def _calls(rows: list[tuple[str, str | None, str | None, int | None]]) -> pa.Table:
    sample, paper, header, alias = zip(*rows)
    return pa.table({
        "sample_id": pa.array(sample, pa.string()),
        "paper_id": pa.array(paper, pa.string()),
        "resolved_header": pa.array(header, pa.string()),
        ALIAS_COLUMN: pa.array(alias, pa.int32()),
        "resolved_section_index": pa.array([None] * len(rows), pa.int32()),
        "output_chars": pa.array([7] * len(rows), pa.int64()),
    })


def test_each_call_gets_its_papers_section_by_shown_header_then_alias_then_first() -> None:
    calls = _calls([
        ("s1", "P", "Intro", None),      # one match: section 0; 5 + 10 + 100 chars
        ("s1", "P", "Results", 2),       # two 'Results': the alias names index 2
        ("s1", "P", "Results", None),    # no alias: the first of them, index 1
        ("s1", "P", "Results", 0),       # the alias names a section with another header: the first
        ("s1", "P", "Section 4", None),  # an empty header is shown numbered from 1
        ("s2", "P", "Methods", None),    # s2's P is 2101.2
        ("s1", "P", "Methods", None),    # s1's P has no 'Methods'
        ("s2", "R", "Intro", None),      # a node without full text
        ("s1", None, "Intro", None),     # no paper id
        ("s1", "P", None, None),         # not a successful read: untouched
        ("s3", "P", "Intro", None),      # a sample the benchmark lacks
    ])
    out = resolve_sections(calls, _index())
    assert ALIAS_COLUMN not in out.column_names
    assert out.column("resolved_section_index").to_pylist() == [0, 2, 1, 1, 3, 0, None, None, None, None, None]
    assert out.column("output_chars").to_pylist() == [
        5 + 10 + 100, 7 + 10 + 300, 7 + 10 + 200, 7 + 10 + 200, 9 + 10 + 400, 7 + 10 + 50, 7, 7, 7, 7, 7]


def test_without_a_benchmark_or_calls_nothing_is_resolved() -> None:
    calls = _calls([("s1", "P", "Intro", None)])
    out = resolve_sections(calls, SectionIndex(None))
    assert out.column("resolved_section_index").to_pylist() == [None]
    assert out.column("output_chars").to_pylist() == [7]
    empty = resolve_sections(calls.slice(0, 0), _index())
    assert empty.num_rows == 0 and ALIAS_COLUMN not in empty.column_names
