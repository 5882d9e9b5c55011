"""AgentHop's sections of the shared `compare` page (reports/core/compare.py): what only its marts hold,
for the first run of each side (its replicate 0, or ``--epoch``'s run; the shared page pools the rest).

The shared page already shows the outcomes, the paired test (pooled over every replicate when a model has
several), terminations, tool use, transitions, trigrams, tokens, cost and budget curves and the items
that differ. These sections add the paper's four-axis profile, the accuracy split, the McNemar tests per
comparison and scope, stopping behaviour, wrong-paper reads, evidence contact, the transitions that
differ most with undefined probabilities as n/a, bigram effects, accuracy per cell and reasoning type,
token/turn/budget percentiles and the won and lost items by cell and recall pattern (compare.py builds
their figures). Their templates are ``agenthop_compare_*.html.j2``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.registry import Section
from ..render import Charts
from ..warehouse import Warehouse
from . import compare
from .queries import RunInfo, label_runs, with_summary

#: (anchor, title, template stem) of each section, in page order
SECTIONS: tuple[tuple[str, str, str], ...] = (
    ("profile", "Four-axis profile", "profile"),
    ("decomposition", "Where the accuracy difference comes from", "decomposition"),
    ("paired-tests", "Paired tests per comparison and scope", "paired"),
    ("stopping", "Stopping behaviour", "stopping"),
    ("wrong-reads", "After reading a wrong paper", "wrong_reads"),
    ("evidence-contact", "Terminations and evidence contact", "contact"),
    ("transitions-agenthop", "Tool transitions that differ most", "transitions"),
    ("bigrams", "Bigram effects", "bigrams"),
    ("cells", "Accuracy per cell and reasoning type", "cells"),
    ("distributions", "Tokens, turns and budget", "distributions"),
    ("winloss", "Items won and lost", "winloss"),
)
#: the template of the lines AgentHop adds to the shared page's summary
SUMMARY_TEMPLATE = "agenthop_compare_summary.html.j2"


def pair(wh: Warehouse, sides: Sequence[Any]) -> list[RunInfo]:
    """The first run of each side, with model_summary's row (AgentHop's columns) and its label."""
    mine = with_summary(wh, [g.runs[0] for g in sides])
    label_runs(mine)
    for run, side in zip(mine, sides):  # named as the shared page names them
        run.label = side.runs[0].label
    return mine


def context(wh: Warehouse, sides: Sequence[Any], box: Charts) -> dict[str, Any]:
    """The figures of every section (compare.build), for the first run of each side."""
    runs = pair(wh, sides)
    ctx, _ = compare.build(wh, runs, box)
    pooled = any(g.n_runs > 1 for g in sides)
    return {**ctx, "pooled_sides": pooled}


def sections(wh: Warehouse, sides: Sequence[Any], box: Charts) -> list[Section]:
    """AgentHop's sections of the shared compare page of the two sides (run groups)."""
    ctx = context(wh, sides, box)
    out = [Section(title=title, template=f"agenthop_compare_{stem}.html.j2", anchor=anchor, context=ctx)
           for anchor, title, stem in SECTIONS]
    out[0].summary = SUMMARY_TEMPLATE
    return out
