"""AgentHop's sections of the shared reruns page (reports/agenthop/reruns.py) and the registry hook that
gives the shared pages a benchmark's own item pages, on hand-built rows."""

from __future__ import annotations

from agenthop.reports.agenthop import reruns
from agenthop.reports.core import registry
from agenthop.reports.core.runs import RunInfo


def _variance(condition: str) -> list[dict]:
    return [
        {"condition": condition, "metric": "avg_tokens_k", "n_runs": 2, "mean": 40.0, "std": 2.5, "range": 5.0},
        {"condition": condition, "metric": "section_recall", "n_runs": 2, "mean": 0.5, "std": 0.25, "range": 0.5},
        {"condition": condition, "metric": "accuracy", "n_runs": 2, "mean": 0.75, "std": 0.05, "range": 0.1},
        {"condition": condition, "metric": "zeta", "n_runs": 2, "mean": 1.0, "std": 0.0, "range": 0.0},
        {"condition": "other", "metric": "accuracy", "n_runs": 3, "mean": 0.1, "std": 0.0, "range": 0.0},
    ]


def test_table17_rows_in_the_papers_order_with_labels() -> None:
    rows = reruns.table17(_variance("full"), "full")
    assert [r["metric"] for r in rows] == ["accuracy", "section_recall", "avg_tokens_k", "zeta"]  # unknown last
    assert [r["label"] for r in rows] == ["accuracy %", "section recall %", "avg tokens (K)", "zeta"]
    assert [r["fraction"] for r in rows] == [True, True, False, False]
    assert (rows[0]["mean"], rows[0]["std"], rows[0]["range"]) == (0.75, 0.05, 0.1)


def test_table17_of_a_closed_book_group_prints_recall_as_na() -> None:
    rows = {r["metric"]: r for r in reruns.table17(_variance("closed_book"), "closed_book")}
    assert (rows["section_recall"]["mean"], rows["section_recall"]["std"], rows["section_recall"]["range"]) == (None,) * 3
    assert rows["accuracy"]["mean"] == 0.75 and rows["section_recall"]["n_runs"] == 2


def test_rerun_groups_are_conditions_with_two_replicates() -> None:
    runs = [RunInfo("b1", "m", "full", 1), RunInfo("a0", "m", "full", 0), RunInfo("c0", "m", "closed_book", 0),
            RunInfo("c0b", "m", "closed_book", 0)]  # two runs of one replicate: no rerun group
    groups = reruns.rerun_groups(runs)
    assert list(groups) == ["full"]
    assert [r.run_id for r in groups["full"]] == ["a0", "b1"]  # by replicate, as the shared page orders them


def test_a_benchmarks_item_pages_reach_the_shared_pages() -> None:
    own, shared = object(), object()
    registry.register(registry.ReportSections(name="toyqa", item_pages=own))
    registry.register(registry.ReportSections(name="plainqa"))
    try:
        assert registry.item_pages_of("toyqa", shared) is own
        assert registry.item_pages_of("plainqa", shared) is shared  # an entry without item pages
        assert registry.item_pages_of("nosuchbench", shared) is shared  # no entry
        from agenthop.reports.agenthop import item
        assert registry.item_pages_of("agenthop", shared) is item.PAGES
        assert registry.sections_for("agenthop").reruns is reruns.sections
        from agenthop.reports.agenthop import compare_sections, leaderboard
        ah = registry.sections_for("agenthop")
        assert ah.compare is compare_sections.sections and ah.leaderboard is leaderboard.sections
        # every page is the shared page: a benchmark brings sections, never a page of its own
        assert not hasattr(ah, "pages") and not hasattr(registry, "own_page")
    finally:
        registry.unregister("toyqa")
        registry.unregister("plainqa")
