"""Run groups and pooled comparisons (docs/reports.md#pooled-compare).

A *run group* is every run of one model, benchmark and condition: runs that differ only in replicate
(AgentHop, SciExplore) or in Inspect epoch. ``compare --models a,b`` pools each side's group: an
item's value is its mean over the group's runs that scored it, and the paired test runs over the items
both groups scored. When each side has one run and the metric is binary it is the exact McNemar test
(as for two runs); otherwise the sign-flip permutation test of the per-item differences
(:func:`reports.stats.sign_flip_test`), with the Wilcoxon signed-rank test beside it. Each epoch (or
replicate) also gets its own paired test, and the items the groups differ on list every epoch's value.

Per-item values come from one function (``(wh, run_ids) -> {(run_id, sample_id): value}``): for a
metric of the catalogue :func:`metric_values` reads them from the mart ``item_metric_values``; a
warehouse without the catalogue uses :data:`ITEM_VALUES`, the final trajectories' own score. The better
side of a difference follows the metric's direction (reports/core/metrics.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthop.harness.errors import AgentHopError

from .. import stats
from ..warehouse import Warehouse
from . import marts
from .metrics import Metric, better_side
from .registry import Repeats, repeats_of
from .runs import RunInfo, benchmark_conditions, label_runs
from .value_columns import ValueColumns, Values

ItemValues = Callable[[Warehouse, Sequence[str]], Values]
ItemColumns = Callable[[Warehouse, Sequence[str]], ValueColumns]


def _primary_sql(wh: Warehouse, run_ids: Sequence[str]) -> str:
    return f"""SELECT run_id, sample_id,
                   CASE WHEN count(score) OVER (PARTITION BY run_id) > 0 THEN CAST(score AS DOUBLE)
                        ELSE CAST(CAST(is_correct AS INTEGER) AS DOUBLE) END
            FROM {marts.trajectories(wh)} WHERE run_id IN ({', '.join('?' * len(run_ids))})"""


def primary_values(wh: Warehouse, run_ids: Sequence[str]) -> Values:
    """The primary score of every final trajectory of `run_ids`; a run none of whose trajectories
    carries a score is valued by correctness (0 or 1). Items without a value are left out."""
    if not run_ids:
        return {}
    rows = wh.con.execute(_primary_sql(wh, run_ids), list(run_ids)).fetchall()
    return {(str(r), str(s)): float(v) for r, s, v in rows if v is not None}


def primary_columns(wh: Warehouse, run_ids: Sequence[str]) -> ValueColumns:
    """:func:`primary_values` as columns."""
    if not run_ids:
        return ValueColumns.empty()
    return ValueColumns.from_arrow(wh.con.sql(_primary_sql(wh, run_ids), params=list(run_ids)).to_arrow_table())


#: The per-item value source of a page without a metric (a warehouse built without the metric catalogue).
ITEM_VALUES: ItemValues = primary_values


def metric_values(metric: Metric) -> ItemValues:
    """The source of `metric`'s per-item values: its rows of ``item_metric_values`` that carry a number."""

    def read(wh: Warehouse, run_ids: Sequence[str]) -> Values:
        if not run_ids:
            return {}
        rows = wh.con.execute(
            f"""SELECT run_id, sample_id, value FROM {marts.ITEM_METRIC_VALUES}
                WHERE benchmark = ? AND metric = ? AND value IS NOT NULL
                  AND run_id IN ({', '.join('?' * len(run_ids))})""",
            [metric.benchmark, metric.name, *run_ids]).fetchall()
        return {(str(r), str(s)): float(v) for r, s, v in rows}

    return read


def metric_columns(metric: Metric) -> ItemColumns:
    """:func:`metric_values` as columns, for many runs at once (a leaderboard's): the metric's rows read in the
    table's order (a plain filter keeps it; a list of run ids in the query would be joined, in no set order),
    those of other runs left out after."""

    def read(wh: Warehouse, run_ids: Sequence[str]) -> ValueColumns:
        if not run_ids:
            return ValueColumns.empty()
        table = wh.con.sql(f"""SELECT run_id, sample_id, value FROM {marts.ITEM_METRIC_VALUES}
                               WHERE benchmark = ? AND metric = ? AND value IS NOT NULL""",
                           params=[metric.benchmark, metric.name]).to_arrow_table()
        return ValueColumns.from_arrow(table, runs=run_ids)

    return read


def values_source(metric: Metric | None) -> ItemValues:
    """`metric`'s values, or :data:`ITEM_VALUES` without one."""
    return metric_values(metric) if metric is not None else ITEM_VALUES


def columns_source(metric: Metric | None) -> ItemColumns:
    """:func:`values_source` as columns (the mapping of :data:`ITEM_VALUES`, when it is not the primary values)."""
    if metric is not None:
        return metric_columns(metric)
    if ITEM_VALUES is primary_values:
        return primary_columns
    source = ITEM_VALUES
    return lambda wh, run_ids: ValueColumns.from_mapping(source(wh, run_ids))


