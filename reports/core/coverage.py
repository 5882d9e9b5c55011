"""Honest denominators (docs/reports.md#coverage): how many of a run's (or run group's) items a mean is
over, the coverage line a page shows beside a partial value ("answered 3 of 103 tasks"), and the
intention-to-treat value beside the per-protocol one.

Means on the shared pages are over the items with a value of the metric (per-protocol). Where items of
the scope are missing or ended without a value, the intention-to-treat (ITT) value counts each of them
as the metric's worst value (its minimum when higher is better, its maximum when lower is better), when
the metric catalogue knows that bound; without a bound or a direction no ITT value is shown.

The scope and the error counts come from the mart ``run_coverage``; the items with a value from the
values the page compares, so the line holds for whichever metric the page shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..warehouse import Warehouse
from . import marts, registry
from .value_columns import ValueColumns

RUN_COVERAGE = "main.run_coverage"
METRIC_DEFS = "main.metric_defs"
ITEMS_FINAL = "intermediate.int_core_items_final"

#: The rule every caption states (docs/reports.md#coverage).
RULE = ("Means are over the items with a value (per-protocol); where items are missing or ended without a "
        "value, the intention-to-treat value beside it counts each of them as the metric's worst value.")


@dataclass(frozen=True)
class RunCoverage:
    """One run's row of ``run_coverage``."""

    run_id: str
    n_scope: int
    n_final: int
    n_scored: int
    n_error: int
    n_missing: int


@dataclass(frozen=True)
class Coverage:
    """The items a mean is over (``n``) of the items in scope, and why the others are not in it."""

    n: int
    n_scope: int
    n_missing: int = 0  # items without a final outcome (in every run)
    n_error: int = 0  # items that ended with an error (in some run)
    noun: str = "items"
    gaps: int = 0  # of a pooled group: (run, item) pairs of the scope without a value
    runs_short: int = 0  # runs with such a gap
    n_runs: int = 1
    runs_noun: str = "runs"  # what the group's runs are ("epochs", "replicates")

    @property
    def partial(self) -> bool:
        return self.n < self.n_scope or self.gaps > 0

    @property
    def text(self) -> str:
        """``answered 3 of 103 tasks (100 missing)``; ``answered all 4 samples`` when complete; a pooled
        group whose every item has a value in some run but not in every run: ``answered all 4 samples (1
        missing in 1 of 2 epochs)``."""
        if self.n >= self.n_scope:
            gap = f" ({self.gaps} missing in {self.runs_short} of {self.n_runs} {self.runs_noun})" if self.gaps else ""
            return f"answered all {self.n} {self.noun}{gap}"
        why = [f"{self.n_missing} missing" if self.n_missing else "",
               f"{self.n_error} ended in an error" if self.n_error else ""]
        reasons = ", ".join(w for w in why if w)
        return f"answered {self.n} of {self.n_scope} {self.noun}" + (f" ({reasons})" if reasons else "")

    @property
    def n_of(self) -> str:
        """``3 of 103``."""
        return f"{self.n} of {self.n_scope}"


def run_coverage(wh: Warehouse, run_ids: Sequence[str]) -> dict[str, RunCoverage]:
    """``run_coverage`` rows of `run_ids` (none on a warehouse built without the mart)."""
    if not run_ids or not marts.has(wh, RUN_COVERAGE):
        return {}
    rows = wh.rows(
        f"""SELECT run_id, n_scope, n_final, n_scored, n_error, n_missing FROM {RUN_COVERAGE}
            WHERE run_id IN ({', '.join('?' * len(run_ids))})""", list(run_ids))
    return {str(r["run_id"]): RunCoverage(str(r["run_id"]), int(r["n_scope"]), int(r["n_final"]), int(r["n_scored"]),
                                          int(r["n_error"]), int(r["n_missing"])) for r in rows}


def of_run(n: int, row: RunCoverage | None, noun: str = "items") -> Coverage:
    """Coverage of one run's mean over `n` items, against its ``run_coverage`` row (none: `n` is the scope)."""
    if row is None:
        return Coverage(n=n, n_scope=n, noun=noun)
    return Coverage(n=n, n_scope=max(row.n_scope, n), n_missing=row.n_missing, n_error=row.n_error, noun=noun)


