"""Item pages: the item itself and 1-6 runs' trajectories on it, turn-aligned.

An item page shows the question, the four options (the correct one and each run's choice marked),
the seed paper, the gold and bridge papers with titles, the direct-labelled sections, and per call:
tool, arguments (paper ids shown as titles, the id on hover), status, cost, budget and tokens after,
the resolved section header, and the text the agent received (recorded transcript; a run recorded
without messages says so once). Item text comes from the raw benchmark tables, everything else from
the marts. `load_items` fetches many items at once (a report's folder of item pages); `context`
builds one page's template context from that.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthop.harness.errors import AgentHopError

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
    """Template context of one item page (`item.html.j2` / `_item_section.html.j2`)."""
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
    out["ctx"] = out  # the item_body macro takes the whole context
    return out


def build(wh: Warehouse, sample_id: str, runs: Sequence[RunInfo]) -> tuple[dict[str, Any], Charts]:
    """The `item` command's page: one item, the given runs."""
    wh.require(MARTS)
    ids = [r.run_id for r in runs]
    present = queries.item_exists(wh, sample_id, ids)
    if not present:
        examples = [r["sample_id"] for r in wh.rows(
            "SELECT DISTINCT sample_id FROM fct_trajectory WHERE run_id = ? ORDER BY sample_id LIMIT 5", [ids[0]])]
        raise AgentHopError(
            f"item {sample_id!r} has no trajectory in run(s) {', '.join(ids)}; items look like: {', '.join(examples)}"
        )
    box = Charts()
    return context(load_items(wh, [sample_id], runs), sample_id, runs, box), box


class ItemPages:
    """This module's item pages, for :meth:`reports.site.Site.write_item_pages`."""

    template = "item.html.j2"
    section_template = "_item_section.html.j2"
    load = staticmethod(load_items)
    context = staticmethod(context)


PAGES = ItemPages()
