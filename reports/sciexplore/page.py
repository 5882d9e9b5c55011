"""The SciExplore report page (sections, Figure 3 chart, task list) and its item pages."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import altair as alt

from ..paper.figures import _data, _spec
from ..paper.page import html_table
from ..render import Charts, Provenance, package_version
from ..site import Site
from ..warehouse import Warehouse
from . import data
from .build import SciReport
from .sections import MISSING_RULE

#: systems an item page shows (each system's first replicate, best mean overall first)
ITEM_PAGE_SYSTEMS = 6
#: characters of one text a task page shows (an answer, a cell, a title, a rationale, a query); a longer
#: one is cut with a note, so a huge answer keeps the page small
SHOWN_CHARS = 4_000
#: rows of a T4 answer, references per T3 slot and trace steps a task page shows (verdicts: five times
#: as many, a few judges on each shown unit)
SHOWN_ITEMS = 100
_JSON_COLUMNS = ("aliases", "databases", "columns")


def _lines(lead: str, names: list[str], per_line: int = 5) -> list[str]:
    """``lead`` plus the names, a few per line (a chart subtitle does not wrap by itself)."""
    if not names:
        return []
    chunks = [", ".join(names[i:i + per_line]) for i in range(0, len(names), per_line)]
    return [lead + chunks[0], *chunks[1:]]


def header_rows(headers: list[str]) -> list[dict[str, Any]]:
    """The first header row of a table whose adjacent headers share a first word ("T4 Item", "T4 Row"): one
    spanning cell per such run (``sub`` holds the rest of each header, printed in a second row), else the
    header itself over both rows. No shared words: one cell per header, ``sub`` empty, and a single row.
    The first column never joins a group (it is the table's sticky row label)."""
    cells: list[dict[str, Any]] = []
    for i, h in enumerate(headers):
        word, _, rest = h.partition(" ")
        prev = cells[-1] if cells else None
        if rest and prev is not None and prev["group"] == word:
            prev["sub"].append((i, rest))
            continue
        nxt = headers[i + 1].partition(" ")[0] if i + 1 < len(headers) else None
        if i and rest and nxt == word and " " in headers[i + 1]:  # never the first column: it stays sticky
            cells.append({"group": word, "text": word, "sub": [(i, rest)]})
        else:
            cells.append({"group": None, "text": h, "index": i, "sub": []})
    return cells


def search_chart(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Figure 3: mean search calls per task, grouped bars per type, one colour per system."""
    searched = {r["model"] for r in rows if r["mean_search_calls"]}
    silent = list(dict.fromkeys(r["model"] for r in rows if r["model"] not in searched))
    rows = [r for r in rows if r["model"] in searched]
    if not rows:
        return None
    title = alt.TitleParams("Average search calls per task and type",
                            subtitle=_lines("No search calls, so no bar: ", silent))
    chart = alt.Chart(_data()).mark_bar().encode(
        x=alt.X("type:N", title="task type", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("model:N", sort=None),
        y=alt.Y("mean_search_calls:Q", title="search calls per task"),
        color=alt.Color("model:N", sort=None, title="system", legend=alt.Legend(orient="bottom", columns=3)),
        tooltip=["model:N", "paradigm:N", "type:N", alt.Tooltip("mean_search_calls:Q", format=".2f")],
    ).properties(width=560, height=240, title=title)
    return _spec(chart, rows)


def provenance(wh: Warehouse, report: SciReport) -> Provenance:
    sha = data.release_sha(wh)
    return Provenance(warehouse=str(Path(wh.path).resolve()),
                      run_ids=[r["run_id"] for s in report.systems for r in s.runs],
                      benchmark_hashes=[sha] if sha else [], package_version=package_version(),
                      generated_at=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"))


def task_list(wh: Warehouse, report: SciReport) -> list[dict[str, Any]]:
    """Every task with how the systems' first replicates scored on it (the item pages' index)."""
    firsts = [s.first_run for s in report.systems]
    rows = wh.rows(
        "SELECT t.task_id, t.type, t.domain, t.hops, t.task_order, "
        "count(*) FILTER (WHERE o.verdict = 'correct') AS n_correct, "
        "avg(CASE t.type WHEN 'T3' THEN o.t3_f WHEN 'T4' THEN o.t4_cells_correct::double / nullif(o.t4_cells_total, 0) "
        "END) AS mean_score, count(o.run_id) AS n_systems "
        "FROM raw.sciexplore_tasks t LEFT JOIN sciexplore_task_outcome o ON o.task_id = t.task_id "
        "AND o.judge = ? AND list_contains(?, o.run_id) GROUP BY ALL ORDER BY t.task_order", [report.judge, firsts])
    return rows


#: the key columns of a verdict table per unit kind: (header, tooltip) twice
_VERDICT_KEYS = {
    "citation": (("Slot", "the citation slot of the question"),
                 ("Reference no.", "the reference's position in the system's list for the slot, numbered from 0 "
                                   "as in the answer above")),
    "cell": (("Row", "the ground-truth primary key the predicted row matched"),
             ("Column", "the column of the cell")),
}


def verdict_table(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    """The Verdicts table of one system on a task page: key headers named for the unit kinds present (a T3
    task's Slot and Reference no., a T4 task's Row and Column) and per verdict its key cells. A T1/T2 task
    has only answer-level verdicts: no key columns at all (``whole_answer``, said above the table). An
    answer-level verdict beside keyed ones gets one cell over both key columns saying it is on the whole
    answer (the loader allows one unit kind per task type, so this is a guard, not a case the demo has)."""
    kinds = sorted({v["unit"] for v in verdicts} - {"answer"})
    if not kinds:
        return {"heads": [], "rows": [{"v": v, "key_cells": []} for v in verdicts], "whole_answer": True}
    if len(kinds) == 1 and kinds[0] in _VERDICT_KEYS:
        heads = [{"text": t, "title": tip} for t, tip in _VERDICT_KEYS[kinds[0]]]
    else:
        heads = [{"text": "Slot / row", "title": "the citation slot or the matched row's primary key"},
                 {"text": "Reference no. / column", "title": "the reference's position (from 0) or the cell's column"}]
    rows = []
    for v in verdicts:
        if v["unit"] == "answer":
            keys = [{"text": "the whole answer", "span": 2, "note": True}]
        else:
            first = v["slot"] if v["slot"] is not None else v["row_key"]
            second = v["ref_index"] if v["ref_index"] is not None else v["column"]
            keys = [{"text": "–" if x is None else x, "span": 1, "note": False} for x in (first, second)]
        rows.append({"v": v, "key_cells": keys})
    return {"heads": heads, "rows": rows, "whole_answer": False}


def numeric_columns(columns: list[str], rows: list[dict[str, Any]]) -> list[str]:
    """The columns of a T4 table (ground truth or an answer) whose every non-empty cell reads as a number
    (IC50 29.14): the page aligns them right, as the report's other tables align numbers."""
    def number(v: Any) -> bool:
        try:
            float(str(v).replace(",", ""))
        except ValueError:
            return False
        return True

    out = []
    for c in columns:
        vals = [r.get(c) for r in rows if r.get(c) not in (None, "")]
        if vals and all(number(v) for v in vals):
            out.append(c)
    return out


def _loads(v: str | None) -> Any:
    return None if v is None else json.loads(v)


def clip(value: Any, limit: int = SHOWN_CHARS, *, note: bool = True) -> Any:
    """A text as a task page shows it: at most ``limit`` characters, then ``… (N characters more)``
    (without ``note``: then ``…``, the page saying how many more below); anything else as it is."""
    if not isinstance(value, str) or len(value) <= limit:
        return value
    return value[:limit] + (f"… ({len(value) - limit:,} characters more)" if note else "…")


def _first(items: list[Any], what: str, limit: int = SHOWN_ITEMS) -> tuple[list[Any], str | None]:
    """The first ``limit`` of ``items`` and a note of how many more there are (None: none)."""
    more = len(items) - limit
    return items[:limit], (f"… ({more:,} {what} more, not shown)" if more > 0 else None)


def shown_answer(task_type: str, answer: Any) -> tuple[Any, list[str]]:
    """A parsed answer as a task page shows it (texts clipped, the first rows and references) and the
    notes of what was left out."""
    notes: list[str] = []
    if task_type == "T4" and isinstance(answer, dict):
        columns = [clip(c, 200) for c in (answer.get("columns") or [])][:SHOWN_ITEMS]
        raw_cols = list(answer.get("columns") or [])[:SHOWN_ITEMS]
        rows, note = _first(list(answer.get("rows") or []), "rows")
        notes += [note] if note else []
        rows = [{clip(c, 200): clip(r.get(c)) for c in raw_cols} for r in rows if isinstance(r, dict)]
        return {"columns": columns, "rows": rows}, notes
    if task_type == "T3" and isinstance(answer, dict):
        out: dict[str, list[Any]] = {}
        for slot, refs in answer.items():
            first, note = _first(list(refs or []), f"references for {slot}")
            notes += [note] if note else []
            out[clip(slot, 200)] = [{k: clip(v) for k, v in r.items()} if isinstance(r, dict) else clip(r)
                                    for r in first]
        return out, notes
    return answer, notes


def item_context(wh: Warehouse, task_id: str, systems: list[data.System]) -> dict[str, Any]:
    [task] = wh.rows("SELECT * FROM raw.sciexplore_tasks WHERE task_id = ?", [task_id])
    refs = wh.rows("SELECT slot, ref_index, title, year, authors, venue, doi FROM raw.sciexplore_t3_references "
                   "WHERE task_id = ? ORDER BY slot, ref_index", [task_id])
    cells = wh.rows("SELECT row_index, row_key, \"column\", value FROM raw.sciexplore_t4_cells WHERE task_id = ? "
                    "ORDER BY row_index, column_index", [task_id])
    gt_rows: dict[int, dict[str, str]] = {}
    for c in cells:
        gt_rows.setdefault(c["row_index"], {})[c["column"]] = c["value"]
    columns = list(task["columns"] or [])
    simulated = set(data.simulated_models(wh))
    shown = []
    for s in systems:
        run_id = s.first_run
        resp = wh.rows("SELECT * FROM raw.sciexplore_responses WHERE run_id = ? AND task_id = ?", [run_id, task_id])
        verdicts = wh.rows("SELECT unit, slot, ref_index, row_key, \"column\", verdict, judge, rationale "
                           "FROM raw.judgments WHERE run_id = ? AND task_id = ? "
                           "ORDER BY unit, slot, ref_index, row_key, \"column\", judge", [run_id, task_id])
        trace = wh.rows("SELECT seq, tool, query, target, result_chars, is_search FROM raw.sciexplore_trace "
                        "WHERE run_id = ? AND task_id = ? ORDER BY seq", [run_id, task_id])
        r = {**resp[0], "answer_text": clip(resp[0]["answer_text"], note=False),
             "parse_error": clip(resp[0]["parse_error"])} if resp else None
        answer, answer_notes = shown_answer(task["type"], _loads(r["answer_json"]) if r else None)
        text = resp[0]["answer_text"] if resp else None
        text_shown = not (task["type"] in ("T3", "T4") and answer)  # else the parsed answer is shown
        if text_shown and isinstance(text, str) and len(text) > SHOWN_CHARS:
            answer_notes.insert(0, f"… ({len(text) - SHOWN_CHARS:,} characters more, not shown)")
        answer_num = (numeric_columns(list(answer.get("columns") or []), list(answer.get("rows") or []))
                      if task["type"] == "T4" and isinstance(answer, dict) else [])
        rows_matched = len({v["row_key"] for v in verdicts if v["unit"] == "cell"})
        verdicts, verdicts_note = _first([{**v, "rationale": clip(v["rationale"]), "slot": clip(v["slot"], 200),
                                           "row_key": clip(v["row_key"], 200)} for v in verdicts], "verdicts",
                                         5 * SHOWN_ITEMS)
        trace, trace_note = _first([{**c, "query": clip(c["query"], 500), "target": clip(c["target"], 500),
                                     "tool": clip(c["tool"], 200)} for c in trace], "tool calls")
        shown.append({"label": s.label, "paradigm": s.paradigm, "run_id": run_id, "response": r,
                      "simulated": s.model in simulated, "answer_notes": answer_notes, "trace_note": trace_note,
                      "verdicts_note": verdicts_note,
                      "answer_obj": answer, "answer_num": answer_num, "verdicts": verdicts,
                      "verdict_table": verdict_table(verdicts), "trace": trace,
                      "rows_matched": rows_matched})
    judges = sorted({v["judge"] for s in shown for v in s["verdicts"]})
    gt = [gt_rows[i] for i in sorted(gt_rows)]
    return {"task": task, "refs": refs, "gt_rows": gt, "columns": columns, "gt_num": numeric_columns(columns, gt),
            "systems": shown, "judges": judges}


def render_page(wh: Warehouse, report: SciReport, site: Site) -> str:
    box = Charts("sciexplore")
    prov = provenance(wh, report)
    sections = []
    for s in report.sections:
        charts = []
        if s.key == "figure3":
            cid = box.add(search_chart(s.tables[0].rows))
            charts = [cid] if cid else []
        sections.append({"key": s.key, "ref": s.ref, "title": s.title, "note": s.note,
                         "definition": "sciexplore.md#" + s.definition, "tables": [{**(h := html_table(t)), "header_rows": header_rows(h["headers"])} for t in s.tables],
                         "charts": charts})
    tasks = task_list(wh, report)
    shown = sorted(report.systems, key=lambda s: (-sum(r["overall"] for r in s.runs) / len(s.runs), s.label))
    shown = shown[:ITEM_PAGE_SYSTEMS]
    for t in tasks:
        write_item(wh, site, t["task_id"], shown, prov)
    context = {"title": f"SciExplore analysis · judge {report.judge}", "judge": report.judge,
               "judges": report.judges, "sections": sections, "tasks": tasks,
               "n_systems": len(report.systems), "n_runs": sum(len(s.runs) for s in report.systems),
               "coverage": report.coverage, "partial": report.partial, "missing_rule": MISSING_RULE,
               "item_systems": [s.label for s in shown], "simulated": data.simulated_models(wh), "link_items": not site.single_file}
    return site.render_page("sciexplore.html.j2", context, box, prov)


def write_item(wh: Warehouse, site: Site, task_id: str, systems: list[data.System], prov: Provenance) -> None:
    page = site.item_path(task_id)
    ctx = item_context(wh, task_id, systems)
    if site.single_file:
        return  # single-file mode lists the tasks without their pages
    ctx.update(title=f"SciExplore task {task_id}", back_href=Path("../..") / site.out.name)
    html = site.render_page("sciexplore_item.html.j2", ctx, Charts(), prov, page=page)
    site.write_page(html, page=page)