def of_group(values: Mapping[tuple[str, str], float] | ValueColumns, run_ids: Sequence[str],
             rows: Mapping[str, RunCoverage], noun: str = "items", runs_noun: str = "runs") -> Coverage:
    """Coverage of a run group's pooled mean: items with a value in any of its runs, of the largest scope of
    its runs (without coverage rows: the items with a value are the scope), and the (run, item) pairs of
    the scope without a value."""
    own = ValueColumns.of(values).select(run_ids)
    n = own.n_samples()
    per_run = [count for _, count in own.run_sums(list(dict.fromkeys(run_ids)))]  # items with a value, per run
    mine = [rows[r] for r in run_ids if r in rows]
    scope = max([c.n_scope for c in mine] + [n])
    short = [scope - k for k in per_run if k < scope]
    return Coverage(n=n, n_scope=scope, n_missing=min((c.n_missing for c in mine), default=0),
                    n_error=max((c.n_error for c in mine), default=0), noun=noun,
                    gaps=sum(short) if n >= scope else 0, runs_short=len(short), n_runs=len(run_ids),
                    runs_noun=runs_noun)


def error_items(wh: Warehouse, run_ids: Sequence[str]) -> set[str]:
    """Items that ended with an error in any of `run_ids` (the shared items_final model)."""
    if not run_ids or not marts.has(wh, ITEMS_FINAL):
        return set()
    return {str(s) for (s,) in wh.con.execute(
        f"SELECT DISTINCT sample_id FROM {ITEMS_FINAL} WHERE is_error AND run_id IN ({', '.join('?' * len(run_ids))})",
        list(run_ids)).fetchall()}


def worst_value(direction: str | None, min_value: float | None, max_value: float | None) -> float | None:
    """The metric's worst value: its minimum when higher is better, its maximum when lower is better; None
    without a direction or that bound."""
    if direction == "higher_is_better":
        return min_value
    if direction == "lower_is_better":
        return max_value
    return None


def primary_worst(wh: Warehouse, benchmark: str, metric: str | None = None) -> float | None:
    """The worst value of `metric` (default: the benchmark's primary metric) from ``metric_defs``."""
    if not marts.has(wh, METRIC_DEFS):
        return None
    where = "metric = ?" if metric else "is_primary"
    rows = wh.rows(f"SELECT direction, min_value, max_value FROM {METRIC_DEFS} WHERE benchmark = ? AND {where}",
                   [benchmark, *([metric] if metric else [])])
    if not rows:
        return None
    r = rows[0]
    return worst_value(r["direction"], r["min_value"], r["max_value"])


def itt_mean(values: Mapping[tuple[str, str], float] | ValueColumns, run_ids: Sequence[str], n_scope: int,
             worst: float | None) -> float | None:
    """The intention-to-treat mean of a run group: in each run every item of the scope without a value
    counts as `worst`; the mean over the runs of each run's mean over its `n_scope` items (every item in
    every run: the mean of the per-item means). None without a worst value or a scope."""
    if worst is None or n_scope <= 0 or not run_ids:
        return None
    means = [(total + worst * max(n_scope - k, 0)) / n_scope  # each run's values summed in their order
             for total, k in ValueColumns.of(values).run_sums(run_ids)]
    return sum(means) / len(means)


def noun_of(benchmark: str | None) -> str:
    """The benchmark's own word for its items (``tasks``, ``samples``; ``items`` without one)."""
    return registry.items_of(benchmark)


@dataclass(frozen=True)
class Exclusion:
    """An item left out of a paired test, and why: missing on A, on B, or without a value (an error)."""

    sample_id: str
    reason: str


def exclusions(a: Mapping[str, object], b: Mapping[str, object], scope: Sequence[str] = (),
               errors_a: Sequence[str] = (), errors_b: Sequence[str] = ()) -> list[Exclusion]:
    """The items of `scope` (or of either side) a paired test over the items in both `a` and `b` leaves
    out, each with its reason: "missing on A", "missing on B", "missing on both", or "error on A/B" for an
    item that ended with an error and has no value there."""
    ea, eb = set(errors_a), set(errors_b)
    out = []
    for sid in sorted(set(scope) | set(a) | set(b)):
        in_a, in_b = sid in a, sid in b
        if in_a and in_b:
            continue

        def why(side: str, errs: set[str]) -> str:
            return f"error on {side}" if sid in errs else f"missing on {side}"

        if not in_a and not in_b:
            reason = (why("A", ea) + ", " + why("B", eb)) if (sid in ea or sid in eb) else "missing on both"
        else:
            reason = why("A", ea) if not in_a else why("B", eb)
        out.append(Exclusion(sid, reason))
    return out
