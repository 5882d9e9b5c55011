"""The figures of AgentHop's compare sections (compare_sections.py): two runs side by side with paired
statistics on the shared items, from AgentHop's marts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthop.harness.errors import AgentHopError

from .. import multiplicity, stats
from ..render import Charts
from ..warehouse import Warehouse
from . import queries, sections
from .conditions import applies
from .queries import RunInfo

MARTS = (
    "fct_trajectory", "model_summary", "stopping_behavior", "wrong_read_actions", "tool_transitions",
    "tool_trigrams", "cell_accuracy", "reasoning_type_accuracy", "termination_summary",
    "evidence_contact_summary", "fct_tool_call", "bigram_effects",
)

#: Recall patterns of a win/loss item: which of the two runs read every gold paper.
RECALL_PATTERNS = ("both recalled", "only A recalled", "only B recalled", "neither recalled")


def _rates(c: dict[str, int], scope: str | None) -> stats.RunRates:
    if scope is None:
        return stats.RunRates(c.get("n", 0), c.get("recalled", 0), c.get("correct_recalled", 0),
                              c.get("correct_unrecalled", 0))
    s = scope.lower()
    return stats.RunRates(
        c.get(f"n_{s}", 0), c.get(f"recalled_{s}", 0), c.get(f"correct_recalled_{s}", 0),
        c.get(f"correct_{s}", 0) - c.get(f"correct_recalled_{s}", 0),
    )


def recall_applies(run: RunInfo) -> bool:
    """False for a run whose condition reads no paper (closed_book): its paper recall is undefined, not 0."""
    return applies(run.condition, "paper_recall")


def recall_na_note(runs: Sequence[RunInfo]) -> str | None:
    """Why recall and conversion print n/a for some of `runs` (None when they apply to all of them)."""
    which = [f"{'AB'[i]} ({r.label}) is a {r.condition} run" for i, r in enumerate(runs) if not recall_applies(r)]
    if not which:
        return None
    return (f"{' and '.join(which)}, which reads no paper: there is no evidence for it to find, so its paper "
            "recall and conversion are undefined and no statistic counts them as 0")


def decomposition(counts: dict[str, dict[str, int]], a: RunInfo, b: RunInfo) -> list[dict[str, Any]]:
    """The accuracy split per scope. With a run whose recall is undefined (closed_book) the split is n/a
    (`d` None; `delta_acc` still given): treating its recall as 0 would credit all of Δacc to recall."""
    out = []
    ok = {r.run_id: recall_applies(r) for r in (a, b)}
    for scope, label in ((None, "all items"), ("ST", "ST items"), ("MT", "MT items")):
        ra, rb = _rates(counts.get(a.run_id, {}), scope), _rates(counts.get(b.run_id, {}), scope)
        split = all(ok.values())
        d = stats.decompose_accuracy(ra, rb) if split else None
        acc_a, acc_b = ra.accuracy, rb.accuracy
        shown = {}
        for side, run, rr in (("a", a, ra), ("b", b, rb)):
            shown[side] = {"recall": rr.recall if ok[run.run_id] else None,
                           "conversion": rr.conversion if ok[run.run_id] else None,
                           "acc_norecall": rr.acc_norecall if ok[run.run_id] else rr.accuracy,
                           "applies": ok[run.run_id]}
        out.append({"scope": label, "a": shown["a"], "b": shown["b"], "d": d, "split": split,
                    "n": min(ra.n, rb.n),
                    "delta_acc": None if acc_a is None or acc_b is None else acc_a - acc_b})
    return out


#: multiplicity adjustment over the paired tests table (docs/reports.md#multiplicity)
PAIRED_ADJUST: multiplicity.Method = "holm"


def paired_tests(wh: Warehouse, a: RunInfo, b: RunInfo) -> list[dict[str, Any]]:
    """Exact McNemar per comparison, with Holm's adjusted p over the table (``p_adj``); conversion is n/a
    (t None) when either run's recall is undefined."""
    out = []
    both = recall_applies(a) and recall_applies(b)
    for row in queries.paired_counts(wh, a.run_id, b.run_id):
        if row["comparison"] == "conversion" and not both:
            out.append({"comparison": row["comparison"], "scope": row["scope"], "t": None})
            continue
        t = stats.paired_test_from_counts(int(row["n"]), int(row["a_only"]), int(row["b_only"]))
        out.append({"comparison": row["comparison"], "scope": row["scope"], "t": t})
    for r, adj in zip(out, multiplicity.adjust([r["t"].p if r["t"] else None for r in out], PAIRED_ADJUST)):
        r["p_adj"] = adj
    return out


