"""Report sections shared by several reports: each turns mart rows into table rows and a chart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import charts, stats
from ..render import Charts
from ..values import as_float as _f
from ..warehouse import Warehouse
from . import queries
from .conditions import applies
from .queries import RunInfo

STOPPING_ORDER = ("read", "immediate", "think", "other", "zero_gold", "explored", "stayed", "premature")
SCOPE_ORDER = ("ST", "MT-both", "MT-fail")
#: The next action after a wrong-paper read (mart ``wrong_read_actions.action``) as every report names it:
#: the paper's display name (Table 3's columns) and what the action is (docs/metrics.md#wrong-read-actions),
#: in the paper's column order. The one source of these names for the compare page and the paper report.
WRONG_READ_ACTIONS: dict[str, tuple[str, str]] = {
    "recover": ("Recover", "reads a section of a gold paper"),
    "stay": ("Stay", "reads a section of a non-gold paper"),
    "think": ("Think", "calls think"),
    "renav": ("Re-nav", "calls a navigation tool"),
    "submit": ("Submit", "answers (submit_answer)"),
    "other": ("Other", "calls a tool of an unknown name"),
}
WRONG_READ_ORDER = tuple(WRONG_READ_ACTIONS)
WRONG_READ_LABELS = {k: name for k, (name, _) in WRONG_READ_ACTIONS.items()}
TERMINATION_ORDER = ("answer", "max_turns", "budget", "token_limit", "error")
CONTACT_ORDER = ("header", "parent", "none")
#: The reasoning types as the release and the paper spell them, in the order the paper introduces them; the
#: compare page and the paper report's Table 10 list them so
REASONING_ORDER = ("GROUND", "METHOD", "MOTIVE", "RESULT")


def in_order(values: Sequence[str], preferred: Sequence[str]) -> list[str]:
    """The distinct values, those of ``preferred`` first in its order, the others sorted after them."""
    seen = [v for v in preferred if v in values]
    return seen + sorted(v for v in set(values) if v not in preferred)



# ------------------------------------------------------------------------------------------------
# Four-axis profile (Table 2 row)
# ------------------------------------------------------------------------------------------------

AXES = ("outcome", "finding evidence", "using evidence", "organising actions", "spending resources")
#: (axis, label, numerator key, denominator key, model_summary metric) for proportions with Wilson intervals
PROPORTIONS: tuple[tuple[str, str, str, str, str], ...] = (
    ("outcome", "accuracy", "correct", "n", "accuracy"),
    ("finding evidence", "paper recall ST", "recalled_st", "n_st", "recall_st"),
    ("finding evidence", "paper recall MT", "recalled_mt", "n_mt", "recall_mt"),
    ("finding evidence", "section recall ST", "secrec_st", "n_st", "secrec_st"),
    ("finding evidence", "section recall MT", "secrec_mt", "n_mt", "secrec_mt"),
    ("using evidence", "conversion ST", "correct_recalled_st", "recalled_st", "conversion_st"),
    ("using evidence", "conversion MT", "correct_recalled_mt", "recalled_mt", "conversion_mt"),
)
#: (axis, label, model_summary column, kind) for the other Table 2 columns
OTHERS: tuple[tuple[str, str, str, str], ...] = (
    ("organising actions", "calls / turn", "calls_per_turn", "num2"),
    ("organising actions", "top trigram share %", "trigram_concentration", "pct"),
    ("organising actions", "early submit after wrong read %", "early_submit_rate", "pct"),
    ("spending resources", "avg tokens (K)", "avg_tokens_k", "num1"),
    ("spending resources", "avg turns", "avg_turns", "num1"),
    ("spending resources", "avg budget", "avg_budget", "num1"),
    ("spending resources", "token cap %", "max_tokens_rate", "pct"),
    ("spending resources", "turn cap %", "max_turns_rate", "pct"),
    ("spending resources", "budget cap %", "max_budget_rate", "pct"),
    ("spending resources", "error %", "error_rate", "pct"),
    ("outcome", "no answer %", "na_rate", "pct"),
)


def profile(
    wh: Warehouse, runs: Sequence[RunInfo], chart_box: Charts
) -> tuple[list[dict[str, Any]], dict[str, dict[str, int]], str | None]:
    """Rows of the profile table (one per metric, one cell per run) and the profile chart id."""
    counts = queries.profile_counts(wh, [r.run_id for r in runs])
    rows: list[dict[str, Any]] = []
    chart_rows: list[dict[str, Any]] = []
    for axis, label, k_key, n_key, metric in PROPORTIONS:
        cells = []
        fracs: list[float | None] = []
        for r in runs:
            if not applies(r.condition, metric):
                fracs.append(None)
                cells.append({"text": "n/a"})
                continue
            c = counts.get(r.run_id, {})
            k, n = c.get(k_key, 0), c.get(n_key, 0)
            ci = stats.wilson_interval(k, n)
            frac = k / n if n else None
            fracs.append(frac)
            cells.append({"text": stats.format_acc_pm(k, n), "k": k, "n": n})
            if frac is not None and ci is not None and (label.startswith(("accuracy", "paper", "conversion"))):
                chart_rows.append({"run": r.chart_label, "metric": label, "value": frac, "lo": ci[0], "hi": ci[1],
                                   "n": n})
        rows.append({"axis": axis, "label": label, "cells": cells, "kind": "wilson",
                     "delta": _delta(fracs, scale=100, unit="pp")})
    for axis, label, col, kind in OTHERS:
        if not any(col in r.summary for r in runs):
            continue  # the mart does not carry this column
        vals = [_f(r.summary.get(col)) if applies(r.condition, col) else None for r in runs]
        cells = [{"text": _fmt(v, kind)} for v in vals]
        rows.append({"axis": axis, "label": label, "cells": cells, "kind": kind,
                     "delta": _delta(vals, scale=100 if kind == "pct" else 1, unit="pp" if kind == "pct" else "")})
    rows.sort(key=lambda row: AXES.index(row["axis"]))  # stable: keeps the order within an axis
    order = [p[1] for p in PROPORTIONS if p[1].startswith(("accuracy", "paper", "conversion"))]
    cid = chart_box.add(
        charts.grouped_bars(chart_rows, category="metric", value="value", runs=[r.chart_label for r in runs],
                            category_order=order, title="Accuracy, recall and conversion (Wilson 95%)",
                            value_title="rate", lo="lo", hi="hi")
        if chart_rows else None
    )
    return rows, counts, cid


def _fmt(v: float | None, kind: str) -> str:
    if v is None:
        return "n/a"
    if kind == "pct":
        return f"{100 * v:.1f}"
    if kind == "num2":
        return f"{v:.2f}"
    return f"{v:,.1f}"


def _delta(vals: Sequence[float | None], scale: float, unit: str) -> str:
    if len(vals) != 2:
        return ""
    if vals[0] is None or vals[1] is None:
        return "n/a"
    d = (vals[0] - vals[1]) * scale
    return f"{d:+.1f}{(' ' + unit) if unit else ''}"


# ------------------------------------------------------------------------------------------------
# Categorical shares side by side (stopping, wrong reads, terminations, evidence contact)
# ------------------------------------------------------------------------------------------------


def side_by_side_shares(
    rows: list[dict[str, Any]],
    runs: Sequence[RunInfo],
    *,
    key: str,
    preferred: Sequence[str],
    group: str | None = None,
    group_order: Sequence[str] = (),
    extra: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Pivot mart rows (run_id, [group], key, n, share, ...) into one table row per (group, key); each
    row's ``label`` is the key's display name (``labels``, else the key itself).

    A run with no row at all in a group has nothing in scope there (a closed-book run reaches no gold
    paper, reads no wrong one): its shares are None (n/a), not 0."""
    by = {(r["run_id"], r.get(group) if group else None, r[key]): r for r in rows}
    in_scope = {(r["run_id"], r.get(group) if group else None) for r in rows}  # the marts list scopes with items
    groups = in_order([r[group] for r in rows], group_order) if group else [None]
    out = []
    for g in groups:
        keys = in_order([r[key] for r in rows if (r.get(group) if group else None) == g], preferred)
        for k in keys:
            cells = []
            for run in runs:
                r = by.get((run.run_id, g, k))
                cells.append({
                    "n": r.get("n") if r else 0,
                    "share": _f(r.get("share")) if r else (0.0 if (run.run_id, g) in in_scope else None),
                    **{e: _f(r.get(e)) if r else None for e in extra},
                })
            shares = [c["share"] for c in cells]
            out.append({"group": g, "key": k, "label": (labels or {}).get(k, k), "cells": cells,
                        "delta": _delta(shares, 100, "pp") if len(runs) == 2 else ""})
    return out


