"""Statistics of a loaded release (``describe-benchmark``): mix, neighbourhoods, pool, labels."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from .labels import HEADER, NONE, PARENT, norm_text, resolve_label
from .model import Release

CELLS = ("st_d1", "st_d2", "mt_d1", "mt_d2")


def percentile(sorted_values: list[int] | list[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default) of an ascending list; q in [0, 100]."""
    if not sorted_values:
        return float("nan")
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _summary(values: list[int]) -> dict[str, float | int | None]:
    if not values:
        return {"mean": None, "median": None, "min": None, "max": None}
    return {"mean": round(statistics.fmean(values), 2), "median": statistics.median(values),
            "min": min(values), "max": max(values)}


def _counts(values: list[str | None], order: tuple[str, ...] = ()) -> dict[str, int]:
    c = Counter("(none)" if v is None else v for v in values)
    keys = [k for k in order if k in c] + sorted(k for k in c if k not in order)
    return {k: c[k] for k in keys}


def describe(release: Release) -> dict[str, Any]:
    """Statistics of ``release`` as a JSON-serialisable dict (see ``format_description``)."""
    items = release.items
    pool = release.papers

    sizes: list[int] = []
    n_nodes = n_meta = n_no_arxiv = n_edges = n_dangling = 0
    gold_without_text = 0
    for item in items:
        graph = release.graphs[item.id]
        sizes.append(len(graph.nodes))
        for node in graph.nodes.values():
            n_nodes += 1
            if not node.arxiv_id:
                n_no_arxiv += 1
                n_meta += 1
            elif node.arxiv_id not in pool:
                n_meta += 1
        for dsts in graph.edges.values():
            n_edges += len(dsts)
            n_dangling += sum(1 for d in dsts if d not in graph.nodes)
        gold_without_text += sum(1 for a in item.gold_arxiv_ids if a not in pool)

    n_sections = [len(p.sections) for p in pool.values()]
    lengths = sorted(len(s.text) for p in pool.values() for s in p.sections)

    # labels (docs/metrics.md#label-resolution): a label belongs to the pool paper with its arxiv_id when that id is a node of
    # the item's graph; it then resolves by header, else by containment in a parent section's text.
    by_relevance: Counter[str] = Counter()
    by_kind: Counter[str] = Counter()
    unresolved: Counter[str] = Counter()
    norm_cache: dict[str, list[str]] = {}
    golds = golds_ok = 0
    items_without_labels = 0
    for item in items:
        labs = release.labels.get(item.id)
        if labs is None:
            items_without_labels += 1
            labs = []
        graph = release.graphs[item.id]
        graph_aids = {n.arxiv_id for n in graph.nodes.values() if n.arxiv_id}
        direct_ok: set[str] = set()
        for lab in labs:
            by_relevance[lab.relevance] += 1
            if not lab.arxiv_id:
                kind, reason = NONE, "no arXiv id"
            elif lab.arxiv_id not in graph_aids:
                kind, reason = NONE, "arXiv id not in the item's graph"
            elif lab.arxiv_id not in pool:
                kind, reason = NONE, "paper has no full text"
            else:
                paper = pool[lab.arxiv_id]
                if lab.arxiv_id not in norm_cache:
                    norm_cache[lab.arxiv_id] = [norm_text(s.text) for s in paper.sections]
                kind, _ = resolve_label(lab, paper, norm_texts=norm_cache[lab.arxiv_id])
                reason = "section found nowhere"
                if kind != NONE and lab.relevance == "direct":
                    direct_ok.add(lab.arxiv_id)
            by_kind[kind] += 1
            if kind == NONE:
                unresolved[reason] += 1
        for aid in item.gold_arxiv_ids:
            golds += 1
            golds_ok += aid in direct_ok

    mt = [i for i in items if i.is_multi_target]
    return {
        "root": release.root,
        "benchmark_sha256": release.benchmark_sha256,
        "items": len(items),
        "cells": {c: sum(1 for i in items if i.cell == c) for c in CELLS},
        "reasoning_types": _counts([i.reasoning_type for i in items], ("GROUND", "RESULT", "MOTIVE", "METHOD")),
        "consensus_tiers": _counts([i.consensus_tier for i in items], ("gold", "silver", "bronze")),
        "venues": _counts([i.venue for i in items]),
        "cognitive_skills": _counts([i.cognitive_skill for i in items]),
        "correct_index": {str(k): sum(1 for i in items if i.correct_index == k) for k in range(4)},
        "gold_papers_per_item": {"st": statistics.fmean(len(i.gold_paper_ids) for i in items if not i.is_multi_target)
                                 if len(mt) < len(items) else None,
                                 "mt": statistics.fmean(len(i.gold_paper_ids) for i in mt) if mt else None},
        "neighbourhood_size": _summary(sizes),
        "nodes_total": n_nodes,
        "metadata_only_share": round(n_meta / n_nodes, 4) if n_nodes else None,
        "metadata_only_without_arxiv_id": n_no_arxiv,
        "metadata_only_arxiv_not_in_pool": n_meta - n_no_arxiv,
        "edges_total": n_edges,
        "edges_to_unknown_nodes": n_dangling,
        "gold_papers_without_full_text": gold_without_text,
        "papers_in_pool": len(pool),
        "sections_per_paper": ({"mean": round(statistics.fmean(n_sections), 2), "min": min(n_sections),
                                "max": max(n_sections)} if n_sections else {"mean": None, "min": None, "max": None}),
        "sections_total": len(lengths),
        "section_length": ({"mean": round(statistics.fmean(lengths), 1),
                            **{f"p{q}": round(percentile(lengths, q), 1) for q in (10, 50, 90, 99)},
                            "max": lengths[-1]} if lengths else {}),
        "labels_total": sum(by_relevance.values()),
        "labels_by_relevance": _counts(list(by_relevance.elements()), ("direct", "supporting")),
        "labels_by_kind": {k: by_kind.get(k, 0) for k in (HEADER, PARENT, NONE)},
        "labels_unresolved_reasons": dict(sorted(unresolved.items())),
        "gold_papers": golds,
        "gold_papers_with_resolvable_direct_label": golds_ok,
        "items_without_labels_row": items_without_labels,
    }