def _pattern(row: dict[str, Any], a_applies: bool = True, b_applies: bool = True) -> str:
    a, b = bool(row["a_recall"]), bool(row["b_recall"])
    if not (a_applies and b_applies):
        if not (a_applies or b_applies):
            return "n/a (no run reads papers)"
        who, found = ("A", a) if a_applies else ("B", b)
        other = "B" if a_applies else "A"
        return f"{who} recalled ({other}: n/a)" if found else f"{who} did not recall ({other}: n/a)"
    return RECALL_PATTERNS[0 if a and b else 1 if a else 2 if b else 3]


def win_loss_strata(rows: Sequence[dict[str, Any]], a_applies: bool = True,
                    b_applies: bool = True) -> list[dict[str, Any]]:
    """Win/loss items grouped by cell and recall pattern: per stratum the items A won and B won. A run
    whose recall is undefined (closed_book) is n/a in the pattern, never "did not recall"."""
    strata: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        key = (str(r["cell"]), _pattern(r, a_applies, b_applies))
        s = strata.setdefault(key, {"cell": key[0], "recall": key[1], "a_wins": [], "b_wins": []})
        (s["a_wins"] if r["a_correct"] else s["b_wins"]).append(r)
    cells = [c for c in queries.CELLS if any(k[0] == c for k in strata)] + sorted(
        {k[0] for k in strata} - set(queries.CELLS))
    patterns = list(dict.fromkeys([*RECALL_PATTERNS, *sorted({k[1] for k in strata}, key=lambda p: ('not' in p, p))]))
    return [strata[(c, p)] for c in cells for p in patterns if (c, p) in strata]


