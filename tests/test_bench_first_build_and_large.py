"""The verdicts of the first-build and large-Inspect-log bench stages, on hand-built stage results
(the figures the README's table states come from these functions)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import first_build  # noqa: E402
import inspect_large  # noqa: E402
from measure import StageResult  # noqa: E402


def _stage(name: str, wall: float, cpu: float = 0.0, rss: float = 0.0, **extra: object) -> StageResult:
    return StageResult(name, [], wall, cpu, rss, rss, 0, dict(extra))


def test_slopes_and_the_200k_extrapolation() -> None:
    small = _stage("inspect_large_import_2000", 20.0, 6.0, 400.0, samples=2000)
    mid = _stage("inspect_large_import_4000", 30.0, 10.0, 500.0, samples=4000)
    big = _stage("inspect_large_import_8000", 50.0, 18.0, 700.0, samples=8000)
    inspect_large.add_slopes([small, mid, big])
    # (50 - 20) s / 6,000 samples = 5 ms; (18 - 6) CPU s / 6,000 = 2 ms; memory between the two largest:
    # (700 - 500) MiB / 4,000 = 51.2 KiB
    assert big.extra["ms_per_sample"] == 5.0 and big.extra["cpu_ms_per_sample"] == 2.0
    assert big.extra["kib_per_sample"] == 51.2
    assert big.extra["peak_rss_mib_by_samples"] == {2000: 400, 4000: 500, 8000: 700}
    # 192,000 samples more: 50 + 960 s, 18 + 384 CPU s, 700 + 9,600 MiB
    assert big.extra["extrapolated_200k_s"] == 1010.0
    assert big.extra["extrapolated_200k_cpu_s"] == 402.0
    assert big.extra["extrapolated_200k_mib"] == 10300
    assert "200,000 samples extrapolated: 1010.0 s (402.0 s CPU), 10,300 MiB" in inspect_large.summary(big)
    missed = inspect_large.verdicts([small, mid, big, _stage("inspect_large_reimport_8000", 4.0, samples=8000)])
    assert missed == ["inspect_large_import_8000: 200,000 samples extrapolated to 402.0 CPU s > 120 s",
                      "inspect_large_import_8000: 200,000 samples extrapolated to 10,300 MiB > 2048 MiB"]


def test_memory_that_stops_growing_extrapolates_flat() -> None:
    # DuckDB's buffer fills up to its cap between the two smaller logs, then nothing grows
    small = _stage("inspect_large_import_2000", 4.0, 3.0, 300.0, samples=2000)
    mid = _stage("inspect_large_import_4000", 7.0, 6.0, 420.0, samples=4000)
    big = _stage("inspect_large_import_8000", 13.0, 12.0, 418.0, samples=8000)
    inspect_large.add_slopes([small, mid, big])
    assert big.extra["kib_per_sample"] == 0.0 and big.extra["extrapolated_200k_mib"] == 418
    assert "peak RSS 2,000: 300 MiB, 4,000: 420 MiB, 8,000: 418 MiB" in inspect_large.summary(big)
    # 1.5 ms CPU a sample: 12 + 288 s
    assert inspect_large.verdicts([small, mid, big]) == [
        "inspect_large_import_8000: 200,000 samples extrapolated to 300.0 CPU s > 120 s"]
    api = _stage("inspect_large_import_inspect_2000", 30.0, 20.0, 500.0, samples=2000, reader="inspect",
                 ms_per_sample=15.0, cpu_ms_per_sample=10.0, extrapolated_200k_cpu_s=2000.0)
    assert inspect_large.verdicts([api]) == [
        "inspect_large_import_inspect_2000: 200,000 samples through Inspect's reader extrapolated to 2000.0 CPU s "
        "> 120 s"]


def test_at_200k_the_measured_figures_are_judged() -> None:
    small = _stage("inspect_large_import_50000", 25.0, 25.0, 900.0, samples=50_000)
    big = _stage("inspect_large_import_200000", 100.0, 100.0, 1500.0, samples=200_000)
    inspect_large.add_slopes([small, big])
    assert "extrapolated_200k_s" not in big.extra
    assert inspect_large.verdicts([small, big, _stage("inspect_large_reimport_200000", 6.0, samples=200_000)]) == [
        "inspect_large_reimport_200000: 6.0 s > 5 s"]


def test_first_build_verdicts() -> None:
    build = _stage("dbt_first_build_1x", 12.5)
    scope = _stage("dbt_first_same_scope_1x", 5.0, ratio_to_handwritten=3.2)
    fine = _stage("dbt_first_same_scope_10x", 5.0, ratio_to_handwritten=0.9)
    assert first_build.verdicts([build, scope, fine]) == [
        "dbt_first_build_1x: 12.5 s > 12 s", "dbt_first_same_scope_1x: 3.2x the hand-written query (> 3x)"]
    assert first_build.verdicts([_stage("dbt_first_build_1x", 11.0)]) == []


def test_parse_profile_from_perf_info(tmp_path: Path) -> None:
    """The parse row of the first-build bench reads dbt's perf_info.json: the load's phases, each parser
    summed over the projects, and the models the static parser read."""
    import json

    perf = tmp_path / "perf_info.json"
    perf.write_text(json.dumps({
        "static_analysis_path_count": 10, "static_analysis_parsed_path_count": 4,
        "load_macros_elapsed": 1.25, "parse_project_elapsed": 3.5, "load_all_elapsed": 5.0,
        "projects": [
            {"project_name": "agenthop", "parsers": [
                {"parser": "model", "elapsed": 1.5, "parsed_path_count": 10},
                {"parser": "test", "elapsed": 2.0, "parsed_path_count": 3}]},
            {"project_name": "dbt", "parsers": [{"parser": "doc", "elapsed": 0.004, "parsed_path_count": 1}]},
        ],
    }))
    profile = first_build.parse_profile(perf)
    assert profile == {
        "load_all_s": 5.0, "macros_s": 1.25, "project_s": 3.5, "static_models": "4 of 10",
        "parsers": {"model": {"seconds": 1.5, "files": 10}, "test": {"seconds": 2.0, "files": 3},
                    "doc": {"seconds": 0.0, "files": 1}},
    }
    # 8.0 s of wall time, 5.0 s of it the load: 3.0 s for the rest
    assert first_build.parse_summary(profile, 8.0) == (
        "parse 5.0 s: macros 1.25 s, project 3.5 s (doc 0.0 s (1 files), model 1.5 s (10 files), test 2.0 s "
        "(3 files)); 4 of 10 models read without rendering; 3.0 s importing dbt, writing the manifest and the rest")
    assert first_build.parse_profile(tmp_path / "missing.json") == {}
    assert first_build.parse_summary({}, 8.0) == ""


def test_critical_path_of_a_run(tmp_path: Path) -> None:
    """The same-scope row names the chain of nodes that decided when the run ended: from the last node
    back through the parent that finished last, with the time each node waited for a thread after its
    parent had finished; hooks (operation nodes) and parents outside the run are left out."""
    import json

    def node(uid: str, start: float, end: float) -> dict[str, object]:
        stamp = "2026-12-07T10:00:{:06.3f}Z"
        return {"unique_id": uid, "timing": [
            {"name": "compile", "started_at": stamp.format(start), "completed_at": stamp.format(start + 0.01)},
            {"name": "execute", "started_at": stamp.format(start + 0.01), "completed_at": stamp.format(end)}]}

    (tmp_path / "run_results.json").write_text(json.dumps({"results": [
        node("model.p.stg_a", 0.0, 0.5),
        node("model.p.stg_b", 0.0, 0.25),
        node("model.p.int_slow", 0.5, 2.0),       # holds a thread that int_c needed
        node("model.p.int_c", 1.0, 1.5),          # ready at 0.5 s, started at 1.0 s
        node("model.p.mart", 2.0, 2.75),
        node("operation.p.p-on-run-end-0", 2.75, 3.0),
    ]}))
    (tmp_path / "manifest.json").write_text(json.dumps({"nodes": {
        "model.p.stg_a": {"depends_on": {"nodes": ["source.p.raw.a"]}},
        "model.p.stg_b": {"depends_on": {"nodes": []}},
        "model.p.int_slow": {"depends_on": {"nodes": ["model.p.stg_b"]}},
        "model.p.int_c": {"depends_on": {"nodes": ["model.p.stg_a", "model.p.stg_b"]}},
        "model.p.mart": {"depends_on": {"nodes": ["model.p.int_c", "model.p.int_slow"]}},
    }}))
    path = first_build.critical_path(tmp_path / "run_results.json", tmp_path / "manifest.json")
    assert path == [{"node": "stg_b", "seconds": 0.25, "waited_s": 0.0},
                    {"node": "int_slow", "seconds": 1.5, "waited_s": 0.25},
                    {"node": "mart", "seconds": 0.75, "waited_s": 0.0}]
    assert first_build.critical_path_summary(path) == (
        "critical path 2.75 s: stg_b 0.25 s, int_slow 1.5 s (after 0.25 s waiting), mart 0.75 s")
    assert first_build.critical_path(tmp_path / "missing.json", tmp_path / "manifest.json") == []
    assert first_build.critical_path_summary([]) == ""
