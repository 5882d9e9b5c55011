"""AgentHop's report sections, registered in the report registry (reports/core/registry.py): its sections
of the shared compare, reruns and leaderboard pages and its part of the shared item pages.

Every AgentHop page is the shared page (reports/core/: outcomes, pooled paired tests, coverage,
terminations, tool use, transitions and trigrams, tokens and cost, budget curves, items that differ) with
AgentHop's sections from its marts (model_summary, fct_trajectory, fct_tool_call, ...): on compare the
four-axis profile, the accuracy split, McNemar per comparison and scope, stopping behaviour, wrong-paper
reads, evidence contact, bigram effects, cells and reasoning types and the items won and lost
(compare_sections.py, figures from compare.py); on reruns Table 17 and the unstable items by cell and
reasoning type (reruns.py); on the leaderboard Table 2 by tier, accuracy vs recall, condition deltas and
reliability (leaderboard.py); on item pages the question, options, papers, labelled sections and each
call's paper titles, budget and received text (item.py). sections.py holds the blocks they share,
conditions.py the metrics a condition leaves undefined, marts.py the marts read and queries/ the SQL. The
`paper` report (reports/paper/) builds on them.
"""

from __future__ import annotations

from ..core.registry import ReportSections
from ..render import add_template_globals
from ..warehouse import Warehouse
from . import compare_sections, item, leaderboard, reruns
from .conditions import applies
from .marts import MART_COLUMNS
from .queries import TOOLS

#: The benchmark whose runs these pages show.
BENCHMARK = "agenthop"

add_template_globals(applies=applies)  # the item macros print a closed-book run's recall as n/a


def item_clusters(wh: Warehouse, benchmark: str, name: str) -> dict[str, str]:
    """``--cluster NAME``: an item field of the release (source_paper: the seed paper it starts from; any other
    column of the items table, e.g. depth, reasoning_type, venue)."""
    from ..core.clusters import column_labels

    return column_labels(wh, "raw.items", "sample_id", {"source_paper": "seed_paper_id"}, benchmark, name)


SECTIONS = ReportSections(
    name="agenthop",
    compare=compare_sections.sections,
    reruns=reruns.sections,
    leaderboard=leaderboard.sections,
    item_pages=item.PAGES,
    mart_columns=MART_COLUMNS,
    cluster_default="source_paper",
    cluster_labels=item_clusters,
    tool_order=TOOLS,
    transitions_note="submit_answer ends the attempt, so its row is empty.",
)
