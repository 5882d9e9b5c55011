"""The transcript stages' targets and verdicts (bench/transcript_stages.py), on hand-made results."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from measure import StageResult  # noqa: E402
import transcript_stages as ts  # noqa: E402


def _result(name: str, wall: float, transcripts: int, rss: float = 100.0, rc: int = 0) -> StageResult:
    return StageResult(name=name, command=[], wall_s=wall, cpu_s=wall, peak_rss_mib=rss, max_process_rss_mib=rss,
                       returncode=rc, extra={"transcripts": transcripts})


def test_labels_and_targets_per_size() -> None:
    assert ts.label(100_000) == "tx100k" and ts.label(1_000_000) == "tx1m" and ts.label(300_000) == "tx300k"
    assert ts.label(400) == "tx400" and ts.label(2_500_000) == "tx2500k"
    assert ts.target("tx100k_search_regex_any_warm", 100_000) == 2
    assert ts.target("tx1m_search_regex_any_warm", 1_000_000) == 10
    assert ts.target("tx100k_search_sequence_cold", 100_000) == 30
    assert ts.target("tx1m_index", 1_000_000) == 1800 and ts.target("tx100k_index", 100_000) == 180
    assert ts.target("tx100k_dbt", 100_000) == 60 and ts.target("tx100k_dbt_first", 100_000) is None
    assert ts.target("tx300k_site", 300_000) == 600  # past 100,000 transcripts, the large targets


def test_verdicts_name_each_missed_target() -> None:
    results = [
        _result("tx100k_corpus", 999, 100_000),  # setting up: no target
        _result("tx100k_dbt_first", 999, 100_000),
        _result("tx100k_index", 170, 100_000, rss=2500),
        _result("tx100k_search_regex_any_warm", 2.5, 100_000),
        _result("tx100k_search_regex_any_cold", 29, 100_000),
        _result("tx1m_search_regex_any_warm", 2.5, 1_000_000),
        _result("tx1m_scan", 10, 1_000_000, rc=1),
        _result("inspect_ingest", 999, 0),  # another stage's
    ]
    assert ts.verdicts(results) == [
        "tx100k_index: peak RSS 2500 MiB (> 2048 MiB)",
        "tx100k_search_regex_any_warm: 2.5 s (> 2 s)",
        "tx1m_scan: failed with exit code 1",
    ]
