"""The order in which `make test` (pytest -n 2 --dist loadfile) hands test files to its workers.

pytest-xdist hands out whole files, the files with the most tests first. The number of tests says little
about a file's cost here: a file of ten tests around a dbt build costs more than one of five hundred
parametrised checks, and a costly file handed out last leaves the other worker idle while it runs. So
the files known to be costly go first, the costliest first (longest-processing-time order: the cheap
files then fill the gaps), and every other file follows in xdist's own order. The figures only order
the files: a wrong or missing one makes the run slower, never wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: CPU seconds of each costly file (setup included) in a run of the suite on a 2-core machine, rounded.
#: Shared builds (conftest.built_once) count towards whichever file asked first in that run.
COSTLY_FILES: Mapping[str, float] = {
    "tests/test_dbt_incremental.py": 74,
    "tests/test_interchange.py": 74,
    "tests/inspect/test_inspect_site.py": 59,
    "tests/test_report_browser.py": 55,
    "tests/test_dbt_marts.py": 54,
    "tests/inspect/test_inspect_ingest.py": 54,
    "tests/inspect/test_inspect_metric_pages.py": 52,
    "tests/inspect/test_inspect_build.py": 49,
    "tests/inspect/test_inspect_pooled_reports.py": 49,
    "tests/test_dbt_in_place_builds.py": 48,
    "tests/test_scout_export.py": 48,
    "tests/test_search.py": 37,
    "tests/inspect/test_inspect_agenthop_task.py": 36,
    "tests/test_cli_examples.py": 31,
    "tests/test_stats_calibration.py": 30,
    "tests/test_storage_s3.py": 29,
    "tests/sciexplore/test_marts.py": 29,
    "tests/inspect/test_inspect_coverage_pages.py": 29,
    "tests/test_report_paper.py": 29,
    "tests/test_demo_reproducible.py": 27,
    "tests/inspect/test_inspect_metrics.py": 26,
    "tests/test_report_compare_behaviours.py": 26,
    "tests/inspect/test_inspect_hostile.py": 26,
    "tests/test_report_behaviours.py": 26,
    "tests/test_scanner_marts.py": 24,
    "tests/test_s3_release.py": 23,
    "tests/test_report_browser_core.py": 21,
    "tests/inspect/test_interchange_sources.py": 21,
    "tests/test_ingest_quality.py": 21,
    "tests/test_agenthop_compat.py": 20,
    "tests/test_report_site_build.py": 19,
    "tests/test_report_cli.py": 19,
    "tests/test_interchange_report.py": 19,
    "tests/inspect/test_inspect_long_tool_names.py": 19,
    "tests/sciexplore/test_report.py": 18,
    "tests/test_oracle_marts.py": 17,
    "tests/test_s3_hostile.py": 17,
    "tests/inspect/test_inspect_s3.py": 16,
    "tests/test_report_agenthop_folded.py": 15,
    "tests/inspect/test_inspect_streamed.py": 15,
}

#: the files that open the run, one per worker: the costliest file, which builds the session's warehouse
#: (conftest.built_warehouse), and a costly one that needs no shared build, so that the second worker does
#: not begin by waiting for the first one's build
FIRST = ("tests/test_dbt_incremental.py", "tests/test_dbt_marts.py")


def rank(scope: str) -> tuple[int, float]:
    """Sort key of a file (xdist's scope, the path relative to the root): FIRST, then COSTLY_FILES by
    cost, then the rest (a stable sort keeps xdist's order among them)."""
    if scope in FIRST:
        return (0, FIRST.index(scope))
    return (1, -COSTLY_FILES.get(scope, 0.0))


def costly_first_scheduler(config: Any, log: Any) -> Any:
    """xdist's loadfile scheduler, handing out the files in `rank` order; None for other --dist modes."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class CostlyFirst(LoadFileScheduling):  # type: ignore[misc]
        ordered = False

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the first call: the queue is complete (xdist's schedule() filled it)
                for scope in sorted(self.workqueue, key=rank):
                    self.workqueue.move_to_end(scope)
                self.ordered = True
            super()._assign_work_unit(node)

    return CostlyFirst(config, log)
