"""The paper report's HTML page: one section per analysis, its tables as HTML, figures as charts."""

from __future__ import annotations

from typing import Any

from ..agenthop import item as item_pages
from ..agenthop.queries import RunInfo, all_runs, label_runs
from ..render import Charts, Provenance
from ..site import Site
from ..warehouse import Warehouse
from . import figures
from .analyses import PAPER_TOOLS
from .build import PaperReport, Section
from .table import REPEATS, Table

#: Tables with more rows than this are linked as CSV only (figure data, per-item lists).
MAX_HTML_ROWS = 400
#: A row label (a model name) longer than this may wrap at its hyphens, so that a real model id
#: ("gemini-2.0-flash-thinking-exp-01-21") does not push a wide table past a 1,024 px page; shorter
#: names stay on one line.
MAX_ONE_LINE_LABEL = 24


def _sort_key(v: Any) -> str:
    """data-sort of a numeric cell: the raw value, so sorting ignores the printed rounding."""
    return "" if v is None or isinstance(v, (str, bool)) else repr(float(v))


def html_table(t: Table) -> dict[str, Any]:
    """Header and body of a table as the template prints them (formatted cells with their marks), in the
    paper's layout (the table's view) when it has one; the CSV link and row count are the table's own."""
    v = t.shown
    cols = v.shown_columns
    groups = []
    for group, rows in v.groups():
        body = [[{"text": c.format(row.get(c.key)), "num": c.kind != "text", "sort": _sort_key(row.get(c.key)),
                  "marks": sorted(v.marks.get((i, c.key), set())), "repeat": c.key in row.get(REPEATS, ())}
                 for c in cols] for i, row in rows]
        groups.append({"name": group, "rows": body})
    for g in groups:
        for row in g["rows"]:
            if row:
                row[0]["wrap"] = len(row[0]["text"]) > MAX_ONE_LINE_LABEL
    footer = [[{"text": c.format(row.get(c.key)), "num": c.kind != "text"} for c in cols] for row in v.footer]
    starts, col = [], 0
    for _, span in v.header_groups:  # the first column of each spanning block after the first gets a rule
        if col:
            starts.append(col)
        col += span
    return {"key": t.key, "title": v.title, "note": v.note, "headers": [c.header for c in cols],
            "tips": [c.tip or "" for c in cols], "num": [c.kind != "text" for c in cols],
            "header_groups": v.header_groups, "units": v.units, "groups": groups, "footer": footer,
            "footer_labels": [str(row.get(cols[0].key)) for row in v.footer] if cols else [], "row_noun": v.row_noun,
            "n_rows": len(t.rows), "csv_only": not cols, "block_starts": starts,
            "n_shown": len(v.rows), "shown": bool(cols) and len(v.rows) <= MAX_HTML_ROWS and v.latex,
            "latex": t.shown.latex}


def section_charts(s: Section, report: PaperReport, box: Charts) -> list[str]:
    models = report.panel.models
    by_key = {t.key: t for t in s.tables}
    specs: list[dict[str, Any] | None] = []
    if "table04_conditions" in by_key:
        specs.append(figures.condition_accuracy(by_key["table04_conditions"].rows))
    if "figure02_generations" in by_key:
        specs.append(figures.generation_gap(by_key["figure02_generations"].rows))
    if "figure04_histogram" in by_key:
        rows = by_key["figure04_histogram"].rows
        specs += [figures.difficulty_shares(rows, "cell", len(models), "(a) By question type × depth",
                                            ["st_d1", "st_d2", "mt_d1", "mt_d2"]),
                  figures.difficulty_shares(rows, "consensus_tier", len(models), "(b) By consensus tier",
                                            ["gold", "silver", "bronze"]),
                  figures.difficulty_histogram(rows, len(models))]
    if "figure05_recall_accuracy" in by_key:
        specs.append(figures.recall_accuracy(by_key["figure05_recall_accuracy"].rows))
    if "figure06_transitions" in by_key:
        specs.append(figures.transition_matrices(by_key["figure06_transitions"].rows, models, PAPER_TOOLS))
    if "budget_truncated" in by_key:
        specs.append(figures.budget_curves(by_key["budget_truncated"].rows, models))
    if "reliability_items" in by_key:
        specs.append(figures.discrimination_histogram([r["discrimination"] for r in by_key["reliability_items"].rows]))
    return [cid for cid in (box.add(spec) for spec in specs) if cid]


#: Runs an item page shows side by side (the site's maximum): the panel's most accurate models.
ITEM_PAGE_RUNS = 6
#: Items linked per list (Figure 4's hardest and easiest items).
MAX_LINKED_ITEMS = 10


def extreme_items(report: PaperReport) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Figure 4's extremes: the MAX_LINKED_ITEMS items the fewest panel models answered correctly (by share,
    ties by sample_id), and the MAX_LINKED_ITEMS the most answered (only items not already in the first)."""
    t = next(t for s in report.sections for t in s.tables if t.key == "figure04_difficulty")
    rows = sorted(t.rows, key=lambda r: (r["n_correct"] / r["n_models"], r["sample_id"]))
    hardest = rows[:MAX_LINKED_ITEMS]
    taken = {r["sample_id"] for r in hardest}
    easiest = [r for r in sorted(rows, key=lambda r: (-r["n_correct"] / r["n_models"], r["sample_id"]))
               if r["sample_id"] not in taken][:MAX_LINKED_ITEMS]
    return hardest, easiest


def item_runs(wh: Warehouse, report: PaperReport) -> list[RunInfo]:
    """The runs item pages show: the panel's ITEM_PAGE_RUNS most accurate models (ties by name)."""
    ranked = sorted(report.panel.members, key=lambda m: (-float(m["accuracy"]), m["model"]))[:ITEM_PAGE_RUNS]
    by_id = {r.run_id: r for r in all_runs(wh)}
    runs = [by_id[m["run_id"]] for m in ranked]
    label_runs(runs)
    return runs


def render_page(wh: Warehouse, report: PaperReport, site: Site) -> str:
    """Write the item pages the page links to, then render the page itself."""
    box = Charts("paper")
    prov = Provenance.build(wh.path, all_runs(wh))
    sections = []
    for s in report.sections:
        sections.append({"key": s.key, "ref": s.ref, "title": s.title, "note": s.note,
                         "definition": "metrics.md#" + s.definition, "tables": [html_table(t) for t in s.tables],
                         "charts": section_charts(s, report, box)})
    hardest, easiest = extreme_items(report)
    runs = item_runs(wh, report)
    if hardest or easiest:
        site.write_item_pages(wh, [r["sample_id"] for r in (*hardest, *easiest)], runs, prov, pages=item_pages.PAGES)
    context = {
        "title": f"AgentHop paper analysis · {report.panel.condition} panel",
        "condition": report.panel.condition,
        "n_models": len(report.panel.members),
        "sections": sections,
        "items": {"hardest": hardest, "easiest": easiest, "runs": [r.label for r in runs]},
        "n_simulated": sum(1 for m in report.panel.members if m.get("is_simulated")),
    }
    return site.render_page("paper.html.j2", context, box, prov)
