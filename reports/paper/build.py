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
from . import layouts as lay
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

    t2 = an.table2(panel, leaders)
    t2.view = lay.table2(t2)
    order = [r["model"] for r in t2.rows]  # Table 2's order: by tier, family, accuracy
    members = [panel.by_model[m] for m in order]
    add("table2", "Table 2", "Main results", "paper-table-2", [t2])
    t3 = an.table3(wh, panel)
    t3.view = lay.table3(t3, members, order)
    add("table3", "Table 3", "After a wrong-paper read", "paper-table-3", [t3])
    t4, t18 = an.table4(wh, panel), an.table18(wh, panel)
    t4.view = lay.table4(t4, an.q.panel_accuracies(wh, panel.models))
    t18.view = lay.table18(t18, order)
    add("table4", "Tables 4 and 18", "Condition ablations", "paper-table-4", [t4, t18],
        "" if t4.rows else "No model of the panel has runs under two conditions: give models closed_book and "
                           "no_search conditions in the panel file for Tables 4 and 18.")
    t8 = an.table8(wh, panel)
    t8.view = lay.table8(t8, order)
    add("table8", "Table 8", "Cost", "paper-table-8", [t8])
    t9 = an.table9(wh, panel)
    t9.view = lay.table9(t9, members, order)
    add("table9", "Table 9", "Stopping behaviour", "paper-table-9", [t9])
    t10, t10s, t10r = an.table10(wh, panel)
    t10.view = lay.table10(t10, t10s, members, order)
    t10r.view = lay.table10_reasoning(t10r, members, order)
    t10s.view = lay.hidden(t10s)
    add("table10", "Table 10", "Accuracy by cell and reasoning type", "paper-table-10", [t10, t10s, t10r])
    t11 = an.table11(wh, panel)
    t11.view = lay.table11(t11)
    add("table11", "Table 11", "Evidence contact", "paper-table-11", [t11])
    t12 = an.table12(walk, leaders)
    t12.view = lay.table12(t12)
    add("table12", "Table 12", "Paired tests", "paper-table-12", [t12])
    t13 = an.table13(wh, panel)
    t13.view = lay.table13(t13)
    add("table13", "Table 13", "Bigram effects", "paper-table-13", [t13])
    t14 = an.table14(wh, panel)
    t14.view = lay.table14(t14, members)
    add("table14", "Table 14", "Trigrams", "paper-table-14", [t14])
    t15 = an.table15(panel)
    t15.view = lay.table15(t15)
    add("table15", "Table 15", "Non-submission terminations", "paper-table-15", [t15])
    if external is None:
        add("table16", "Table 16", "External benchmarks", "paper-table-16", [],
            "No external scores given: pass --external FILE (CSV: model, benchmark, score; an example is "
            "panels/demo_external.csv) for the scores table and the Spearman and Pearson correlations.")
    else:
        t16, _ = an.table16(panel, external)
        scores = an.table16_scores(panel, external)
        scores.view = lay.table16(scores, order)
        add("table16", "Table 16", "External benchmarks", "paper-table-16", [scores, t16],
            "" if t16.rows else "None of the external scores names a panel model.")
    t17 = an.table17(wh, panel)
    t17.view = lay.table17(t17)
    add("table17", "Table 17", "Reruns", "paper-table-17", [t17],
        "" if t17.rows else f"No model has two or more replicates under {condition!r}: set replicates: 2 or "
                            "more for a model in the panel file.")
    t19 = an.table19(wh, covariates)
    t19.view = lay.table19(t19)
    add("table19", "Table 19", "Closed-book accuracy by slice", "paper-table-19", [t19],
        "" if t19.rows else "No closed_book runs in the warehouse: add the closed_book condition to models of "
                            "the panel file.")
    f2 = an.figure2(wh, panel)
    add("figure2", "Figure 2", "Generation gap", "paper-figure-2", [f2],
        "" if f2.rows else "No family of the panel has models of two generations: set generation: on models "
                           "of one family in the panel file.")
    add("figure4", "Figure 4", "Item difficulty", "paper-figure-4", list(an.figure4(wh, panel)))
    add("figure5", "Figure 5", "Accuracy vs paper recall", "paper-figure-5", [an.figure5(panel)])
    add("figure6", "Figure 6", "Transition matrices", "paper-figure-6", [an.figure6(wh, panel)])
    add("reliability", "Reliability", "Internal consistency of the panel", "paper-reliability", list(an.reliability(wh, panel)))
    add("budget", "Beyond the paper", "Accuracy at lower caps", "paper-budget-truncated",
        [an.budget_truncated(wh, panel)])
    bf = an.bigram_frequency(wh, panel, an.bigram_frequency_pairs(panel, pairs))
    bf.view = lay.bigram_frequency(bf)
    add("bigram_frequency", "Beyond the paper", "Bigram frequencies of two models", "paper-bigram-frequency", [bf],
        "" if bf.rows else "The panel has fewer than two models with tool calls.")
    return PaperReport(panel, sections)


def write_tables(report: PaperReport, tables_dir: Path) -> list[Path]:
    """Every table as <key>.csv and, for tables, <key>.tex under tables_dir (replaced whole)."""
    written = []
    tables_dir.mkdir(parents=True, exist_ok=True)
    for t in report.tables:
        written.append(_write(tables_dir / f"{t.key}.csv", to_csv(t)))
        if t.shown.latex:
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
