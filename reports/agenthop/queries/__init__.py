"""Every SQL statement AgentHop's reports run, against the dbt marts only (read-only), one module per job.

Aggregation happens in DuckDB: charts receive at most a few hundred rows.

- :mod:`.runs`: the shared picker's runs with their model_summary rows, their display labels
- :mod:`.outcomes`: accuracy/recall/conversion counts per run and cell, paired discordant counts
- :mod:`.behaviour`: stopping, wrong-paper reads, terminations, transitions, trigrams, bigrams
- :mod:`.distributions`: binned tokens, turns and budget
- :mod:`.items`: item pages (trajectories, calls, the item's raw benchmark rows)
- :mod:`.panel`: the leaderboard's panel (correctness matrix, item facts, condition deltas)
- :mod:`.reruns`: rerun variance (Table 17), unstable items by cell and reasoning type
- :mod:`.sql`: the helpers they share

Every public name is re-exported here (``from reports.agenthop.queries import RunInfo``).
"""

from .runs import SUMMARY_METRICS, RunInfo, all_runs, label_runs, resolve_runs, runs_of_model, with_summary
from .outcomes import (
    CELLS,
    cell_accuracy,
    paired_counts,
    profile_counts,
    reasoning_accuracy,
    recall_overall,
    win_loss_items,
)
from .behaviour import (
    TOOLS,
    bigram_effects,
    evidence_contact,
    stopping,
    terminations,
    transition_differences,
    transitions,
    trigrams,
    wrong_reads,
)
from .distributions import HIST_COLUMNS, distribution_summary, histogram
from .items import (
    called_paper_titles,
    direct_labels,
    item_exists,
    item_papers,
    item_rows,
    runs_with_messages,
    tool_calls,
    trajectories,
)
from .panel import condition_deltas, correctness_matrix, item_info
from .reruns import rerun_variance, unstable_items

__all__ = [
    "CELLS", "HIST_COLUMNS", "RunInfo", "SUMMARY_METRICS", "TOOLS", "all_runs", "bigram_effects",
    "called_paper_titles", "cell_accuracy", "condition_deltas", "correctness_matrix", "direct_labels",
    "distribution_summary", "evidence_contact", "histogram",
    "item_exists", "item_info", "item_papers", "item_rows", "label_runs", "paired_counts", "profile_counts",
    "reasoning_accuracy", "recall_overall", "rerun_variance", "resolve_runs", "runs_of_model",
    "runs_with_messages", "stopping", "terminations", "tool_calls", "trajectories", "transition_differences",
    "transitions", "trigrams", "unstable_items", "win_loss_items", "with_summary", "wrong_reads",
]
