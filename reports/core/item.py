"""Shared item pages: one item of any benchmark and 1-6 runs' trajectories on it, with the transcript.

A page shows the item as its benchmark presents it (the registry's ``item`` section: an imported
Inspect task's input and target, say), each run's answer, score, termination, turns, tokens and time,
every scorer's value, the calls of the final attempt aligned by turn (tool, arguments, status and the
source's error type, result size) and each run's transcript (the messages table) in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthop.harness.errors import AgentHopError

from ..render import Charts
from ..trajectories import align
from ..warehouse import Warehouse
from . import marts, metrics, queries, registry
from .registry import Outcomes, Section
from .runs import RunInfo


@dataclass
class ItemData:
    """Everything the shared item pages of a set of items need, fetched in a few queries."""

    traj: dict[str, list[dict[str, Any]]]
    calls: dict[str, list[dict[str, Any]]]
    messages: dict[tuple[str, str], list[dict[str, Any]]]
    scores: dict[str, list[dict[str, Any]]]
    groups: dict[str, str] = field(default_factory=dict)
    headers: dict[str, Section] = field(default_factory=dict)
    outcomes: Outcomes | None = None  # how the pages name an item's outcome (the metric shown)
    metric: metrics.Metric | None = None


def _by_sample(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r["sample_id"], []).append(r)
    return out


def load_items(wh: Warehouse, sample_ids: Sequence[str], runs: Sequence[RunInfo]) -> ItemData:
    marts.require_shared(wh, (marts.TRAJECTORIES, marts.CALL_DETAILS, marts.MESSAGES, marts.SCORES))
    ids, sids = [r.run_id for r in runs], list(sample_ids)
    messages: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for msg in queries.item_messages(wh, ids, sids):
        messages.setdefault((msg["sample_id"], msg["run_id"]), []).append(msg)
    benchmark = str(runs[0].benchmark) if runs else ""
    extra = registry.sections_for(benchmark)
    return ItemData(
        traj=_by_sample(queries.item_trajectories(wh, ids, sids)),
        calls=_by_sample(queries.item_calls(wh, ids, sids)),
        messages=messages,
        scores=_by_sample(queries.item_scores(wh, ids, sids)),
        groups=queries.item_group_of(wh, benchmark, sids),
        headers=dict(extra.item(wh, sids, runs)) if extra and extra.item else {},
        outcomes=metrics.outcomes_for(benchmark, metrics.current(wh)),
        metric=metrics.current(wh),
    )


def _score_rows(rows: list[dict[str, Any]], runs: Sequence[RunInfo]) -> list[dict[str, Any]]:
    by = {(r["run_id"], r["scorer"], r["score_key"]): r for r in rows}
    keys = list(dict.fromkeys((r["scorer"], r["score_key"]) for r in rows))
    return [{"scorer": s, "key": k, "cells": [by.get((run.run_id, s, k)) for run in runs]} for s, k in keys]


def context(data: ItemData, sample_id: str, runs: Sequence[RunInfo], box: Charts) -> dict[str, Any]:
    """Template context of one shared item page (core_item.html.j2 / _core_item_section.html.j2)."""
    aligned = align(sample_id, runs, data.traj.get(sample_id, []), data.calls.get(sample_id, []))
    out: dict[str, Any] = {
        "title": f"Item {sample_id}",
        "sample_id": sample_id,
        "group": data.groups.get(sample_id),
        "header": data.headers.get(sample_id),
        "runs": list(runs),
        "oc": data.outcomes or registry.outcomes_of(runs[0].benchmark if runs else None),
        "metric": data.metric,
        "missing": [s.run for s in aligned.sides if s.summary is None],
        "aligned": aligned,
        "scores": _score_rows(data.scores.get(sample_id, []), runs),
        "messages": {r.run_id: data.messages.get((sample_id, r.run_id), []) for r in runs},
    }
    out["ctx"] = out
    return out


class SharedItemPages:
    """The item pages of the report core, for :meth:`reports.site.Site.write_item_pages`."""

    template = "core_item.html.j2"
    section_template = "_core_item_section.html.j2"
    load = staticmethod(load_items)
    context = staticmethod(context)


PAGES = SharedItemPages()


def build(wh: Warehouse, sample_id: str, runs: Sequence[RunInfo], pages: Any = None) -> tuple[dict[str, Any], Charts]:
    """The `item` command's shared page: one item, the given runs; `pages` the item pages of the runs'
    benchmark (the registry's ``item_pages``, whose ``load`` and ``context`` add its own parts), default the
    shared ones."""
    pages = PAGES if pages is None else pages
    ids = [r.run_id for r in runs]
    marts.require_shared(wh, (marts.TRAJECTORIES,))
    if not queries.runs_with_item(wh, sample_id, ids):
        raise AgentHopError(f"item {sample_id!r} has no trajectory in run(s) {', '.join(ids)}; items look like: "
                            f"{', '.join(queries.some_items(wh, ids[0]))}")
    box = Charts()
    return pages.context(pages.load(wh, [sample_id], runs), sample_id, runs, box), box
