"""Vega-Lite specs of the paper's figures, from rows the marts already aggregated (Altair, offline)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import altair as alt

from .. import charts
from ..charts import MAX_ROWS, ChartTooLarge
from ..values import jsonable
from .layouts import TIER_POINT_COLOURS, bucket, bucket_ranges, tier_label

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
    """Figure 2: per family and generation step, the older generation's accuracy (light bar) and the newer
    one's (dark bar), with an arrow from the one to the other annotated with the within-family Δ in pp."""
    if not rows:
        return None
    data: list[dict[str, Any]] = []
    for r in rows:
        pair = f"{r['family']}: {r['generation_from']} → {r['generation_to']}"
        data.append({"kind": "bar", "pair": pair, "which": "older", "accuracy": r["accuracy_from"],
                     "label": f"gen {r['generation_from']} ({r['models_from']})"})
        data.append({"kind": "bar", "pair": pair, "which": "newer", "accuracy": r["accuracy_to"],
                     "label": f"gen {r['generation_to']} ({r['models_to']})"})
        up = float(r["accuracy_to"]) >= float(r["accuracy_from"])
        data.append({"kind": "arrow", "pair": pair, "start": r["accuracy_from"], "end": r["accuracy_to"],
                     "head": "triangle-right" if up else "triangle-left",
                     "text_x": max(float(r["accuracy_to"]), float(r["accuracy_from"])),
                     "delta": f"{float(r['delta_pp']):+.1f} pp"})
    y = alt.Y("pair:N", title=None, sort=None, axis=alt.Axis(labelLimit=260))
    scale = alt.Scale(domain=[0, 1])
    base = alt.Chart(_data())
    bars = base.transform_filter("datum.kind == 'bar'").mark_bar(height=14).encode(
        y=y, yOffset=alt.YOffset("which:N", sort=["older", "newer"]),
        x=alt.X("accuracy:Q", title="accuracy", axis=alt.Axis(format=".0%", tickCount=5), scale=scale),
        color=alt.Color("which:N", sort=["older", "newer"], title="generation",
                        scale=alt.Scale(domain=["older", "newer"], range=["#b9d4ee", "#1f4e8c"]),
                        legend=alt.Legend(orient="top")),
        tooltip=["pair:N", "label:N", alt.Tooltip("accuracy:Q", format=".1%")],
    )
    arrows = base.transform_filter("datum.kind == 'arrow'")
    shaft = arrows.mark_rule(color="#c0392b", strokeWidth=2).encode(
        y=y, x=alt.X("start:Q", scale=scale), x2="end:Q")
    head = arrows.mark_point(filled=True, size=70, color="#c0392b", opacity=1).encode(
        y=y, x=alt.X("end:Q", scale=scale), shape=alt.Shape("head:N", scale=None, legend=None))
    text = arrows.mark_text(align="left", dx=8, fontSize=11, fontWeight="bold", color="#c0392b").encode(
        y=y, x=alt.X("text_x:Q", scale=scale), text="delta:N")
    chart = alt.layer(bars, shaft, head, text).properties(
        width=460, height=max(70, 44 * len(rows)),
        title="Within-family generation gap (older light, newer dark; arrow: Δ accuracy)")
    return _spec(chart, data)


#: Figure 4's bucket colours (layouts.bucket): red, yellow, green as in the paper.
BUCKETS = (("low", "#c8443a"), ("mid", "#e9b73c"), ("high", "#3f9b4f"))
#: The consensus tiers in their own colours (panel b's labels): gold, silver (grey), bronze.
TIER_COLOURS = {"gold": "#a67c00", "silver": "#7a7a7a", "bronze": "#9c5b2e"}


def _bucket_scale(n_models: int) -> tuple[list[str], alt.Scale]:
    ranges = bucket_ranges(n_models)
    names = [f"{b} ({ranges[b]})" for b, _ in BUCKETS]
    return names, alt.Scale(domain=names, range=[c for _, c in BUCKETS])


