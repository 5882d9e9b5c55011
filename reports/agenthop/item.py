"""AgentHop's part of the shared item page (reports/core/item.py): the item itself and 1-6 runs'
trajectories on it, turn-aligned.

The page is the shared one (the shown metric, every scorer, the calls aligned by turn, each run's
transcript); AgentHop adds the question, the four options (the correct one and each run's choice marked),
the seed paper, the gold and bridge papers with titles, the direct-labelled sections, and per call:
tool, arguments (paper ids shown as titles, the id on hover), status, cost, budget and tokens after,
the resolved section header, and the text the agent received (recorded transcript; a run recorded
without messages says so once). Item text comes from the raw benchmark tables, everything else from
the marts. `load_items` fetches many items at once (a report's folder of item pages); `context`
builds AgentHop's part of one page from that, `shared_context` the whole page.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import charts
from ..render import Charts
from ..trajectories import align, budget_curve
from ..warehouse import Warehouse
from . import queries
from .queries import RunInfo

MARTS = ("model_summary", "fct_trajectory", "fct_tool_call")
LETTERS = "ABCDEFGH"


class Row(dict):  # type: ignore[type-arg]
    """A result row whose columns are also attributes: Jinja's attribute lookup finds them first try
    (a plain dict costs a failed getattr per access, which adds up over hundreds of item pages)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass
class ItemData:
    """Everything the item pages of a set of items need, fetched in a few queries."""

    items: dict[str, dict[str, Any]]
    papers: dict[str, list[dict[str, Any]]]
    labels: dict[str, list[dict[str, Any]]]
    titles: dict[str, dict[str, str]]  # sample_id -> paper_id -> title
    traj: list[dict[str, Any]]
    calls: dict[str, list[dict[str, Any]]]
    with_messages: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.traj_by_sample: dict[str, list[dict[str, Any]]] = {}
        for t in self.traj:
            self.traj_by_sample.setdefault(t["sample_id"], []).append(t)


def load_items(wh: Warehouse, sample_ids: Sequence[str], runs: Sequence[RunInfo]) -> ItemData:
    wh.require(MARTS)
    ids = [r.run_id for r in runs]
    sids = list(sample_ids)
    papers: dict[str, list[dict[str, Any]]] = {}
    for p in queries.item_papers(wh, sids):
        papers.setdefault(p["sample_id"], []).append(p)
    labels: dict[str, list[dict[str, Any]]] = {}
    for lab in queries.direct_labels(wh, sids):
        labels.setdefault(lab["sample_id"], []).append(lab)
    calls: dict[str, list[dict[str, Any]]] = {}
    for c in queries.tool_calls(wh, ids, sids):
        calls.setdefault(c["sample_id"], []).append(Row(c))
    titles: dict[str, dict[str, str]] = {}
    for (sid, pid), title in queries.called_paper_titles(wh, ids, sids).items():
        titles.setdefault(sid, {})[pid] = title
    for sid, plist in papers.items():
        for p in plist:
            if p.get("title"):
                titles.setdefault(sid, {}).setdefault(p["paper_id"], p["title"])
    return ItemData(
        items=queries.item_rows(wh, sids),
        papers=papers,
        labels=labels,
        titles=titles,
        traj=[Row(t) for t in queries.trajectories(wh, ids, sids)],
        calls=calls,
        with_messages=queries.runs_with_messages(wh, ids),
    )


def _args(call: dict[str, Any], titles: dict[str, str]) -> list[dict[str, Any]]:
    """The call's arguments as (name, value, title-or-None) for display; non-JSON args as one value."""
    raw = call.get("args_json")
    if raw is None:
        return []
    try:
        parsed = json.loads(raw)
    except (TypeError, ValueError):
        return [Row(name=None, value=str(raw), title=None)]
    if not isinstance(parsed, dict):
        return [Row(name=None, value=json.dumps(parsed, ensure_ascii=False), title=None)]
    out = []
    for k, v in parsed.items():
        value = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        out.append(Row(name=str(k), value=value, title=titles.get(value) if "paper" in str(k) else None))
    return out


def _options(item: dict[str, Any] | None, sides: Sequence[Any]) -> list[dict[str, Any]]:
    if not item:
        return []
    options = list(item.get("options") or [])
    correct = item.get("correct_index")
    out = []
    for i, text in enumerate(options):
        chosen_by = [s.run for s in sides if s.summary and s.summary.get("predicted_index") == i]
        out.append({"letter": LETTERS[i] if i < len(LETTERS) else str(i), "index": i, "text": text,
                    "correct": i == correct, "chosen_by": chosen_by})
    return out


