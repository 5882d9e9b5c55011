"""AgentHop's report sections, registered in the report registry (reports/core/registry.py): its own
pages for compare, item and leaderboard, its sections of the shared reruns page and its item pages.

AgentHop's pages are built from its marts (model_summary, fct_trajectory, fct_tool_call, ...): the
shared analyses (terminations, transitions and trigrams, tokens, paired exact tests, item pages) as every
benchmark gets them, computed for AgentHop's runs by the same definitions, plus its own sections (the
four-axis profile with recall and conversion, the accuracy split, stopping behaviour, wrong-paper reads,
evidence contact, bigram effects, cells and reasoning types; on item pages the question, options, papers
and labelled sections). The reruns page is the shared one (reports/core/reruns.py) with Table 17 and the
unstable items by cell and reasoning type added (reruns.py). The modules are here: compare, item and
leaderboard (the pages), reruns (the sections), sections (the blocks the pages share), conditions (the
metrics a condition leaves undefined), marts (the marts read) and queries/ (the SQL). The `paper` report
(reports/paper/) builds on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.registry import ReportSections
from ..core.runs import RunInfo
from ..render import add_template_globals
from ..warehouse import Warehouse
from . import item, reruns
from .conditions import applies
from .marts import MART_COLUMNS

#: The benchmark whose runs these pages show.
BENCHMARK = "agenthop"

add_template_globals(applies=applies)  # the item macros print a closed-book run's recall as n/a


def _own_runs(wh: Warehouse, runs: Sequence[RunInfo]) -> list[RunInfo]:
    """The runs the shared picker picked, with model_summary's row each (AgentHop's columns), labelled."""
    from .queries import label_runs, with_summary

    mine = with_summary(wh, runs)
    label_runs(mine)
    return mine


def compare_page(wh: Warehouse, site: Any, runs: Sequence[RunInfo], groups: Sequence[Any] = (),
                 cluster: str | None = None) -> tuple[str, dict[str, Any]]:
    """Two runs (each group's first); with `groups` (models with several replicates) the pooled
    comparison of every replicate is a section of its own (reports/core/pooling.py)."""
    from . import compare
    from ..core import budget_curves, clustered_tables, pooling
    from ..core.compare import MAX_DIFFERING
    from ..render import Provenance
    from ..site import MAX_ITEM_RUNS

    mine = _own_runs(wh, runs)
    prov = Provenance.build(wh.path, mine)
    context, box = compare.build(wh, mine)
    if groups:
        pooled = pooling.compare_groups(wh, *groups)
        rows = pooled.differing[:MAX_DIFFERING]
        every = _own_runs(wh, [r for g in groups for r in g.runs])
        shown = every if len(every) <= MAX_ITEM_RUNS else mine
        site.write_item_pages(wh, [d.sample_id for d in rows], shown, prov, pages=item.PAGES)  # each replicate's trajectory
        context = {**context, "pooled": pooled, "pooled_rows": rows, "pooled_headline": pooling.summary(pooled)}
    sides = list(groups) or [pooling.make_group([r]) for r in mine]
    context = {**context, "clustered": clustered_tables.compare_block(wh, "agenthop", sides[0], sides[1], cluster),
               "budget": budget_curves.section(wh, mine, box)}
    site.write_item_pages(wh, context["item_ids"], mine, prov, pages=item.PAGES)
    return site.render_page("compare.html.j2", context, box, prov), context


def item_page(wh: Warehouse, site: Any, sample_id: str, runs: Sequence[RunInfo]) -> tuple[str, dict[str, Any]]:
    from ..render import Provenance

    mine = _own_runs(wh, runs)
    context, box = item.build(wh, sample_id, mine)
    return site.render_page("item.html.j2", context, box, Provenance.build(wh.path, mine)), context


def leaderboard_page(wh: Warehouse, site: Any, condition: str | None, shared: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """AgentHop's leaderboard (Table 2 by tier, accuracy vs recall, condition deltas, reliability) of the
    panel of `condition` (None: its default, full), beneath the shared tables of every benchmark shown."""
    from . import leaderboard
    from ..core.cost_quality import register_charts
    from ..core.runs import default_condition
    from ..render import Provenance

    context, box, runs = leaderboard.build(wh, condition or default_condition("agenthop") or "full")
    prov = Provenance.build(wh.path, runs)
    rel = context["reliability"]
    site.write_item_pages(wh, [w["sample_id"] for w in rel["worst"]], rel["item_runs"], prov, pages=item.PAGES)
    context = {**context, **shared, "title": context["title"]}
    register_charts(shared.get("boards", []), box)
    return site.render_page("leaderboard.html.j2", context, box, prov), context


def item_clusters(wh: Warehouse, benchmark: str, name: str) -> dict[str, str]:
    """``--cluster NAME``: an item field of the release (source_paper: the seed paper it starts from; any other
    column of the items table, e.g. depth, reasoning_type, venue)."""
    from ..core.clusters import column_labels

    return column_labels(wh, "raw.items", "sample_id", {"source_paper": "seed_paper_id"}, benchmark, name)


SECTIONS = ReportSections(
    name="agenthop",
    reruns=reruns.sections,
    item_pages=item.PAGES,
    pages={"compare": compare_page, "item": item_page, "leaderboard": leaderboard_page},
    mart_columns=MART_COLUMNS,
    cluster_default="source_paper",
    cluster_labels=item_clusters,
)