def difficulty_shares(rows: list[dict[str, Any]], by: str, n_models: int, title: str,
                      order: Sequence[str] | None = None) -> dict[str, Any] | None:
    """Figure 4 (a), (b): per group, the share of its items in the low / mid / high bucket (stacked to 100%)."""
    names, scale = _bucket_scale(n_models)
    ranges = bucket_ranges(n_models)
    counts: dict[tuple[str, str], int] = {}
    totals: dict[str, int] = {}
    for r in rows:
        if r["by"] != by:
            continue
        b = bucket(int(r["n_correct"]), n_models)
        name = f"{b} ({ranges[b]})"
        counts[(r["group"], name)] = counts.get((r["group"], name), 0) + int(r["n_items"])
        totals[r["group"]] = totals.get(r["group"], 0) + int(r["n_items"])
    if not totals:
        return None
    groups = [g for g in (order or []) if g in totals] + sorted(set(totals) - set(order or []))
    data = [{"group": g, "bucket": name, "order": names.index(name), "n_items": counts.get((g, name), 0),
             "share": counts.get((g, name), 0) / totals[g], "total": totals[g]} for g in groups for name in names]
    label_colour: Any = "#333"
    if by == "consensus_tier":
        label_colour = {"condition": [{"test": f"datum.value == '{t}'", "value": c} for t, c in TIER_COLOURS.items()],
                        "value": "#333"}
    chart = alt.Chart(_data()).mark_bar().encode(
        y=alt.Y("group:N", title=None, sort=groups, axis=alt.Axis(labelColor=label_colour, labelFontWeight="bold")),
        x=alt.X("share:Q", title="share of items", axis=alt.Axis(format=".0%", tickCount=5), stack="normalize"),
        color=alt.Color("bucket:N", title="models correct", scale=scale, sort=names, legend=alt.Legend(orient="top")),
        order=alt.Order("order:Q"),
        tooltip=["group:N", "bucket:N", "n_items:Q", "total:Q", alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=460, height=max(60, 26 * len(groups)), title=title)
    return _spec(chart, data)


def difficulty_histogram(rows: list[dict[str, Any]], n_models: int) -> dict[str, Any] | None:
    """Figure 4 (c): items by how many panel models answered them correctly, bars coloured by bucket."""
    names, scale = _bucket_scale(n_models)
    ranges = bucket_ranges(n_models)
    data = [{**r, "bucket": f"{bucket(int(r['n_correct']), n_models)} "
                            f"({ranges[bucket(int(r['n_correct']), n_models)]})"}
            for r in rows if r["by"] == "all"]
    if not data:
        return None
    chart = alt.Chart(_data()).mark_bar().encode(
        x=alt.X("n_correct:O", title=f"models correct (of {n_models})", sort=list(range(n_models + 1)),
                scale=alt.Scale(domain=list(range(n_models + 1))), axis=alt.Axis(labelAngle=0)),
        y=alt.Y("n_items:Q", title="items"),
        color=alt.Color("bucket:N", title="models correct", scale=scale, sort=names, legend=alt.Legend(orient="top")),
        tooltip=["n_correct:O", "n_items:Q", "bucket:N"],
    ).properties(width=520, height=200, title="(c) Per-item coverage: how many models answered each item correctly")
    return _spec(chart, data)


SCATTER_W, SCATTER_H = 560, 420


def recall_accuracy(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Figure 5: accuracy against paper recall, one point per model coloured by tier, every point labelled
    where its label has room (labels never overlap; the subtitle names any point left without one), with the
    diagonal y = x."""
    data = [{"model": r["model"], "paper_recall": float(r["paper_recall"]), "accuracy": float(r["accuracy"]),
             "tier": r["tier"]} for r in rows if r.get("paper_recall") is not None and r.get("accuracy") is not None]
    if not data:
        return None
    vals = [d["paper_recall"] for d in data] + [d["accuracy"] for d in data]
    lo = max(0.0, math.floor(min(vals) * 10) / 10 - 0.05)
    hi = min(1.0, math.ceil(max(vals) * 10) / 10 + 0.05)
    domain = (lo, hi)
    labels, missing = charts.place_labels([(d["paper_recall"], d["accuracy"], d["model"]) for d in data],
                                          width=SCATTER_W, height=SCATTER_H, x_domain=domain, y_domain=domain)
    note = charts.scatter_note([data[i]["model"] for i in missing])
    data = [{**d, **({"label_x": labels[i].x, "label_y": labels[i].y, "align": labels[i].align,
                      "line": labels[i].line} if i in labels else {"align": "", "line": False})}
            for i, d in enumerate(data)]
    tiers = [t for t in TIER_POINT_COLOURS if any(d["tier"] == t for d in data)]
    tiers += sorted({d["tier"] for d in data} - set(tiers))
    data = [{**d, "tier": tier_label(d["tier"])} for d in data]
    colour = alt.Color("tier:N", title="tier", sort=[tier_label(t) for t in tiers], legend=alt.Legend(orient="top"),
                       scale=alt.Scale(domain=[tier_label(t) for t in tiers],
                                       range=[TIER_POINT_COLOURS.get(t, "#777777") for t in tiers]))
    scale = alt.Scale(domain=list(domain), nice=False, zero=False)
    x = alt.X("paper_recall:Q", title="paper recall", scale=scale, axis=alt.Axis(format=".0%"))
    y = alt.Y("accuracy:Q", title="accuracy", scale=scale, axis=alt.Axis(format=".0%"))
    diagonal = alt.Chart(alt.Data(values=[{"d": lo}, {"d": hi}])).mark_line(
        color="#8a96a3", strokeDash=[6, 4], strokeWidth=1.2).encode(x=alt.X("d:Q", scale=scale),
                                                                    y=alt.Y("d:Q", scale=scale))
    base = alt.Chart(_data())
    leaders = base.transform_filter("datum.line").mark_rule(color="#9aa5b1", strokeWidth=0.8).encode(
        x=x, y=y, x2="label_x:Q", y2="label_y:Q")
    points = base.mark_point(size=70, filled=True, opacity=0.95).encode(
        x=x, y=y, color=colour,
        tooltip=["model:N", "tier:N", alt.Tooltip("paper_recall:Q", format=".1%"),
                 alt.Tooltip("accuracy:Q", format=".1%")])
    texts = [base.transform_filter(f"datum.align == '{a}'").mark_text(align=a, baseline="middle", fontSize=11,
                                                                         color="#222").encode(
        x=alt.X("label_x:Q", scale=scale), y=alt.Y("label_y:Q", scale=scale), text="model:N")
        for a in ("left", "right", "center")]
    title = "Accuracy vs paper recall (dashed: y = x)"
    chart = alt.layer(diagonal, leaders, points, *texts).properties(
        width=SCATTER_W, height=SCATTER_H, title=alt.TitleParams(title, subtitle=note) if note else title)
    return _spec(chart, data)


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
    ).properties(title=alt.TitleParams(
        "Tool transition matrices (tools in the paper's order)",
        subtitle=["Each row is the previous tool and sums to 1; a blank cell is a transition the model never made.",
                  "submit ends the attempt, so its row is empty. Short names: paper_info = get_paper_info, "
                  "references = get_references,",
                  "lists = list_sections, search = search_papers, read = read_section, submit = submit_answer."]))
    return _spec(chart, data)


def budget_curves(rows: list[dict[str, Any]], models: Sequence[str]) -> dict[str, Any] | None:
    """Accuracy if runs had been stopped at a lower cap, per axis, one line per model."""
    if not rows:
        return None
    chart = alt.Chart(_data()).mark_line(point=False).encode(
        x=alt.X("b:Q", title="cap b (the run stopped at b)"),
        y=alt.Y("accuracy:Q", title="accuracy", axis=alt.Axis(format=".0%", tickCount=5),
                scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("model:N", sort=list(models), legend=alt.Legend(orient="bottom", columns=4)),
        tooltip=["model:N", "axis:N", "b:Q", alt.Tooltip("accuracy:Q", format=".3f")],
    ).properties(width=250, height=220).facet(
        column=alt.Column("axis:N", sort=["points", "turns", "tokens"], title=None, header=alt.Header(
            labelFontSize=12, labelExpr="{'points': 'cap on budget points', 'turns': 'cap on turns', "
                                       "'tokens': 'cap on tokens'}[datum.value] || datum.value")),
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


#: The tables' names of the three AgentHop conditions, with the condition id the runs carry.
CONDITION_NAMES = {"closed_book": "Zero-tool (closed_book)", "no_search": "No-search (no_search)",
                   "full": "Full-tool (full)"}


def condition_accuracy(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Tables 4 and 18 as a chart: each ablated model's accuracy per condition, with the 25% chance line."""
    acc: dict[tuple[str, str], Any] = {}
    for r in rows:  # the panel runs, like the tables (not the mean over replicates)
        acc[(r["model"], r["condition_from"])] = r["panel_accuracy_from"]
        acc[(r["model"], r["condition_to"])] = r["panel_accuracy_to"]
    names = CONDITION_NAMES
    data = [{"model": m, "condition": c, "setting": names.get(c, c), "accuracy": a}
            for (m, c), a in sorted(acc.items()) if a is not None]
    if not data:
        return None
    order = [names[c] for c in ("closed_book", "no_search", "full")]
    bars = alt.Chart().mark_bar().encode(
        y=alt.Y("model:N", title=None),
        yOffset=alt.YOffset("setting:N", sort=order),
        x=alt.X("accuracy:Q", title="accuracy", axis=alt.Axis(format=".0%", tickCount=5), scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("setting:N", sort=order, legend=alt.Legend(orient="top", title=None)),
        tooltip=["model:N", "condition:N", alt.Tooltip("accuracy:Q", format=".3f")],
    )
    chance = alt.Chart(alt.Data(values=[{"chance": 0.25}])).mark_rule(strokeDash=[5, 4], color="#555").encode(
        x="chance:Q")
    chart = alt.layer(alt.layer(bars, data=_data()), chance).properties(
        width=460, height=max(80, 16 * len(data)), title="Accuracy per condition (dashed: chance, 25%)")
    return _spec(chart, data)
