"""Pieces of the fast reference-JSON import that the bulk-vs-record equality test cannot see (both
paths share them), and the reference-import bench verdict."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from agenthop.ingest.reference_bulk import _status, parse_task
from agenthop.ingest.reference_parse import _dumps, status_of

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from measure import StageResult  # noqa: E402
from reference_import import verdicts  # noqa: E402

VALUES = [
    "plain", 'quote " backslash \\ newline \n tab \t nul \x00 unit \x1f del \x7f', "é ü 中文 😀 \u2028",
    0, -5, 2**70, 1.5, 1e-7, 1e22, -0.0, float("nan"), float("inf"), True, False, None,
    [], {}, [1, "x", None, [2.5, {"k": []}]], {"paper_id": "p1", "section": "B"}, {"é": {"n": [True]}},
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_args_text_is_json_dumps(value: object) -> None:
    assert _dumps(value) == json.dumps(value, ensure_ascii=False)


def test_status_rules_on_columns_match_status_of() -> None:
    outputs = [
        "REJECTED: Insufficient budget (remaining 1) for read_section.",
        "REJECTED: Tool 'search_papers' is disabled in this condition.",
        "REJECTED: Tool 'x' is fine\nbut disabled on the second line",
        "Unknown tool: foo", "Error calling read_section: Missing", "Paper 'p9' not found in this item's graph.",
        "Paper 'p9' exists\nnot found later", "Full text not available for this paper.",
        "No sections found for paper p1", "Empty query.", "Section 'Z' not found in paper p1.",
        "Section 'Z'\n' not found in paper", "Tool 'x' failed", "=== Intro ===\n\ntext", "Result: ok", "",
    ]
    status, tool_error = _status(pa.array(outputs, pa.string()))
    assert status.to_pylist() == [status_of(o) for o in outputs]
    assert list(tool_error) == [o.startswith(("Unknown tool", "Error calling", "Tool '")) for o in outputs]


def test_parse_task_restores_the_garbage_collector(tmp_path: Path) -> None:
    bad = tmp_path / "s1.json"
    bad.write_text("{not json", encoding="utf-8")
    assert gc.isenabled()
    result = parse_task("ref__m__full", [(str(bad), [])])
    assert result["error"] is not None and str(bad) in result["error"]
    assert gc.isenabled()
    gc.disable()
    try:
        parse_task("ref__m__full", [(str(bad), [])])
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()


def _stage(name: str, wall: float, cpu: float, **extra: object) -> StageResult:
    return StageResult(name, [], wall, cpu, 0.0, 0.0, 0, dict(extra))


def test_bench_verdict_names_a_missed_ratio() -> None:
    missed = [_stage("ref_json_load", 2.0, 2.0), _stage("ref_ingest", 7.0, 9.0, ratio_to_json_load=3.5,
                                                        cpu_ratio_to_json_load=4.5)]
    assert verdicts(missed) == ["ref_ingest 3.5x json.load (target 2x; 4.5x in CPU seconds)"]
    met = [_stage("ref_ingest", 3.0, 3.0, ratio_to_json_load=1.5, cpu_ratio_to_json_load=1.5)]
    assert verdicts(met) == []
