"""The benchmark registry's public interface (harness/benchmarks/__init__.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenthop.harness import benchmarks
from agenthop.harness.errors import AgentHopError


def _toy(name: str, marker: str = "toy.jsonl") -> benchmarks.Benchmark:
    return benchmarks.Benchmark(
        name=name, title="toy", is_release=lambda root: (root / marker).is_file(), release_marker=marker,
        release_content_sha256=lambda root: "x", release_tables=lambda root, sha: None,  # type: ignore[arg-type,return-value]
        raw_tables={}, raw_keys={}, item_ids_sql="SELECT 'a'",
    )


def test_agenthop_is_an_entry_with_its_hooks() -> None:
    bench = benchmarks.get("agenthop")
    assert "agenthop" in benchmarks.names()
    assert bench.tool_names[-1] == "submit_answer" and bench.episode is not None
    assert {"items", "sections", "recall_labels"} <= set(bench.raw_tables)
    assert set(bench.raw_tables) <= set(benchmarks.raw_tables())


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(AgentHopError, match="unknown benchmark 'nope'; known benchmarks: .*agenthop"):
        benchmarks.get("nope")


def test_register_detect_unregister(tmp_path: Path) -> None:
    toy = benchmarks.register(_toy("toy-a"))
    try:
        with pytest.raises(AgentHopError, match="already registered"):
            benchmarks.register(_toy("toy-a"))
        (tmp_path / "toy.jsonl").write_text("{}\n")
        assert benchmarks.detect(tmp_path) is toy
        with pytest.raises(AgentHopError, match=r"not a benchmark release \(agenthop: qa/full.jsonl is missing; "
                                                r".*toy-a: toy.jsonl is missing"):
            benchmarks.detect(tmp_path / "missing")
        benchmarks.register(_toy("toy-b"))
        with pytest.raises(AgentHopError, match="looks like a release of several benchmarks: toy-a, toy-b"):
            benchmarks.detect(tmp_path)
    finally:
        benchmarks.unregister("toy-a")
        benchmarks.unregister("toy-b")
    assert "toy-a" not in benchmarks.names()
    with pytest.raises(AgentHopError, match="registry entry"):
        benchmarks.unregister("agenthop")


def test_an_entry_that_cannot_load_is_named_and_hides_no_other(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(benchmarks.ENTRIES, "broken", "agenthop.harness.benchmarks.not_there")
    with pytest.raises(AgentHopError, match="benchmark 'broken' cannot be loaded from agenthop.harness.benchmarks.not_there"):
        benchmarks.get("broken")
    names = [b.name for b in benchmarks.available()]
    assert "agenthop" in names and "broken" not in names
