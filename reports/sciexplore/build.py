"""`sciexplore`: the report's sections (tables and figure data) for one judge, and the tables/ folder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenthop.harness.errors import AgentHopError

from ..core import clusters
from ..paper.build import Section, write_report
from ..paper.table import Table
from ..warehouse import Warehouse
from . import audit, data
from . import tables as tb


@dataclass
class SciReport:
    judge: str
    judges: list[str]
    systems: list[data.System]
    sections: list[Section]
    #: per system, the tasks each replicate has a response to, of the release's (tables.answered)
    coverage: list[dict[str, Any]] = field(default_factory=list)

    @property
    def partial(self) -> list[dict[str, Any]]:
        """The systems some replicate of which lacks a response to some task."""
        return [c for c in self.coverage if c["partial"]]

    @property
    def tables(self) -> list[Table]:
        return [t for s in self.sections for t in s.tables]


def _pairs(systems: Sequence[data.System], names: Sequence[tuple[str, str]]) -> list[tuple[data.System, data.System]]:
    if not names:
        return tb.default_pairs(systems)
    by = tb.pair_names(systems)
    out = []
    for a, b in names:
        for n in (a, b):
            if n not in by:
                raise AgentHopError(f"--pair names system {n!r}, which is not loaded; systems: {', '.join(by)}")
        out.append((by[a], by[b]))
    return out


def build(wh: Warehouse, judge: str = "normalized-match", pairs: Sequence[tuple[str, str]] = (),
          cluster: str | None = None) -> SciReport:
    """The report's sections; `cluster` names the task field the paired tests cluster by (None: the benchmark's
    default, domain; ``item``: each task its own cluster)."""
    from . import BENCHMARK

    systems = data.systems(wh, judge)
    clustering = clusters.resolve(wh, BENCHMARK, cluster)
    run_ids = [r["run_id"] for s in systems for r in s.runs]
    outcomes = data.outcomes(wh, judge, run_ids)
    sections: list[Section] = []

    def add(key: str, ref: str, title: str, anchor: str, tables: list[Table], note: str = "") -> None:
        sections.append(Section(key, ref, title, anchor, tables, note))

    add("table3", "Table 3", "Main results", "summary", tb.table3(systems))
    add("table4", "Table 4", "T4 format accuracy and primary-key recall", "summary", tb.table4(systems))
    add("table6", "Table 6", "T1 by hop length", "hop-accuracy", tb.table6(systems, data.hop_rows(wh, judge)))
    t7 = tb.table7(systems, data.variance_rows(wh, judge))
    add("table7", "Table 7", "Run-to-run variance", "rerun-variance", [t7],
        "" if t7.rows else "No system has two or more replicates.")
    add("figure3", "Figure 3", "Search effort", "search-effort", tb.figure3(systems, data.effort_rows(wh, judge)))
    add("paired", "Beyond the paper", "Paired exact tests", "paired-tests",
        tb.paired_tests(_pairs(systems, pairs), outcomes, clustering))
    add("failures", "Section 5.2", "Failure taxonomy", "failure-taxonomy", [tb.failure_taxonomy(systems, outcomes)])
    add("audit", "Beyond the paper", "Judge audit", "judge-audit",
        [tb.judge_audit(systems, audit.audit(data.audit_rows(wh)))])
    agreement = data.agreement_rows(wh)
    add("agreement", "Beyond the paper", "Judge agreement", "judge-agreement",
        tb.judge_agreement(agreement, data.disagreement_rows(wh)),
        "" if agreement else "Only one judge has verdicts: load a judgments file or run agenthop-judge to compare judges.")
    return SciReport(judge, data.judges(wh), systems, sections, tb.answered(systems, outcomes))


def write_tables(report: SciReport, out: Path) -> Path:
    """DIR/tables/ (CSV of every table, LaTeX of the paper's tables), swapped in whole."""
    return write_report(report, out)  # the paper report's writer only needs `.tables`
