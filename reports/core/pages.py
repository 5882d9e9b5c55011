"""The compare, reruns, item and leaderboard commands: pick the runs (any benchmark), then render the benchmark's own
page when its report sections bring one (reports/core/registry.py), else the shared page with the
benchmark's extra sections. Each returns the page's HTML and its template context."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthop.harness.errors import AgentHopError

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


def _metric(wh: Warehouse, benchmark: str, name: str | None, own_page: bool) -> metrics.Metric | None:
    """The metric a page of `benchmark` shows (`name`, else its primary metric). A benchmark's own page
    shows its primary metric; another one named is a user error."""
    metric = metrics.resolve(wh, benchmark, name)
    if own_page and metric is not None and not metric.is_primary:
        primary = metrics.resolve(wh, benchmark, None)
        raise AgentHopError(f"--metric: the pages of benchmark {benchmark} show its primary metric "
                            f"{primary.name if primary else '(none)'} only, not {metric.name}")
    return metric


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
    own = registry.own_page(bench, "compare")
    chosen = _metric(wh, bench, metric, own is not None)
    if own is not None:  # a page of its own compares one run a side (the group's first or --epoch's run)
        extra = {"cluster": cluster} if cluster is not None else {}  # --cluster, for a page that takes it
        if any(g.n_runs > 1 for g in groups):  # and gets the groups to pool when a model has more
            label_group_runs(groups)
            return own(wh, site, [g.runs[0] for g in groups], groups=groups, **extra)
        return own(wh, site, [g.runs[0] for g in groups], **extra)
    label_group_runs(groups)
    runs = [r for g in groups for r in g.runs]
    prov = Provenance.build(wh.path, runs)
    with metrics.scoped(wh, chosen):
        context, box = shared_compare.build(wh, groups, cluster)
        shown = runs if len(runs) <= MAX_ITEM_RUNS else [r for g in groups for r in g.runs[:MAX_ITEM_RUNS // 2]]
        site.write_item_pages(wh, context["item_ids"], shown, prov, pages=shared_item.PAGES)
    return site.render_page("core_compare.html.j2", context, box, prov), context


def reruns(wh: Warehouse, site: Site, model: str, benchmark: str | None, metric: str | None = None,
           cluster: str | None = None) -> tuple[str, dict[str, Any]]:
    runs = runs_of(wh, model, benchmark)
    bench = str(runs[0].benchmark)
    own = registry.own_page(bench, "reruns")
    chosen = _metric(wh, bench, metric, own is not None)
    if own is not None:
        return own(wh, site, model, runs, **({"cluster": cluster} if cluster is not None else {}))
    with metrics.scoped(wh, chosen):
        context, box, runs = shared_reruns.build(wh, model, benchmark, cluster)
        context.update(metric=chosen, oc=metrics.outcomes_for(bench, chosen))
        prov = Provenance.build(wh.path, runs)
        pages = registry.item_pages_of(context["benchmark"], shared_item.PAGES)
        for g in context["groups"]:  # one page per unstable item, with the group's replicates (up to six)
            site.write_item_pages(wh, [u["sample_id"] for u in g["unstable"]], g["runs"][:MAX_ITEM_RUNS], prov,
                                  pages=pages)
    return site.render_page("core_reruns.html.j2", context, box, prov), context


def item(wh: Warehouse, site: Site, sample_id: str, models: Sequence[str], run_ids: Sequence[str], condition: str | None,
         benchmark: str | None, metric: str | None = None) -> tuple[str, dict[str, Any]]:
    runs = select_runs(wh, models=models, run_ids=run_ids, condition=condition, benchmark=benchmark)
    if len(runs) > MAX_ITEM_RUNS:
        raise AgentHopError(f"item: shows at most {MAX_ITEM_RUNS} runs side by side, got {len(runs)}")
    bench = one_benchmark(runs, "item")
    own = registry.own_page(bench, "item")
    chosen = _metric(wh, bench, metric, own is not None)
    if own is not None:
        return own(wh, site, sample_id, runs)
    label_runs(runs)
    with metrics.scoped(wh, chosen):
        context, box = shared_item.build(wh, sample_id, runs)
    return site.render_page("core_item.html.j2", context, box, Provenance.build(wh.path, runs)), context


def leaderboard(wh: Warehouse, site: Site, benchmark: str | None, condition: str | None, metric: str | None = None,
                cluster: str | None = None) -> tuple[str, dict[str, Any]]:
    """A table per benchmark (or `benchmark`'s alone), each on `metric` (a name resolved in each benchmark;
    None: each benchmark's primary metric); a benchmark shown whose report sections bring a leaderboard page
    of their own (AgentHop: Table 2 and more) renders it with the tables above its own."""
    context = shared_leaderboard.build(wh, benchmark, condition, metric, cluster)
    for bd in context["boards"]:
        own = registry.own_page(bd["benchmark"], "leaderboard")
        if own is not None:
            return own(wh, site, condition, context)
    runs = [r["group"].runs for bd in context["boards"] for r in bd["rows"]]
    prov = Provenance.build(wh.path, [r for group in runs for r in group])
    title = "Leaderboard" + (f" · {benchmark}" if benchmark else "")
    box = Charts()
    register_charts(context["boards"], box)
    return site.render_page("core_leaderboard.html.j2", {"title": title, **context}, box, prov), context


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