def share_chart(
    rows: list[dict[str, Any]], runs: Sequence[RunInfo], *, key: str, preferred: Sequence[str], title: str,
    group: str | None = None,
    group_order: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any] | None:
    """Grouped bars of the shares per key and run; a bar's category is the key's display name
    (``labels``, else the key itself), in the ``preferred`` order of the keys."""
    if not rows:
        return None
    label = {r.run_id: r.chart_label for r in runs}
    shown = dict(labels or {})
    data = [{"run": label[r["run_id"]], key: shown.get(r[key], r[key]), "share": _f(r["share"]), "n": r.get("n"),
             **({group: r[group]} if group else {})} for r in rows if r["run_id"] in label]
    order = [shown.get(k, k) for k in in_order([r[key] for r in rows if r["run_id"] in label], preferred)]
    return charts.grouped_bars(data, category=key, value="share", runs=[r.chart_label for r in runs],
                               category_order=order, title=title,
                               value_title="share", facet=group,
                               facet_order=in_order([d[group] for d in data], group_order) if group else None)


# ------------------------------------------------------------------------------------------------
# Accuracy by cell / reasoning type
# ------------------------------------------------------------------------------------------------


def accuracy_by(
    rows: list[dict[str, Any]], runs: Sequence[RunInfo], *, key: str, preferred: Sequence[str], title: str,
    chart_box: Charts,
) -> tuple[list[dict[str, Any]], str | None]:
    by = {(r["run_id"], r[key]): r for r in rows}
    keys = in_order([r[key] for r in rows], preferred)
    table = []
    data = []
    for k in keys:
        cells = []
        for run in runs:
            r = by.get((run.run_id, k))
            if r is None:
                cells.append({"text": "n/a", "n": 0})
                continue
            n, correct = int(r["n"]), int(r["correct"])
            cells.append({"text": stats.format_acc_pm(correct, n), "k": correct, "n": n})
            ci = stats.wilson_interval(correct, n)
            if ci is not None:
                data.append({"run": run.chart_label, key: k, "accuracy": correct / n, "lo": ci[0], "hi": ci[1],
                             "n": n})
        table.append({"key": k, "cells": cells})
    cid = chart_box.add(
        charts.grouped_bars(data, category=key, value="accuracy", runs=[r.chart_label for r in runs],
                            category_order=keys, title=title, value_title="accuracy", lo="lo", hi="hi")
        if data else None
    )
    return table, cid


