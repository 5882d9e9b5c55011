"""Vega-Lite specs of the paper's figures, from rows the marts already aggregated (Altair, offline)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt

from .. import charts
from ..charts import MAX_ROWS, ChartTooLarge
from ..values import jsonable

#: Every figure's rows go to the spec's top-level `datasets` under this name, after Altair has built and
#: validated the (data-free) spec: validating thousands of inline rows costs seconds, the rows need none.
DATASET = "rows"


def _data() -> alt.NamedData:
    return alt.NamedData(name=DATASET)


def _spec(chart: alt.TopLevelMixin, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The site's configured, validated spec of a chart built on _data(), with `rows` as its dataset."""
    if len(rows) > MAX_ROWS:
        raise ChartTooLarge(f"chart data has {len(rows)} rows (budget {MAX_ROWS}); aggregate in SQL first")
    spec = charts._spec(chart)
    spec["datasets"] = {DATASET: [{k: jsonable(v) for k, v in r.items()} for r in rows]}
    return spec


def generation_gap(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Figure 2: Δ accuracy (pp) per family and generation step."""
    if not rows:
        return None
    data = [{**r, "pair": f"{r['family']}: {r['generation_from']} → {r['generation_to']}"} for r in rows]
    chart = alt.Chart(_data()).mark_bar().encode(
        y=alt.Y("pair:N", title=None, sort=None),
        x=alt.X("delta_pp:Q", title="Δ accuracy, newer − older generation (pp)"),
        color=alt.condition("datum.delta_pp >= 0", alt.value("#2458a6"), alt.value("#b3261e")),
        tooltip=["family:N", "generation_from:N", "generation_to:N", "models_from:N", "models_to:N",
                 alt.Tooltip("delta_pp:Q", format="+.1f")],
    ).properties(width=420, height=max(60, 22 * len(data)), title="Within-family generation gap")
    return _spec(chart, data)


def difficulty_histogram(rows: list[dict[str, Any]], by: str, n_models: int) -> dict[str, Any] | None:
    """Figure 4: items by how many panel models answered them correctly, one colour per group."""
    data = [r for r in rows if r["by"] == by]
    if not data:
        return None
    chart = alt.Chart(_data()).mark_bar().encode(
        x=alt.X("n_correct:O", title=f"models correct (of {n_models})", sort=list(range(n_models + 1)),
                scale=alt.Scale(domain=list(range(n_models + 1)))),
        y=alt.Y("n_items:Q", title="items", stack="zero"),
        color=alt.Color("group:N", title=by.replace("_", " ")),
        tooltip=["group:N", "n_correct:O", "n_items:Q"],
    ).properties(width=520, height=200, title=f"Item difficulty by {by.replace('_', ' ')}")
    return _spec(chart, data)


def recall_accuracy(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Figure 5: accuracy against paper recall, one point per model, with y = x (the site's scatter)."""
    data = [{"run": r["model"], "paper_recall": r["paper_recall"], "accuracy": r["accuracy"], "tier": r["tier"],
             "kind": "simulated" if r.get("is_simulated") else "real"}
            for r in rows if r.get("paper_recall") is not None and r.get("accuracy") is not None]
    if not data:
        return None
    return charts.scatter(data, x="paper_recall", y="accuracy", x_title="paper recall", y_title="accuracy",
                          color="tier", title="Accuracy vs paper recall (dashed: y = x)")


def transition_matrices(rows: list[dict[str, Any]], models: Sequence[str], tools: Sequence[str]) -> dict[str, Any] | None:
    """Figure 6: every model's P(next | prev) as a tools x tools heatmap, small multiples."""
    data = [r for r in rows if r["prev_tool"] in tools and r["next_tool"] in tools]
    if not data:
        return None
    short = {t: t.replace("get_", "").replace("_section", "").replace("_papers", "").replace("_answer", "")
             for t in tools}
    data = [{"model": r["model"], "prev": short[r["prev_tool"]], "next": short[r["next_tool"]],
             "p_next": r["p_next"], "n": r["n"]} for r in data]
    order = [short[t] for t in tools]
    chart = alt.Chart(_data()).mark_rect().encode(
        x=alt.X("next:N", sort=order, title="next", axis=alt.Axis(labelAngle=-90), scale=alt.Scale(domain=order)),
        y=alt.Y("prev:N", sort=order, title="previous", scale=alt.Scale(domain=order)),
        color=alt.Color("p_next:Q", title="P(next | prev)", scale=alt.Scale(domain=[0, 1], scheme="blues")),
        tooltip=["model:N", "prev:N", "next:N", alt.Tooltip("p_next:Q", format=".2f"), "n:Q"],
    ).properties(width=140, height=140).facet(
        facet=alt.Facet("model:N", sort=list(models), title=None, header=alt.Header(labelLimit=200)), columns=4,
    ).resolve_axis(
        x="independent",  # each matrix labels its own columns: a wrapped facet's shared axis sits under empty cells
    ).properties(title="Tool transition matrices (tools in the paper's order)")
    return _spec(chart, data)


def budget_curves(rows: list[dict[str, Any]], models: Sequence[str]) -> dict[str, Any] | None:
    """Accuracy if runs had been stopped at a lower cap, per axis, one line per model."""
    if not rows:
        return None
    chart = alt.Chart(_data()).mark_line(point=False).encode(
        x=alt.X("b:Q", title="cap b"),
        y=alt.Y("accuracy:Q", title="accuracy", axis=alt.Axis(format=".0%")),
        color=alt.Color("model:N", sort=list(models), legend=alt.Legend(orient="bottom", columns=4)),
        tooltip=["model:N", "axis:N", "b:Q", alt.Tooltip("accuracy:Q", format=".3f")],
    ).properties(width=250, height=220).facet(
        column=alt.Column("axis:N", sort=["points", "turns", "tokens"], title=None),
    ).resolve_scale(x="independent").properties(title="Accuracy at lower caps")
    return _spec(chart, rows)


def discrimination_histogram(values: Sequence[float | None]) -> dict[str, Any] | None:
    """Reliability: corrected item-total correlations in 0.1-wide bins."""
    xs = [v for v in values if v is not None]
    if not xs:
        return None
    bins: dict[int, int] = {}
    for v in xs:
        b = min(9, max(-10, int((v + 1) * 10 // 1) - 10))
        bins[b] = bins.get(b, 0) + 1
    data = [{"bin_start": b / 10, "bin_end": (b + 1) / 10, "n": n} for b, n in sorted(bins.items())]
    chart = alt.Chart(_data()).mark_bar(binSpacing=1).encode(
        x=alt.X("bin_start:Q", bin="binned", title="corrected item-total correlation"), x2="bin_end:Q",
        y=alt.Y("n:Q", title="items"), tooltip=["bin_start:Q", "bin_end:Q", "n:Q"],
    ).properties(width=360, height=180, title="Item discrimination")
    return _spec(chart, data)


def condition_accuracy(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Tables 4 and 18 as a chart: each ablated model's accuracy per condition, with the 25% chance line."""
    acc: dict[tuple[str, str], Any] = {}
    for r in rows:
        acc[(r["model"], r["condition_from"])] = r["accuracy_from"]
        acc[(r["model"], r["condition_to"])] = r["accuracy_to"]
    data = [{"model": m, "condition": c, "accuracy": a} for (m, c), a in sorted(acc.items())]
    if not data:
        return None
    order = ["closed_book", "no_search", "full"]
    bars = alt.Chart().mark_bar().encode(
        y=alt.Y("model:N", title=None),
        yOffset=alt.YOffset("condition:N", sort=order),
        x=alt.X("accuracy:Q", title="accuracy", axis=alt.Axis(format=".0%"), scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("condition:N", sort=order, legend=alt.Legend(orient="top", title=None)),
        tooltip=["model:N", "condition:N", alt.Tooltip("accuracy:Q", format=".3f")],
    )
    chance = alt.Chart(alt.Data(values=[{"chance": 0.25}])).mark_rule(strokeDash=[5, 4], color="#555").encode(
        x="chance:Q")
    chart = alt.layer(alt.layer(bars, data=_data()), chance).properties(
        width=460, height=max(80, 16 * len(data)), title="Accuracy per condition (dashed: chance, 25%)")
    return _spec(chart, data)
