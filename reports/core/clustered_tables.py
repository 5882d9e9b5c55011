"""The clustered tables of the shared compare and reruns pages (docs/reports.md#cluster-option).

compare: A − B over the shared items with the cluster-robust interval of its mean and the sign-flip test
that flips whole clusters. reruns: each replicate's (epoch's) mean with its clustered interval, and the
replicates pooled per item (clustered by item, and by the field when one is declared).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..warehouse import Warehouse
from . import clusters, pooling, registry
from .runs import RunInfo


def compare_block(wh: Warehouse, benchmark: str, a: pooling.RunGroup, b: pooling.RunGroup,
                  cluster: str | None) -> dict[str, Any] | None:
    """The compare page's clustered comparison; None when the items are clustered by item alone (the page's
    own tests already are over items, repeats pooled)."""
    clustering = clusters.resolve(wh, benchmark, cluster)
    if clustering.by_item:
        return None
    values = pooling.columns_source(None)(wh, a.run_ids + b.run_ids)
    ma, mb = pooling.item_means(values, a.run_ids), pooling.item_means(values, b.run_ids)
    res = clusters.paired(ma, mb, clustering)
    shared = sorted(set(ma) & set(mb))
    return {"clustering": clustering, "note": clustering.describe(shared), "res": res,
            "side_a": clusters.mean_interval({s: ma[s] for s in shared}, clustering),
            "side_b": clusters.mean_interval({s: mb[s] for s in shared}, clustering)}


def reruns_block(wh: Warehouse, benchmark: str, runs: Sequence[RunInfo], cluster: str | None) -> dict[str, Any]:
    """Each replicate's mean with its interval clustered by the field (or by item), and the replicates pooled."""
    clustering = clusters.resolve(wh, benchmark, cluster)
    ids = [r.run_id for r in runs]
    values = pooling.columns_source(None)(wh, ids)
    rows = [{"run": r, "ci": clusters.mean_interval(pooling.item_means(values, [r.run_id]), clustering)} for r in runs]
    pooled = pooling.item_means(values, ids)
    return {"clustering": clustering, "note": clustering.describe(sorted(pooled)), "rows": rows,
            "pooled": clusters.mean_interval(pooled, clustering), "n_runs": len(runs),
            "repeats": registry.repeats_of(benchmark)}


__all__ = ["compare_block", "reruns_block"]