# ------------------------------------------------------------------------------------------------
# Bigram effects with Fisher exact p and Bonferroni
# ------------------------------------------------------------------------------------------------


def bigram_table(rows: list[dict[str, Any]], runs: Sequence[RunInfo], top: int = 12) -> list[dict[str, Any]]:
    """Per run: bigram effects sorted by Fisher p (top `top` plus every significant one)."""
    out = []
    for run in runs:
        mine = []
        for r in rows:
            if r["run_id"] != run.run_id:
                continue
            n_with, n_without = int(r["n_with"]), int(r["n_without"])
            p = stats.fisher_p(int(r["correct_with"]), n_with, int(r["correct_without"]), n_without)
            p_adj = stats.bonferroni(p)
            mine.append({**r, "p": p, "p_bonf": p_adj, "significant": stats.significant(p_adj)})
        mine.sort(key=lambda x: (x["p"], x["bigram"]))
        shown = [m for i, m in enumerate(mine) if int(m["n_with"]) > 0 and (i < top or m["significant"])]
        out.append({"run": run, "rows": shown, "n_total": sum(1 for m in mine if int(m["n_with"]) > 0),
                    "n_significant": sum(1 for m in mine if m["significant"])})
    return out


# ------------------------------------------------------------------------------------------------
# Distributions (binned in SQL)
# ------------------------------------------------------------------------------------------------


def distributions(wh: Warehouse, runs: Sequence[RunInfo], chart_box: Charts) -> list[str]:
    label = {r.run_id: r.chart_label for r in runs}
    ids = []
    for column, (title, _) in queries.HIST_COLUMNS.items():
        rows = queries.histogram(wh, [r.run_id for r in runs], column)
        data = [{"run": label[r["run_id"]], "bin_start": _f(r["bin_start"]), "bin_end": _f(r["bin_end"]),
                 "n": int(r["n"]), "share": _f(r["share"])} for r in rows]
        cid = chart_box.add(charts.histogram(data, runs=[r.chart_label for r in runs],
                                             title=f"Distribution of {title}", x_title=title) if data else None)
        if cid:
            ids.append(cid)
    return ids
