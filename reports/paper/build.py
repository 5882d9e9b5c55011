"""`paper`: every analysis of the paper for one panel, as sections of tables (and the data of figures)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agenthop.harness.errors import AgentHopError

from ..warehouse import Warehouse
from . import analyses as an
from .export import to_csv, to_latex
from .inputs import Covariates, ExternalScore
from .table import Table


@dataclass
class Section:
    """One analysis: what it reproduces, its tables, and a note (e.g. why it is empty)."""

    key: str
    ref: str
    title: str
    definition: str  # anchor in docs/metrics.md
    tables: list[Table]
    note: str = ""
    extras: dict[str, object] = field(default_factory=dict)


@dataclass
class PaperReport:
    panel: an.Panel
    sections: list[Section]

    @property
    def tables(self) -> list[Table]:
        return [t for s in self.sections for t in s.tables]


def build(
    wh: Warehouse,
    condition: str = "full",
    external: Sequence[ExternalScore] | None = None,
    covariates: Covariates | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
) -> PaperReport:
    panel = an.load_panel(wh, condition)
    for a, b in pairs or ():
        for m in (a, b):
            if m not in panel.by_model:
                raise AgentHopError(f"paper: --pair names model {m!r}, which has no {condition!r} run; "
                                    f"panel models: {', '.join(panel.models)}")
    counts = an.q.paired_counts(wh, condition)
    leaders = an.leader_tests(panel, counts)
    walk = an.walk_tests(panel, counts)
    sections: list[Section] = []

    def add(key: str, ref: str, title: str, definition: str, tables: list[Table], note: str = "") -> None:
        sections.append(Section(key, ref, title, definition, tables, note))

    add("table2", "Table 2", "Main results", "paper-table-2", [an.table2(panel, leaders)])
    add("table3", "Table 3", "After a wrong-paper read", "paper-table-3", [an.table3(wh, panel)])
    t4 = an.table4(wh, panel)
    add("table4", "Tables 4 and 18", "Condition ablations", "paper-table-4", [t4],
        "" if t4.rows else "No model of the panel has runs under two conditions.")
    add("table8", "Table 8", "Cost", "paper-table-8", [an.table8(wh, panel)])
    add("table9", "Table 9", "Stopping behaviour", "paper-table-9", [an.table9(wh, panel)])
    add("table10", "Table 10", "Accuracy by cell and reasoning type", "paper-table-10", an.table10(wh, panel))
    add("table11", "Table 11", "Evidence contact", "paper-table-11", [an.table11(wh, panel)])
    add("table12", "Table 12", "Paired tests", "paper-table-12", [an.table12(walk, leaders)])
    add("table13", "Table 13", "Bigram effects", "paper-table-13", [an.table13(wh, panel)])
    add("table14", "Table 14", "Trigrams", "paper-table-14", [an.table14(wh, panel)])
    add("table15", "Table 15", "Non-submission terminations", "paper-table-15", [an.table15(panel)])
    if external is None:
        add("table16", "Table 16", "External benchmarks", "paper-table-16", [],
            "No external scores given: pass --external FILE (CSV: model, benchmark, score) for the Spearman and "
            "Pearson correlations with other benchmarks.")
    else:
        t16, _ = an.table16(panel, external)
        add("table16", "Table 16", "External benchmarks", "paper-table-16", [t16],
            "" if t16.rows else "None of the external scores names a panel model.")
    t17 = an.table17(wh, panel)
    add("table17", "Table 17", "Reruns", "paper-table-17", [t17],
        "" if t17.rows else f"No model has two or more replicates under {condition!r}.")
    t19 = an.table19(wh, covariates)
    add("table19", "Table 19", "Closed-book accuracy by slice", "paper-table-19", [t19],
        "" if t19.rows else "No closed_book runs in the warehouse.")
    f2 = an.figure2(wh, panel)
    add("figure2", "Figure 2", "Generation gap", "paper-figure-2", [f2],
        "" if f2.rows else "No family of the panel has models of two generations (set generation: in the panel).")
    add("figure4", "Figure 4", "Item difficulty", "paper-figure-4", list(an.figure4(wh, panel)))
    add("figure5", "Figure 5", "Accuracy vs paper recall", "paper-figure-5", [an.figure5(panel)])
    add("figure6", "Figure 6", "Transition matrices", "paper-figure-6", [an.figure6(wh, panel)])
    add("reliability", "Reliability", "Reliability of the panel", "paper-reliability", list(an.reliability(wh, panel)))
    add("budget", "Beyond the paper", "Accuracy at lower caps", "paper-budget-truncated",
        [an.budget_truncated(wh, panel)])
    add("bigram_frequency", "Beyond the paper", "Bigram frequencies of two models", "paper-bigram-frequency",
        [an.bigram_frequency(wh, panel, an.bigram_frequency_pairs(panel, pairs))])
    return PaperReport(panel, sections)


def write_tables(report: PaperReport, tables_dir: Path) -> list[Path]:
    """Every table as <key>.csv and, for tables, <key>.tex under tables_dir (replaced whole)."""
    written = []
    tables_dir.mkdir(parents=True, exist_ok=True)
    for t in report.tables:
        written.append(_write(tables_dir / f"{t.key}.csv", to_csv(t)))
        if t.latex:
            written.append(_write(tables_dir / f"{t.key}.tex", to_latex(t)))
    return written


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def write_report(report: PaperReport, out: Path) -> Path:
    """DIR/tables/, written to a temporary sibling and swapped in whole, so a failure never leaves half
    the tables; the page (DIR/index.html) and its folder are written by the report site afterwards."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(dir=out, prefix=".paper-"))
    except OSError as exc:
        raise AgentHopError(f"--out {out}: cannot write the report ({exc.strerror or exc})") from None
    try:
        write_tables(report, stage / "tables")
        old = out / "tables"
        if old.exists():
            shutil.rmtree(old)
        os.replace(stage / "tables", old)
    except OSError as exc:
        raise AgentHopError(f"--out {out}: cannot write the tables ({exc.strerror or exc})") from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return old