# -- repeats: "epoch N" or "replicate N" -------------------------------------------------------------------


# -- groups ------------------------------------------------------------------------------------------------


@dataclass
class RunGroup:
    """The runs of one model (benchmark, condition) that differ only in replicate or epoch."""

    model: str
    benchmark: str
    condition: str
    runs: list[RunInfo]
    repeats: Repeats = field(default_factory=Repeats)
    label: str = ""

    @property
    def n_runs(self) -> int:
        return len(self.runs)

    @property
    def run_ids(self) -> list[str]:
        return [r.run_id for r in self.runs]

    @property
    def simulated(self) -> bool:
        return any(r.simulated for r in self.runs)

    def repeat_names(self) -> str:
        return ", ".join(self.repeats.name(r) for r in self.runs)


def make_group(runs: Sequence[RunInfo], epoch: int | None = None) -> RunGroup:
    """A group of one model's runs (ordered by replicate), restricted to the shown number `epoch`."""
    first = runs[0]
    rep = repeats_of(first.benchmark)
    ordered = sorted(runs, key=lambda r: (r.replicate, r.run_id))
    if epoch is not None:
        keep = [r for r in ordered if r.replicate == rep.replicate_of(epoch)]
        if not keep:
            have = ", ".join(str(rep.number(r)) for r in ordered)
            raise AgentHopError(f"model {first.model!r} has no {rep.noun} {epoch} (it has {rep.plural}: {have})")
        ordered = keep
    condition = first.condition if benchmark_conditions(first.benchmark) else ""  # no conditions: none shown
    return RunGroup(model=first.model, benchmark=str(first.benchmark), condition=condition, runs=ordered,
                    repeats=rep, label=first.model)


def label_group_runs(groups: Sequence[RunGroup]) -> None:
    """Display labels: one run a side keeps the runs' labels (label_runs); pooled groups are named by
    their model (plus the condition when both share a model) and their runs by that and their epoch or
    replicate."""
    if all(g.n_runs == 1 for g in groups):
        label_runs([g.runs[0] for g in groups])
        for g in groups:
            g.label = g.runs[0].label
        return
    same_model = len({g.model for g in groups}) < len(groups)
    for g in groups:
        g.label = f"{g.model} · {g.condition}" if same_model and g.condition else g.model
        for r in g.runs:
            r.label = f"{g.label} · {g.repeats.name(r)}" if g.n_runs > 1 else g.label


# -- pooled values and tests ----------------------------------------------------------------------------------


def item_means(values: Mapping[tuple[str, str], float] | ValueColumns, run_ids: Sequence[str]) -> dict[str, float]:
    """Per item (in the order of its first value): the mean of its values over `run_ids` (the runs that scored it),
    summed in the values' order."""
    return ValueColumns.of(values).select(run_ids).item_means()


def is_binary(values: Mapping[tuple[str, str], float] | ValueColumns) -> bool:
    """Whether every value is 0 or 1."""
    return ValueColumns.of(values).is_binary()


@dataclass
class ItemTest:
    """A paired test of A against B over the items both scored: exact McNemar (one run a side, binary),
    else the sign-flip permutation test with the Wilcoxon signed-rank test beside it."""

    n: int  # items scored on both sides
    mean_a: float | None
    mean_b: float | None
    mcnemar: stats.PairedTest | None = None
    sign_flip: stats.SignFlip | None = None
    wilcoxon: stats.GradedPaired | None = None  # mean_diff = A − B

    @property
    def diff(self) -> float | None:
        if self.mean_a is None or self.mean_b is None:
            return None
        return self.mean_a - self.mean_b

    @property
    def p(self) -> float | None:
        if self.mcnemar is not None:
            return self.mcnemar.p
        return self.sign_flip.p if self.sign_flip is not None else None

    @property
    def test_name(self) -> str:
        return "exact McNemar" if self.mcnemar is not None else "sign-flip permutation"


def item_test(a: Mapping[str, float], b: Mapping[str, float], mcnemar: bool) -> ItemTest:
    """The paired test of per-item values `a` and `b` (sample_id -> value) over their shared items."""
    shared = sorted(set(a) & set(b))
    xa, xb = [a[s] for s in shared], [b[s] for s in shared]
    n = len(shared)
    mean_a = sum(xa) / n if n else None
    mean_b = sum(xb) / n if n else None
    if mcnemar:
        a_only = sum(1 for x, y in zip(xa, xb) if x == 1.0 and y == 0.0)
        b_only = sum(1 for x, y in zip(xa, xb) if x == 0.0 and y == 1.0)
        return ItemTest(n, mean_a, mean_b, mcnemar=stats.paired_test_from_counts(n, a_only, b_only))
    # paired_graded reports its second argument minus its first: (B, A) gives A − B
    return ItemTest(n, mean_a, mean_b, sign_flip=stats.sign_flip_test([x - y for x, y in zip(xa, xb)]),
                    wilcoxon=stats.paired_graded(xb, xa))


