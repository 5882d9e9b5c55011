"""The compare, reruns, item and leaderboard commands: pick the runs (any benchmark), then render the shared page
with the benchmark's own sections (reports/core/registry.py) on the metric asked for (``--metric``, else the
benchmark's primary metric). Each returns the page's HTML and its template context."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthop.harness.errors import AgentHopError

from .. import deferred_rows
from ..render import Charts, Provenance
from ..site import MAX_ITEM_RUNS, Site
from ..warehouse import Warehouse
from . import compare as shared_compare
from . import item as shared_item
from . import leaderboard as shared_leaderboard
from . import metrics, registry
from . import reruns as shared_reruns
from .cost_quality import register_charts
from .pooling import label_group_runs, make_group
from .runs import label_runs, one_benchmark, pick_groups, runs_of, select_runs, shared_runs


def compare(wh: Warehouse, site: Site, models: Sequence[str], run_ids: Sequence[str], condition: str | None,
            benchmark: str | None, epoch: int | None = None, metric: str | None = None,
            cluster: str | None = None) -> tuple[str, dict[str, Any]]:
    """Two runs (`run_ids`), or two models' run groups: every run of each model under `condition` (None:
    the benchmark's default), pooled, or only its epoch/replicate number `epoch`; on `metric` (a name,
    None: the benchmark's primary metric)."""
    if run_ids:
        groups = [make_group([r]) for r in select_runs(wh, run_ids=run_ids, benchmark=benchmark)]
    else:
        groups = [make_group(g, epoch) for g in pick_groups(shared_runs(wh), models, condition, benchmark)]
    bench = one_benchmark([r for g in groups for r in g.runs], "compare")
    chosen = metrics.resolve(wh, bench, metric)
    label_group_runs(groups)
    runs = [r for g in groups for r in g.runs]
    prov = Provenance.build(wh.path, runs)
    with metrics.scoped(wh, chosen):
        context, box = shared_compare.build(wh, groups, cluster)
        shown = runs if len(runs) <= MAX_ITEM_RUNS else [r for g in groups for r in g.runs[:MAX_ITEM_RUNS // 2]]
        site.write_item_pages(wh, context["item_ids"], shown, prov, pages=registry.item_pages_of(bench, shared_item.PAGES))
    return site.render_page("core_compare.html.j2", context, box, prov), context


def reruns(wh: Warehouse, site: Site, model: str, benchmark: str | None, metric: str | None = None,
           cluster: str | None = None) -> tuple[str, dict[str, Any]]:
    runs = runs_of(wh, model, benchmark)
    bench = str(runs[0].benchmark)
    chosen = metrics.resolve(wh, bench, metric)
    with metrics.scoped(wh, chosen):
        context, box, runs = shared_reruns.build(wh, model, benchmark, cluster)
        context.update(metric=chosen, oc=metrics.outcomes_for(bench, chosen))
        prov = Provenance.build(wh.path, runs)
        pages = registry.item_pages_of(context["benchmark"], shared_item.PAGES)
        for g in context["groups"]:  # one page per unstable item, with the group's replicates (up to six)
            site.write_item_pages(wh, [u["sample_id"] for u in g["unstable"]], g["runs"][:MAX_ITEM_RUNS], prov,
                                  pages=pages)
        defer = site.on_demand and not site.single_file  # in the site: long lists load from a file beside the page
        for k, g in enumerate(context["groups"], 1):
            g["rows_defer"] = None
            if defer and len(g["unstable"]) > deferred_rows.INLINE_ROWS:
                tid = f"unstable-{k}"
                g["rows_defer"] = {"id": tid, "inline": deferred_rows.INLINE_ROWS,
                                   "src": site.relative(deferred_rows.rows_file(site.folder, tid))}
        html = site.render_page("core_reruns.html.j2", context, box, prov)
    if defer:
        html = deferred_rows.split(html, site.folder, site.write_file)
    return html, context


def item(wh: Warehouse, site: Site, sample_id: str, models: Sequence[str], run_ids: Sequence[str], condition: str | None,
         benchmark: str | None, metric: str | None = None) -> tuple[str, dict[str, Any]]:
    runs = select_runs(wh, models=models, run_ids=run_ids, condition=condition, benchmark=benchmark)
    if len(runs) > MAX_ITEM_RUNS:
        raise AgentHopError(f"item: shows at most {MAX_ITEM_RUNS} runs side by side, got {len(runs)}")
    bench = one_benchmark(runs, "item")
    chosen = metrics.resolve(wh, bench, metric)
    label_runs(runs)
    pages = registry.item_pages_of(bench, shared_item.PAGES)
    with metrics.scoped(wh, chosen):
        context, box = shared_item.build(wh, sample_id, runs, pages)
    return site.render_page(pages.template, context, box, Provenance.build(wh.path, runs)), context


def leaderboard(wh: Warehouse, site: Site, benchmark: str | None, condition: str | None, metric: str | None = None,
                cluster: str | None = None) -> tuple[str, dict[str, Any]]:
    """A table per benchmark (or `benchmark`'s alone), each on `metric` (a name resolved in each benchmark;
    None: each benchmark's primary metric), with the sections the benchmarks shown add beneath them (the
    registry's ``leaderboard``: AgentHop's Table 2 and more)."""
    shared = shared_leaderboard.build(wh, benchmark, condition, metric, cluster)  # kept on `wh`: not changed here
    context = {**shared, "boards": [dict(bd) for bd in shared["boards"]]}  # this page's charts and sections
    box = Charts()
    register_charts(context["boards"], box)
    sections = []
    for bd in context["boards"]:  # each benchmark's own sections, beneath its table
        extra = registry.sections_for(bd["benchmark"])
        bd["sections"] = list(extra.leaderboard(wh, condition, [bd], box)) if extra and extra.leaderboard else []
        sections.extend(bd["sections"])
    runs = [r for bd in context["boards"] for row in bd["rows"] for r in row["group"].runs]
    runs += [r for s in sections for r in s.context.get("runs", ())]
    prov = Provenance.build(wh.path, list({r.run_id: r for r in runs}.values()))
    for s in sections:  # the item pages a section links to (its "item_links": sample ids and the runs shown)
        for sids, shown in s.context.get("item_links", ()):
            site.write_item_pages(wh, sids, shown, prov, pages=registry.item_pages_of(str(shown[0].benchmark) if shown
                                                                                       else None, shared_item.PAGES))
    title = "Leaderboard" + (f" · {benchmark}" if benchmark else "")
    return site.render_page("core_leaderboard.html.j2", {"title": title, **context, "benchmark_sections": sections},
                            box, prov), context


def behaviours(wh: Warehouse, site: Site, method: Any) -> tuple[str, dict[str, Any]]:
    """Every scanner's prevalence per run, agreement with the labelers and association with the primary
    metric, with item pages for the items it flagged (reports/core/behaviours.py)."""
    from . import behaviours as shared_behaviours

    context = shared_behaviours.build(wh, method)
    all_runs = [r for rs in context["link_runs"].values() for r in rs]
    prov = Provenance.build(wh.path, list({r.run_id: r for r in all_runs}.values()) or shared_runs(wh))
    by_runs: dict[tuple[str, ...], list[str]] = {}
    for sid, rs in context["link_runs"].items():
        by_runs.setdefault(tuple(r.run_id for r in rs), []).append(sid)
    linked: set[str] = set()
    for key, sids in by_runs.items():
        runs = context["link_runs"][sids[0]]
        site.write_item_pages(wh, sids, runs, prov, pages=shared_item.PAGES)
        linked.update(sids)
    context["linked"] = linked
    return site.render_page("core_behaviours.html.j2", context, Charts(), prov), context
