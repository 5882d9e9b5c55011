"""Side-by-side, turn-aligned trajectories for drill-down (compare win/loss items, `item`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .core.runs import RunInfo


@dataclass
class Side:
    run: RunInfo
    summary: dict[str, Any] | None  # fct_trajectory row, None when the run has no trajectory for the item
    n_calls: int = 0
    budget_spent: int = 0
    has_messages: bool = True  # False: the run recorded no transcript, so outputs cannot be shown


#: What a page adds to the stored 0-based turn, call (seq) and message numbers: pages number from 1, as the
#: agent's own status footer does ("Turn: 1" follows the first model call).
SHOWN_FROM = 1


@dataclass
class AlignedItem:
    """One item: per run a header, and rows of calls aligned by turn number."""

    sample_id: str
    sides: list[Side]
    #: (turn as shown, 1-based; calls per side)
    rows: list[tuple[int, list[list[dict[str, Any]]]]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


def align(
    sample_id: str,
    runs: Sequence[RunInfo],
    traj_rows: Sequence[dict[str, Any]],
    call_rows: Sequence[dict[str, Any]],
    info_keys: Sequence[str] = (),
) -> AlignedItem:
    """Group the calls of each run by turn; row t holds every run's calls made in turn t, numbered from 1
    (stored turn + SHOWN_FROM). `info` holds the `info_keys` of the item's trajectory rows (a benchmark's
    item attributes)."""
    summaries = {r["run_id"]: r for r in traj_rows if r["sample_id"] == sample_id}
    per_run: dict[str, dict[int, list[dict[str, Any]]]] = {r.run_id: {} for r in runs}
    sides = [Side(run=r, summary=summaries.get(r.run_id)) for r in runs]
    by_id = {s.run.run_id: s for s in sides}
    for c in call_rows:
        if c["sample_id"] != sample_id or c["run_id"] not in per_run:
            continue
        per_run[c["run_id"]].setdefault(int(c["turn"]), []).append(c)
        side = by_id[c["run_id"]]
        side.n_calls += 1
        side.budget_spent += int(c.get("cost") or 0)
    turns = sorted({t for calls in per_run.values() for t in calls})
    rows = [(t + SHOWN_FROM, [per_run[r.run_id].get(t, []) for r in runs]) for t in turns]
    info = next(iter(summaries.values()), {})
    return AlignedItem(
        sample_id=sample_id,
        sides=sides,
        rows=rows,
        info={k: info.get(k) for k in info_keys},
    )


def budget_curve(call_rows: Sequence[dict[str, Any]], runs: Sequence[RunInfo]) -> list[dict[str, Any]]:
    """Cumulative budget points spent after each call, per run: a few dozen rows per item. Calls and turns
    are numbered from 1, as the item page's table numbers them."""
    label = {r.run_id: r.chart_label for r in runs}
    out: list[dict[str, Any]] = []
    spent: dict[str, int] = {}
    for c in sorted(call_rows, key=lambda c: (c["run_id"], c["seq"])):
        spent[c["run_id"]] = spent.get(c["run_id"], 0) + int(c.get("cost") or 0)
        out.append({"run": label.get(c["run_id"], c["run_id"]), "seq": int(c["seq"]) + SHOWN_FROM,
                    "turn": int(c["turn"]) + SHOWN_FROM,
                    "tool": c["tool"], "spent": spent[c["run_id"]]})
    return out
