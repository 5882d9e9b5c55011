"""The registry of report sections per benchmark: how a benchmark adds its own sections to the shared
pages (compare, reruns, item, leaderboard); every benchmark's runs get the same pages.

A benchmark's :class:`ReportSections` (in ``reports/<benchmark>/``) may give:

- ``compare``: ``(wh, sides, charts) -> list[Section]``, sections appended to the shared compare page after
  the shared sections; ``sides`` are the page's two run groups (reports/core/pooling.py: ``.runs``,
  ``.run_ids``; one run a side with ``--runs`` or ``--epoch``);
- ``reruns``: ``(wh, runs, charts) -> list[Section]``, the same for the shared reruns page (every run of
  the model);
- ``leaderboard``: ``(wh, condition, boards, charts) -> list[Section]``, sections beneath the shared
  leaderboard's tables when the benchmark is shown (``boards``: the shared tables' contexts);
- ``item``: ``(wh, sample_ids, runs) -> {sample_id: Section}``, the item itself (its question, target,
  ...) shown at the top of the shared item page;
- ``repeats``: how its repeats of one configuration are named and numbered (:class:`Repeats`: Inspect's
  epochs from 1, the default the harness's replicates as stored);
- ``mart_columns``: the columns its queries read from its own marts (a mart built without one is a
  user error naming it);
- ``items``: its own word for its items on the pages ("answered 3 of 103 tasks"; default ``items``);
- ``cluster_default`` / ``cluster_labels``: the item field its intervals are clustered by and the function
  reading an item field's values (reports/core/clusters.py);
- ``item_pages``: the item pages the shared pages link to, when the benchmark brings its own (an object
  as :meth:`reports.site.Site.write_item_pages` takes; the shared ones without it);
- ``tool_order`` / ``transitions_note``: the order its tools head the transition heatmaps in, and a sentence
  on how their rows read (the compare page's transitions caption).

:data:`ENTRIES` maps a benchmark name to the module that defines its ``SECTIONS`` (imported on first
use); a name ending in ``:`` covers every benchmark with that prefix (``inspect:`` for every imported
Inspect task). :func:`register` adds an object directly (tests, plugins). A benchmark without an entry
gets the shared sections alone.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .runs import RunInfo

#: benchmark name (or ``prefix:``) -> the module defining its ``SECTIONS``
ENTRIES: dict[str, str] = {
    "agenthop": "agenthop.reports.agenthop",
    "sciexplore": "agenthop.reports.sciexplore.sections",
    "inspect:": "agenthop.reports.inspect",
}


@dataclass
class Section:
    """One block of a page: a heading, an anchor and the template that renders it with its context.

    ``template`` is a file under reports/templates/ that renders ``section.context`` (the page includes it
    with the section as ``s``; it may use the page's macros); charts it shows are registered in the page's
    Charts and their ids kept in its context. ``summary``, when given, is a template of ``<li>`` lines the
    shared compare page adds to its summary (with the same ``s``)."""

    title: str
    template: str
    context: dict[str, Any] = field(default_factory=dict)
    anchor: str = ""
    summary: str = ""


SectionsFn = Callable[..., Sequence[Section]]


@dataclass(frozen=True)
class Repeats:
    """How a benchmark names its repeats: Inspect's epochs (1-based), the harness's replicates (as stored)."""

    noun: str = "replicate"
    plural: str = "replicates"
    base: int = 0  # the shown number of replicate 0

    def number(self, run: RunInfo) -> int:
        return run.replicate + self.base

    def name(self, run: RunInfo) -> str:
        return f"{self.noun} {self.number(run)}"

    def replicate_of(self, number: int) -> int:
        """The stored replicate of the shown number `number` (``--epoch N`` / ``--replicate N``)."""
        return number - self.base


@dataclass(frozen=True)
class Outcomes:
    """How a benchmark names an item's binary outcome on the shared pages: the harness's and SciExplore's
    answers are right or wrong; an Inspect score of 1 or 0 is only that (a "C" may be the bad outcome,
    as AgentDojo's security key is)."""

    right: str = "right"  # b = first right only
    got_right: str = "got right"  # items only A got right
    wrong: str = "wrong"
    correct: str = "correct"  # correct in 2 of 3 replicates; the item page's badge
    correctness: str = "correctness"  # changed correctness between replicates
    judged: str = "judged correct"  # share of final trajectories judged correct
    accuracy: str = "accuracy"  # the share of items with the outcome 1
    percent: str = "accuracy %"  # the column header of that share in percent
    one_class: str = "ok"  # the colour of an outcome 1 (a badge class: ok, bad, or "" for none)
    zero_class: str = "bad"


@dataclass(frozen=True)
class ReportSections:
    name: str
    compare: SectionsFn | None = None
    reruns: SectionsFn | None = None
    leaderboard: SectionsFn | None = None
    item: Callable[..., Mapping[str, Section]] | None = None
    #: the columns its report queries read, per mart of its own (checked before a report runs)
    mart_columns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: how its repeats of one configuration are named on the pages (``epoch 1`` or ``replicate 0``)
    repeats: Repeats = field(default_factory=Repeats)
    #: how it names an item's binary outcome (right/wrong, or an Inspect score of 1 or 0)
    outcomes: Outcomes = field(default_factory=Outcomes)
    #: its own plural word for its items ("tasks", "samples")
    items: str = "items"
    #: how its paper counts a missing item, said beside the pages' coverage rule ("" : the pages' rule alone)
    missing_rule: str = ""
    #: the item field its intervals are clustered by without ``--cluster`` (None: by item alone)
    cluster_default: str | None = None
    #: ``(wh, benchmark, field) -> {sample_id: cluster}`` for ``--cluster FIELD`` (reports/core/clusters.py)
    cluster_labels: Callable[..., Mapping[str, str]] | None = None
    #: the item pages the shared pages write for its runs (None: the shared item pages)
    item_pages: Any = None
    #: its tools in the order its heatmaps list them (others after them, by calls; empty: by calls)
    tool_order: tuple[str, ...] = ()
    #: a sentence the compare page's transitions caption adds (how its tools' rows read)
    transitions_note: str = ""


_REGISTERED: dict[str, ReportSections] = {}
_LOADED: dict[str, ReportSections | None] = {}


def register(sections: ReportSections) -> None:
    """Add (or replace) a benchmark's report sections; ``name`` may end in ``:`` to cover a prefix."""
    _REGISTERED[sections.name] = sections


def unregister(name: str) -> None:
    _REGISTERED.pop(name, None)


def _entry(name: str) -> ReportSections | None:
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name not in ENTRIES:
        return None
    if name not in _LOADED:
        _LOADED[name] = getattr(importlib.import_module(ENTRIES[name]), "SECTIONS")
    return _LOADED[name]


def sections_for(benchmark: str | None) -> ReportSections | None:
    """The report sections of `benchmark`: its own entry, else the entry of the longest prefix it has."""
    if not benchmark:
        return None
    exact = _entry(benchmark)
    if exact is not None:
        return exact
    prefixes = sorted((k for k in {*ENTRIES, *_REGISTERED} if k.endswith(":") and benchmark.startswith(k)),
                      key=len, reverse=True)
    for p in prefixes:
        found = _entry(p)
        if found is not None:
            return found
    return None


def repeats_of(benchmark: str | None) -> Repeats:
    """How `benchmark` names its repeats (the default, replicates, without an entry)."""
    s = sections_for(benchmark)
    return s.repeats if s is not None else Repeats()


def outcomes_of(benchmark: str | None) -> Outcomes:
    """How `benchmark` names an item's binary outcome (right and wrong without an entry)."""
    s = sections_for(benchmark)
    return s.outcomes if s is not None else Outcomes()


def items_of(benchmark: str | None) -> str:
    """`benchmark`'s plural word for its items (``items`` without an entry)."""
    s = sections_for(benchmark)
    return s.items if s is not None else "items"


def missing_rule_of(benchmark: str | None) -> str:
    """How `benchmark`'s paper counts a missing item ("" without such a rule)."""
    s = sections_for(benchmark)
    return s.missing_rule if s is not None else ""


def mart_columns() -> dict[str, tuple[str, ...]]:
    """Every benchmark's declared mart columns (its entry imported on first use)."""
    out: dict[str, tuple[str, ...]] = {}
    for name in {*ENTRIES, *_REGISTERED}:
        s = _entry(name)
        if s is not None:
            out.update(s.mart_columns)
    return out


def item_pages_of(benchmark: str | None, shared: Any) -> Any:
    """The item pages `benchmark`'s runs get on the shared pages: its own, else `shared`."""
    s = sections_for(benchmark)
    return s.item_pages if s is not None and s.item_pages is not None else shared


#: The template of :func:`table_section` (a benchmark that needs no template of its own uses it).
TABLE_TEMPLATE = "_section_table.html.j2"


def table_section(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], note: str = "",
                  anchor: str = "") -> Section:
    """A section that is one table: `columns` as its header, `rows` as its cells (autoescaped text;
    numbers right-aligned), with an optional note above it."""
    return Section(title=title, template=TABLE_TEMPLATE, anchor=anchor,
                   context={"columns": list(columns), "rows": [list(r) for r in rows], "note": note})