def _fmt_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "-"


def format_description(d: dict[str, Any]) -> str:
    """Human-readable rendering of :func:`describe`'s dict."""
    ns, sp, sl = d["neighbourhood_size"], d["sections_per_paper"], d["section_length"]
    kinds = d["labels_by_kind"]
    share = d["metadata_only_share"]
    lines = [
        f"release          {d['root']}  (benchmark_sha256 {d['benchmark_sha256']})",
        f"items            {d['items']}: {_fmt_counts(d['cells'])}",
        f"reasoning types  {_fmt_counts(d['reasoning_types'])}",
        f"consensus tiers  {_fmt_counts(d['consensus_tiers'])}",
        f"venues           {_fmt_counts(d['venues'])}",
        f"correct index    {_fmt_counts(d['correct_index'])}",
        f"neighbourhood    mean {ns['mean']}, median {ns['median']}, min {ns['min']}, max {ns['max']} nodes",
        f"metadata-only    {share:.1%} of {d['nodes_total']} nodes "
        f"({d['metadata_only_without_arxiv_id']} without arXiv id, "
        f"{d['metadata_only_arxiv_not_in_pool']} with an arXiv id not in the pool)" if share is not None
        else "metadata-only    -",
        f"edges            {d['edges_total']} total, {d['edges_to_unknown_nodes']} to ids that are not nodes",
        f"paper pool       {d['papers_in_pool']} papers, {d['sections_total']} sections; "
        f"sections/paper mean {sp['mean']}, min {sp['min']}, max {sp['max']}",
    ]
    if sl:
        lines.append(f"section length   mean {sl['mean']:.0f}, p10 {sl['p10']:.0f}, p50 {sl['p50']:.0f}, "
                     f"p90 {sl['p90']:.0f}, p99 {sl['p99']:.0f}, max {sl['max']} chars")
    lines += [
        f"labels           {d['labels_total']}: {_fmt_counts(d['labels_by_relevance'])}",
        f"label kinds      header {kinds[HEADER]}, inside a parent's text {kinds[PARENT]}, "
        f"unresolvable {kinds[NONE]}" + (f" ({_fmt_counts(d['labels_unresolved_reasons'])})"
                                         if d["labels_unresolved_reasons"] else ""),
        f"gold papers      {d['gold_papers']}, with a resolvable direct label "
        f"{d['gold_papers_with_resolvable_direct_label']}, without full text {d['gold_papers_without_full_text']}",
    ]
    if d["items_without_labels_row"]:
        lines.append(f"items without a labels row: {d['items_without_labels_row']}")
    return "\n".join(lines)
