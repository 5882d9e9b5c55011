"""The paper report's HTML page: one section per analysis, its tables as HTML, figures as charts."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..queries import all_runs
from ..render import Charts, Provenance, render
from ..warehouse import Warehouse
from . import figures
from .analyses import PAPER_TOOLS
from .build import PaperReport, Section
from .table import Table

#: Where the definitions live; linked by file URL when the docs are installed beside the package.
METRICS_DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
#: Tables with more rows than this are linked as CSV only (figure data, per-item lists).
MAX_HTML_ROWS = 400


def definition_href(anchor: str) -> str:
    base = METRICS_DOC.as_uri() if METRICS_DOC.exists() else "docs/metrics.md"
    return f"{base}#{anchor}"


def html_table(t: Table) -> dict[str, Any]:
    """Header and body of a table as the template prints them (formatted cells with their marks)."""
    cols = t.shown_columns
    groups = []
    for group, rows in t.groups():
        body = [[{"text": c.format(row.get(c.key)), "num": c.kind != "text",
                  "marks": sorted(t.marks.get((i, c.key), set()))} for c in cols] for i, row in rows]
        groups.append({"name": group, "rows": body})
    return {"key": t.key, "title": t.title, "note": t.note, "headers": [c.header for c in cols],
            "num": [c.kind != "text" for c in cols], "groups": groups, "n_rows": len(t.rows),
            "shown": bool(cols) and len(t.rows) <= MAX_HTML_ROWS and t.latex, "latex": t.latex}


def section_charts(s: Section, report: PaperReport, box: Charts) -> list[str]:
    models = report.panel.models
    by_key = {t.key: t for t in s.tables}
    specs: list[dict[str, Any] | None] = []
    if "figure02_generations" in by_key:
        specs.append(figures.generation_gap(by_key["figure02_generations"].rows))
    if "figure04_histogram" in by_key:
        rows = by_key["figure04_histogram"].rows
        specs += [figures.difficulty_histogram(rows, "cell", len(models)),
                  figures.difficulty_histogram(rows, "consensus_tier", len(models))]
    if "figure05_recall_accuracy" in by_key:
        specs.append(figures.recall_accuracy(by_key["figure05_recall_accuracy"].rows))
    if "figure06_transitions" in by_key:
        specs.append(figures.transition_matrices(by_key["figure06_transitions"].rows, models, PAPER_TOOLS))
    if "budget_truncated" in by_key:
        specs.append(figures.budget_curves(by_key["budget_truncated"].rows, models))
    if "reliability_items" in by_key:
        specs.append(figures.discrimination_histogram([r["discrimination"] for r in by_key["reliability_items"].rows]))
    return [cid for cid in (box.add(spec) for spec in specs) if cid]


def item_links(report: PaperReport, items_href: str) -> dict[str, Any]:
    """Figure 4's extremes: the items no panel model answered and those every model answered."""
    t = next(t for s in report.sections for t in s.tables if t.key == "figure04_difficulty")
    def link(r: dict[str, Any]) -> dict[str, str]:
        return {"sample_id": r["sample_id"], "href": items_href.format(quote(str(r["sample_id"]), safe=""))}

    none = [link(r) for r in t.rows if r["n_correct"] == 0]
    all_ = [link(r) for r in t.rows if r["n_correct"] == r["n_models"]]
    return {"none": none[:60], "n_none": len(none), "all": all_[:60], "n_all": len(all_)}


def render_page(wh: Warehouse, report: PaperReport, items_href: str = "index_files/items/{}.html") -> str:
    box = Charts("paper")
    sections = []
    for s in report.sections:
        sections.append({"key": s.key, "ref": s.ref, "title": s.title, "note": s.note,
                         "href": definition_href(s.definition), "tables": [html_table(t) for t in s.tables],
                         "charts": section_charts(s, report, box)})
    runs = [r for r in all_runs(wh)]
    context = {
        "title": f"AgentHop paper analysis · {report.panel.condition} panel",
        "condition": report.panel.condition,
        "n_models": len(report.panel.members),
        "sections": sections,
        "items": item_links(report, items_href),
        "n_simulated": sum(1 for m in report.panel.members if m.get("is_simulated")),
    }
    return render("paper.html.j2", context, box, Provenance.build(wh.path, runs))