def summary(a: RunInfo, b: RunInfo, counts: dict[str, dict[str, int]], paired: list[dict[str, Any]],
            decomposition_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The few numbers the page opens with: accuracies, the paired test, the main driver."""
    ca, cb = counts.get(a.run_id, {}), counts.get(b.run_id, {})
    acc = next((p for p in paired if p["comparison"] == "accuracy"), None)
    d = decomposition_rows[0]["d"] if decomposition_rows else None  # None: no split (undefined recall)
    driver = None
    if d is not None:
        parts = {"finding the evidence (paper recall)": d.recall_driven,
                 "using the evidence it found (conversion)": d.conversion_driven,
                 "answering without the evidence": d.norecall_driven}
        name, value = max(parts.items(), key=lambda kv: abs(kv[1] or 0))
        driver = {"name": name, "value": value, "share": (abs(value) / sum(abs(v or 0) for v in parts.values()))
                  if any(parts.values()) else None}
    return {"acc_a": (ca.get("correct", 0), ca.get("n", 0)), "acc_b": (cb.get("correct", 0), cb.get("n", 0)),
            "test": acc["t"] if acc else None, "d": d, "driver": driver,
            "recall_na": recall_na_note((a, b))}


def build(wh: Warehouse, runs: Sequence[RunInfo], box: Charts | None = None) -> tuple[dict[str, Any], Charts]:
    """The figures of AgentHop's compare sections for two runs, their charts added to `box` (a new one
    without it)."""
    if len(runs) != 2:
        raise AgentHopError(f"compare needs exactly two models or runs, got {len(runs)}")
    wh.require(MARTS)
    a, b = runs
    ids = [a.run_id, b.run_id]
    box = Charts() if box is None else box

    profile_rows, counts, profile_chart = sections.profile(wh, runs, box)
    for r in runs:
        if counts.get(r.run_id, {}).get("n", 0) == 0:
            raise AgentHopError(f"run {r.run_id} ({r.model}) has no trajectories in fct_trajectory")

    # stopping scopes are defined by the evidence read (ST anchor, MT recall): a run whose recall is undefined
    # (closed_book) has no scope, so its shares are n/a, never 0 (nor 100% "zero_gold")
    reads = {r.run_id for r in runs if recall_applies(r)}
    stop_rows = [r for r in queries.stopping(wh, ids) if r["run_id"] in reads]
    wrong_rows = queries.wrong_reads(wh, ids)
    term_rows = queries.terminations(wh, ids)
    contact_rows = queries.evidence_contact(wh, ids)

    cell_table, cell_chart = sections.accuracy_by(
        queries.cell_accuracy(wh, ids), runs, key="cell", preferred=queries.CELLS,
        title="Accuracy per cell (Wilson 95%)", chart_box=box)
    rt_table, rt_chart = sections.accuracy_by(
        queries.reasoning_accuracy(wh, ids), runs, key="reasoning_type", preferred=sections.REASONING_ORDER,
        title="Accuracy per reasoning type (Wilson 95%)", chart_box=box)

    # win/loss items: each links to its item page (written by the caller's Site)
    wl = queries.win_loss_items(wh, a.run_id, b.run_id)
    a_wins = [r for r in wl if r["a_correct"]]
    b_wins = [r for r in wl if r["b_correct"]]
    paired = paired_tests(wh, a, b)
    decomp = decomposition(counts, a, b)

    context = {
        "title": f"Compare {a.label} vs {b.label}",
        "runs": runs,
        "a": a,
        "b": b,
        "profile_rows": profile_rows,
        "profile_chart": profile_chart,
        "decomposition": decomp,
        "paired": paired,
        "paired_adjust": multiplicity.caption(PAIRED_ADJUST, sum(1 for p in paired if p["t"] is not None)),
        "summary": summary(a, b, counts, paired, decomp),
        "stopping": sections.side_by_side_shares(stop_rows, runs, key="category", preferred=sections.STOPPING_ORDER,
                                                 group="scope", group_order=sections.SCOPE_ORDER),
        "stopping_chart": box.add(sections.share_chart(stop_rows, runs, key="category",
                                                       preferred=sections.STOPPING_ORDER, group="scope",
                                                       group_order=sections.SCOPE_ORDER,
                                                       title="Stopping behaviour after the evidence anchor")),
        "wrong_reads": sections.side_by_side_shares(wrong_rows, runs, key="action",
                                                    preferred=sections.WRONG_READ_ORDER,
                                                    labels=sections.WRONG_READ_LABELS),
        "wrong_reads_chart": box.add(sections.share_chart(wrong_rows, runs, key="action",
                                                          preferred=sections.WRONG_READ_ORDER,
                                                          labels=sections.WRONG_READ_LABELS,
                                                          title="Next action after a wrong-paper read")),
        "wrong_read_actions": sections.WRONG_READ_ACTIONS,
        "terminations": sections.side_by_side_shares(term_rows, runs, key="terminated_by",
                                                     preferred=sections.TERMINATION_ORDER),
        "terminations_chart": box.add(sections.share_chart(term_rows, runs, key="terminated_by",
                                                           preferred=sections.TERMINATION_ORDER,
                                                           title="How trajectories ended")),
        "contact": sections.side_by_side_shares(
            [r for r in contact_rows if r.get("evidence_contact") is not None], runs, key="evidence_contact",
            preferred=sections.CONTACT_ORDER, extra=("conversion",)),
        "transition_diffs": queries.transition_differences(wh, a.run_id, b.run_id),  # the heatmap: the shared page's
        "bigrams": sections.bigram_table(queries.bigram_effects(wh, ids), runs),
        "bigram_family": stats.BIGRAM_FAMILY,
        "cell_table": cell_table,
        "cell_chart": cell_chart,
        "rt_table": rt_table,
        "rt_chart": rt_chart,
        "dist_charts": sections.distributions(wh, runs, box),
        "dist_summary": {r["run_id"]: r for r in queries.distribution_summary(wh, ids)},
        "a_wins": a_wins,
        "b_wins": b_wins,
        "win_loss": wl,
        "strata": win_loss_strata(wl, recall_applies(a), recall_applies(b)),
        "recall_na": recall_na_note(runs),
        "recall_applies": {"a": recall_applies(a), "b": recall_applies(b)},
        "item_ids": [r["sample_id"] for r in wl],
    }
    return context, box
