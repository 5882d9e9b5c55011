"""Which items share a cluster, for the intervals of the shared pages (docs/reports.md#cluster-option).

Items that share a source paper, a domain or a task family are not independent, and neither are the
repeats of one item. The pages always pool a model's repeats into one value per item first (clustering by
item); ``--cluster FIELD`` groups the items further by one of their fields, and each benchmark declares
its default field in the report registry (``ReportSections.cluster_default``, with the function that
reads the fields, ``cluster_labels``): AgentHop clusters by the item's source paper, SciExplore by the
task's domain, an Inspect task by nothing unless a metadata field is named. ``--cluster item`` turns the
default off. An item without a value of the field is a cluster of its own.

With a declared field the interval of a mean of per-item values is the cluster-robust t interval of
reports/clustered.py over G clusters (G − 1 degrees of freedom); a paired comparison sums the per-item
differences within each cluster and flips whole clusters (the sign-flip test on the cluster sums).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from agenthop.harness.errors import AgentHopError

from .. import clustered, stats
from ..warehouse import Warehouse
from . import registry

#: ``--cluster item``: each item its own cluster (the repeats of an item pooled into its value)
ITEM = "item"


@dataclass(frozen=True)
class Clustering:
    """How one benchmark's items are clustered on a page."""

    benchmark: str
    field: str  # ITEM, or the item field whose values are the clusters
    labels: Mapping[str, str] = field(default_factory=dict)  # sample_id -> cluster (field given)
    declared: bool = False  # named with --cluster (else the benchmark's default)

    @property
    def by_item(self) -> bool:
        return self.field == ITEM

    def cluster_of(self, sample_id: str) -> str:
        """An item's cluster: its field's value, else the item itself."""
        got = self.labels.get(sample_id)
        return f"\x00{sample_id}" if got is None else got

    def count(self, sample_ids: Sequence[str]) -> int:
        return len({self.cluster_of(s) for s in sample_ids})

    def describe(self, sample_ids: Sequence[str]) -> str:
        """The caption's words, e.g. "clustered by domain (12 clusters over 103 items; the benchmark's default)"."""
        n = len(sample_ids)
        if self.by_item:
            return f"clustered by item ({n} item{'' if n == 1 else 's'}; repeats of an item pooled into its value)"
        g = self.count(sample_ids)
        how = "--cluster" if self.declared else "the benchmark's default"
        return (f"clustered by {self.field} ({g} cluster{'' if g == 1 else 's'} over {n} item{'' if n == 1 else 's'}; "
                f"{how})")


def resolve(wh: Warehouse, benchmark: str, cluster: str | None) -> Clustering:
    """The clustering of `benchmark`'s items: `cluster` when given (ITEM: by item alone), else its default."""
    sections = registry.sections_for(benchmark)
    default = sections.cluster_default if sections is not None else None
    name = cluster if cluster is not None else default
    if name is None or name == ITEM:
        return Clustering(benchmark, ITEM, declared=cluster is not None)
    reader = sections.cluster_labels if sections is not None else None
    if reader is None:
        raise AgentHopError(f"--cluster {name}: benchmark {benchmark!r} declares no item fields to cluster by; "
                            f"use --cluster {ITEM}")
    return Clustering(benchmark, name, dict(reader(wh, benchmark, name)), declared=cluster is not None)


@dataclass(frozen=True)
class ClusteredInterval:
    """A mean of per-item values with its interval under a clustering."""

    mean: float | None
    lo: float | None
    hi: float | None
    n_items: int
    n_clusters: int
    method: str


def mean_interval(values: Mapping[str, float], clustering: Clustering) -> ClusteredInterval:
    """The cluster-robust t interval of the mean of per-item `values` (sample_id -> value); None bounds with
    fewer than two clusters."""
    ids = sorted(values)
    if not ids:
        return ClusteredInterval(None, None, None, 0, 0, "clustered t")
    cm = clustered.clustered_interval([values[s] for s in ids], [clustering.cluster_of(s) for s in ids])
    return ClusteredInterval(cm.mean, cm.lo, cm.hi, cm.n, cm.n_clusters, "clustered t")


def declared_interval(values: Mapping[str, float], clustering: Clustering | None) -> ClusteredInterval | None:
    """The clustered interval when a field groups some of these items together; None when they are clustered
    by item alone, or every item is a cluster of its own (the item-level interval stands: Wilson, bootstrap)."""
    if clustering is None or clustering.by_item or clustering.count(list(values)) >= len(values):
        return None
    return mean_interval(values, clustering)


@dataclass(frozen=True)
class ClusteredPaired:
    """A paired comparison of A and B over their shared items, clustered."""

    n_items: int
    n_clusters: int
    diff: ClusteredInterval  # mean of A − B over the items, with its clustered interval
    sign_flip: stats.SignFlip  # whole clusters flipped (the sign-flip test of the cluster sums)


def paired(a: Mapping[str, float], b: Mapping[str, float], clustering: Clustering) -> ClusteredPaired:
    """A − B per shared item: the clustered interval of its mean, and the sign-flip test of the per-cluster
    sums of the differences (under the null each cluster's sum is as likely negated)."""
    shared = sorted(set(a) & set(b))
    d = {s: a[s] - b[s] for s in shared}
    sums: dict[str, float] = {}
    for s in shared:
        key = clustering.cluster_of(s)
        sums[key] = sums.get(key, 0.0) + d[s]
    return ClusteredPaired(len(shared), len(sums), mean_interval(d, clustering),
                           stats.sign_flip_test([sums[k] for k in sorted(sums)]))


# -- the benchmarks' item fields -------------------------------------------------------------------------


def _relation_columns(wh: Warehouse, schema: str, table: str) -> list[str]:
    rows = wh.con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() "
        "AND table_schema = ? AND table_name = ? ORDER BY ordinal_position", [schema, table]).fetchall()
    return [str(r[0]) for r in rows]


def column_labels(wh: Warehouse, relation: str, key: str, fields: Mapping[str, str], benchmark: str,
                  name: str) -> dict[str, str]:
    """sample_id -> text of one column of an item table; `fields` maps the names a user may give (``--cluster
    NAME``) to columns (any other column of the table is accepted under its own name). A user error names
    the fields there are when `name` is none of them."""
    schema, table = relation.split(".", 1)
    columns = _relation_columns(wh, schema, table)
    if not columns:
        raise AgentHopError(f"--cluster {name}: the warehouse has no {relation} to read {benchmark}'s item fields "
                            f"from; load the benchmark's release or use --cluster {ITEM}")
    column = fields.get(name, name)
    if column not in columns or column == key:
        known = sorted({*fields, *(c for c in columns if c != key)})
        raise AgentHopError(f"--cluster {name}: {benchmark} items have no field {name!r}; fields: {', '.join(known)} "
                            f"(or {ITEM})")
    rows = wh.con.execute(f'SELECT "{key}", CAST("{column}" AS VARCHAR) FROM {relation} '
                          f'WHERE "{column}" IS NOT NULL').fetchall()
    return {str(k): str(v) for k, v in rows}


__all__ = ["ITEM", "ClusteredInterval", "ClusteredPaired", "Clustering", "column_labels", "declared_interval",
           "mean_interval", "paired",
           "resolve"]