@dataclass
class EpochRow:
    """One epoch (replicate) number: each side's run of it, its mean and the paired test of the two."""

    number: int
    run_a: RunInfo | None
    run_b: RunInfo | None
    mean_a: float | None
    mean_b: float | None
    n_a: int
    n_b: int
    test: ItemTest | None  # None when one side has no run of this number


@dataclass
class DifferingItem:
    sample_id: str
    values_a: list[float | None]  # per run of group A, in its order
    values_b: list[float | None]
    mean_a: float | None
    mean_b: float | None
    better: str = ""  # "A", "B" or "" (a tie, or a metric without a direction)

    @property
    def diff(self) -> float | None:
        return None if self.mean_a is None or self.mean_b is None else self.mean_a - self.mean_b


@dataclass
class Pooled:
    """Two run groups compared on per-item values pooled over each group's runs."""

    a: RunGroup
    b: RunGroup
    binary: bool
    test: ItemTest
    n_items_a: int  # items with a value in group A
    n_items_b: int
    epochs: list[EpochRow]
    differing: list[DifferingItem]
    metric: Metric | None = None

    @property
    def better(self) -> str:
        """The side whose pooled mean is the better one by the metric's direction ("" on a tie)."""
        return better_side(self.metric, self.test.mean_a, self.test.mean_b)

    @property
    def wins(self) -> tuple[int, int]:
        """Items on which A's value is the better one, and those on which B's is."""
        sides = [d.better for d in self.differing]
        return sides.count("A"), sides.count("B")

    @property
    def pooled(self) -> bool:
        return self.a.n_runs > 1 or self.b.n_runs > 1

    @property
    def noun(self) -> str:
        return self.a.repeats.noun


def _epoch_rows(values: Values | ValueColumns, a: RunGroup, b: RunGroup, binary: bool) -> list[EpochRow]:
    by_a = {a.repeats.number(r): r for r in a.runs}
    by_b = {b.repeats.number(r): r for r in b.runs}
    cols = ValueColumns.of(values)  # each run's values read from the columns
    rows = []
    for num in sorted(set(by_a) | set(by_b)):
        ra, rb = by_a.get(num), by_b.get(num)
        va = item_means(cols, [ra.run_id]) if ra else {}
        vb = item_means(cols, [rb.run_id]) if rb else {}
        rows.append(EpochRow(
            number=num, run_a=ra, run_b=rb, n_a=len(va), n_b=len(vb),
            mean_a=sum(va.values()) / len(va) if va else None, mean_b=sum(vb.values()) / len(vb) if vb else None,
            test=item_test(va, vb, mcnemar=binary) if ra and rb else None))
    return rows


def compare_groups(wh: Warehouse, a: RunGroup, b: RunGroup, source: ItemValues | None = None,
                   metric: Metric | None = None) -> Pooled:
    """Pool each group's runs per item and test A against B over the shared items (module docstring): the
    values of `metric` (from `source` when given, else its mart rows; ITEM_VALUES without a metric)."""
    values = (source or values_source(metric))(wh, a.run_ids + b.run_ids)
    cols = ValueColumns.from_mapping(values)  # once for each statistic below
    binary = is_binary(cols)
    ma, mb = item_means(cols, a.run_ids), item_means(cols, b.run_ids)
    test = item_test(ma, mb, mcnemar=binary and a.n_runs == 1 and b.n_runs == 1)
    differing = []
    for sid in sorted(set(ma) & set(mb)):
        va = [values.get((r, sid)) for r in a.run_ids]
        vb = [values.get((r, sid)) for r in b.run_ids]
        same_epochs = all(x == y for x, y in zip(va, vb) if x is not None and y is not None)
        if ma[sid] != mb[sid] or not same_epochs:
            differing.append(DifferingItem(sid, va, vb, ma[sid], mb[sid], better_side(metric, ma[sid], mb[sid])))
    sign = metric.sign or 1 if metric is not None else 1  # the better side's items first (A's on a tie)
    differing.sort(key=lambda d: (-abs(d.diff or 0.0), -sign * (d.diff or 0.0), d.sample_id))
    return Pooled(a=a, b=b, binary=binary, test=test, n_items_a=len(ma), n_items_b=len(mb),
                  epochs=_epoch_rows(cols, a, b, binary), differing=differing, metric=metric)


def summary(p: Pooled) -> dict[str, Any]:
    """The numbers of the page's headline test line."""
    t = p.test
    out: dict[str, Any] = {"test": t.test_name, "n": t.n, "diff": t.diff, "p": t.p, "mean_a": t.mean_a,
                           "mean_b": t.mean_b, "better": p.better}
    if t.wilcoxon is not None:
        out.update(wilcoxon_p=t.wilcoxon.wilcoxon_p, ci=(t.wilcoxon.ci_lo, t.wilcoxon.ci_hi))
    return out