def context(data: ItemData, sample_id: str, runs: Sequence[RunInfo], box: Charts) -> dict[str, Any]:
    """AgentHop's part of one item page: the item, its options and papers, the calls aligned by turn and the
    budget chart (shared_context puts it into the shared page)."""
    calls = data.calls.get(sample_id, [])
    item = data.items.get(sample_id)
    titles = data.titles.get(sample_id, {})
    for c in calls:
        c["args"] = _args(c, titles)
        c["paper_title"] = titles.get(c.get("paper_id") or "")
    aligned = align(sample_id, runs, data.traj_by_sample.get(sample_id, []), calls,
                    info_keys=("cell", "reasoning_type", "question_type"))
    for side in aligned.sides:
        side.has_messages = side.run.run_id in data.with_messages
    papers = data.papers.get(sample_id, [])
    gold_arxiv = {p["arxiv_id"]: p for p in papers if p["role"] == "gold" and p.get("arxiv_id")}
    labels = [{**lab, "paper": gold_arxiv.get(lab.get("arxiv_id"))} for lab in data.labels.get(sample_id, [])]
    curve = budget_curve(calls, runs)
    chart_id = box.add(charts.step_lines(curve, x="seq", y="spent", runs=[r.chart_label for r in runs],
                                         x_title="call (from 1)", y_title="budget points spent",
                                         title="Budget spent over the trajectory") if curve else None)
    out: dict[str, Any] = {
        "title": f"Item {sample_id}",
        "sample_id": sample_id,
        "item": item,
        "options": _options(item, aligned.sides),
        "seed": next((p for p in papers if p["role"] == "seed"), None),
        "gold": [p for p in papers if p["role"] == "gold"],
        "bridges": [p for p in papers if p["role"] == "bridge"],
        "labels": labels,
        "runs": list(runs),
        "missing": [s.run for s in aligned.sides if s.summary is None],
        "aligned": aligned,
        "budget_chart": chart_id,
    }
    out["ctx"] = out  # the header section reads it as its context
    return out


@dataclass
class Both:
    """The shared item pages' data and AgentHop's, of the same items and runs."""

    shared: Any
    own: ItemData


def load_both(wh: Warehouse, sample_ids: Sequence[str], runs: Sequence[RunInfo]) -> Both:
    from ..core import item as shared_item

    return Both(shared=shared_item.load_items(wh, sample_ids, runs), own=load_items(wh, sample_ids, runs))


#: AgentHop's parts of the shared item page (reports/templates/): above the calls, each run's head, each
#: cell of calls, and the note (with the budget chart) beside them
HEADER_TEMPLATE = "agenthop_item_header.html.j2"
SIDE_TEMPLATE = "agenthop_item_side.html.j2"
CALLS_TEMPLATE = "agenthop_item_calls.html.j2"
CALLS_NOTE_TEMPLATE = "agenthop_item_calls_note.html.j2"


def shared_context(data: Both, sample_id: str, runs: Sequence[RunInfo], box: Charts) -> dict[str, Any]:
    """The shared item page's context (reports/core/item.py: scores, the shown metric, transcripts) with
    AgentHop's parts: the item above the calls, its calls (paper titles, budget, tokens, received text)
    aligned by turn, each run's head with the chosen option, budget and recall, and the budget chart."""
    from ..core import item as shared_item
    from ..core.registry import Section

    out = shared_item.context(data.shared, sample_id, runs, box)
    own = context(data.own, sample_id, runs, box)
    shared_sides = {s.run.run_id: s for s in out["aligned"].sides}
    for side in own["aligned"].sides:
        side.shared = shared_sides.get(side.run.run_id, side)
    out.update(aligned=own["aligned"], missing=own["missing"], budget_chart=own["budget_chart"],
               header=Section(title="", template=HEADER_TEMPLATE, context=own), side_template=SIDE_TEMPLATE,
               calls_template=CALLS_TEMPLATE, calls_note=CALLS_NOTE_TEMPLATE)
    out["ctx"] = out
    return out


class ItemPages:
    """AgentHop's item pages: the shared item page (core_item.html.j2) with AgentHop's parts, for
    :meth:`reports.site.Site.write_item_pages` and the `item` command."""

    template = "core_item.html.j2"
    section_template = "_core_item_section.html.j2"
    load = staticmethod(load_both)
    context = staticmethod(shared_context)


PAGES = ItemPages()
