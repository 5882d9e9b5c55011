"""Altair chart specs for the reports, built from rows that DuckDB has already aggregated.

Every function takes plain row dicts and returns a Vega-Lite spec dict (``chart.to_dict()``).
Data is embedded inline; the reports keep each chart to a few hundred rows (MAX_ROWS guards it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import altair as alt

from .values import jsonable

#: Hard budget of inline rows per chart; aggregated report data never comes close.
MAX_ROWS = 2000

WIDTH = 320
HEIGHT = 200


class ChartTooLarge(ValueError):
    """A chart was handed more rows than MAX_ROWS: aggregate in SQL first."""


def _data(rows: Iterable[dict[str, Any]]) -> alt.Data:
    values = [{k: jsonable(v) for k, v in r.items()} for r in rows]
    if len(values) > MAX_ROWS:
        raise ChartTooLarge(f"chart data has {len(values)} rows (budget {MAX_ROWS}); aggregate in SQL first")
    return alt.Data(values=values)


def _spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    return chart.configure_view(stroke=None).configure_axis(labelLimit=220).to_dict()


def _run_color(runs: Sequence[str]) -> alt.Color:
    return alt.Color("run:N", sort=list(runs), title="run", legend=alt.Legend(orient="bottom", labelLimit=400))


def grouped_bars(
    rows: list[dict[str, Any]],
    *,
    category: str,
    value: str,
    runs: Sequence[str],
    title: str,
    category_order: Sequence[str] | None = None,
    value_title: str | None = None,
    percent: bool = True,
    facet: str | None = None,
    facet_order: Sequence[str] | None = None,
    lo: str | None = None,
    hi: str | None = None,
) -> dict[str, Any]:
    """Bars of `value` per `category`, one bar per run side by side, optional CI rules and facet."""
    fmt = ".0%" if percent else ",.2f"
    x = alt.X(f"{category}:N", sort=list(category_order) if category_order else None, title=None,
              axis=alt.Axis(labelAngle=-30))
    y = alt.Y(f"{value}:Q", title=value_title or value, axis=alt.Axis(format=fmt))
    tooltip = [alt.Tooltip("run:N"), alt.Tooltip(f"{category}:N"), alt.Tooltip(f"{value}:Q", format=".3f")]
    if "n" in (rows[0] if rows else {}):
        tooltip.append(alt.Tooltip("n:Q"))
    base = alt.Chart().encode(x=x, xOffset=alt.XOffset("run:N", sort=list(runs)), color=_run_color(runs))
    layers: list[alt.Chart] = [base.mark_bar().encode(y=y, tooltip=tooltip)]
    if lo and hi:
        layers.append(base.mark_rule(color="black").encode(y=alt.Y(f"{lo}:Q"), y2=alt.Y2(f"{hi}:Q")))
    width = max(WIDTH, 34 * max(1, len(category_order or [])) * max(1, len(runs)) // 2)
    chart = alt.layer(*layers, data=_data(rows)).properties(width=min(width, 760), height=HEIGHT)
    if facet:
        chart = chart.properties(width=min(width, 380)).facet(
            column=alt.Column(f"{facet}:N", title=None, sort=list(facet_order) if facet_order else "ascending")
        ).resolve_scale(x="independent", xOffset="independent")
    return _spec(chart.properties(title=title))


def heatmaps(rows: list[dict[str, Any]], *, runs: Sequence[str], tools: Sequence[str], title: str) -> dict[str, Any]:
    """P(next | prev) as a tool x tool heatmap per run, side by side."""
    rect = alt.Chart().mark_rect().encode(
        x=alt.X("next_tool:N", sort=list(tools), title="next tool", axis=alt.Axis(labelAngle=-40)),
        y=alt.Y("prev_tool:N", sort=list(tools), title="previous tool"),
        color=alt.Color("p_next:Q", title="P(next | prev)", scale=alt.Scale(domain=[0, 1], scheme="blues")),
        tooltip=[alt.Tooltip("prev_tool:N"), alt.Tooltip("next_tool:N"), alt.Tooltip("p_next:Q", format=".2f"),
                 alt.Tooltip("n:Q")],
    )
    text = alt.Chart().mark_text(fontSize=9).encode(
        x=alt.X("next_tool:N", sort=list(tools)),
        y=alt.Y("prev_tool:N", sort=list(tools)),
        text=alt.Text("p_next:Q", format=".2f"),
        color=alt.condition("datum.p_next > 0.5", alt.value("white"), alt.value("black")),
    )
    chart = (
        alt.layer(rect, text, data=_data(rows))
        .properties(width=260, height=260)
        .facet(column=alt.Column("run:N", sort=list(runs), title=None, header=alt.Header(labelLimit=400)))
        .properties(title=title)
    )
    return _spec(chart)


def histogram(rows: list[dict[str, Any]], *, runs: Sequence[str], title: str, x_title: str) -> dict[str, Any]:
    """Pre-binned shares (bin_start, bin_end, share per run) as overlaid translucent bars."""
    chart = (
        alt.Chart(_data(rows))
        .mark_bar(opacity=0.55, binSpacing=0)
        .encode(
            x=alt.X("bin_start:Q", title=x_title, bin="binned"),
            x2="bin_end:Q",
            y=alt.Y("share:Q", title="share of items", axis=alt.Axis(format=".0%"), stack=None),
            color=_run_color(runs),
            tooltip=[alt.Tooltip("run:N"), alt.Tooltip("bin_start:Q", title="from"),
                     alt.Tooltip("bin_end:Q", title="to"), alt.Tooltip("n:Q"),
                     alt.Tooltip("share:Q", format=".1%")],
        )
        .properties(width=WIDTH, height=HEIGHT - 40, title=title)
    )
    return _spec(chart)


def scatter(
    rows: list[dict[str, Any]], *, x: str, y: str, x_title: str, y_title: str, color: str, title: str
) -> dict[str, Any]:
    """One point per run (label, tier, simulated flag in the tooltip), labelled."""
    base = alt.Chart().encode(
        x=alt.X(f"{x}:Q", title=x_title, axis=alt.Axis(format=".0%"), scale=alt.Scale(zero=False)),
        y=alt.Y(f"{y}:Q", title=y_title, axis=alt.Axis(format=".0%"), scale=alt.Scale(zero=False)),
    )
    points = base.mark_point(size=70, filled=True).encode(
        color=alt.Color(f"{color}:N", title=color),
        shape=alt.Shape("kind:N", title="backend"),
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip(f"{x}:Q", format=".3f"), alt.Tooltip(f"{y}:Q", format=".3f"),
                 alt.Tooltip(f"{color}:N")],
    )
    labels = base.mark_text(align="left", dx=6, fontSize=9).encode(text="run:N")
    chart = alt.layer(points, labels, data=_data(rows)).properties(width=560, height=360, title=title)
    return _spec(chart)


def simple_bars(
    rows: list[dict[str, Any]], *, x: str, y: str, x_title: str, y_title: str, title: str,
    x_type: str = "O", color: str | None = None,
) -> dict[str, Any]:
    """A plain bar chart (histograms computed upstream, per-replicate values, ...)."""
    enc: dict[str, Any] = {
        "x": alt.X(f"{x}:{x_type}", title=x_title, axis=alt.Axis(labelAngle=0)),
        "y": alt.Y(f"{y}:Q", title=y_title),
        "tooltip": [alt.Tooltip(f"{x}:{x_type}"), alt.Tooltip(f"{y}:Q")],
    }
    if color:
        enc["color"] = alt.Color(f"{color}:N")
        enc["xOffset"] = alt.XOffset(f"{color}:N")
    chart = alt.Chart(_data(rows)).mark_bar().encode(**enc).properties(width=WIDTH, height=HEIGHT, title=title)
    return _spec(chart)


def points_with_ci(
    rows: list[dict[str, Any]], *, category: str, value: str, lo: str, hi: str, title: str, color: str | None = None
) -> dict[str, Any]:
    """Dots with interval rules, e.g. accuracy per replicate with Wilson intervals."""
    base = alt.Chart().encode(
        y=alt.Y(f"{category}:N", title=None),
        color=alt.Color(f"{color}:N") if color else alt.value("#1f77b4"),
    )
    chart = alt.layer(
        base.mark_rule().encode(x=alt.X(f"{lo}:Q", title="accuracy", axis=alt.Axis(format=".0%")),
                                x2=alt.X2(f"{hi}:Q")),
        base.mark_point(filled=True, size=60).encode(
            x=alt.X(f"{value}:Q"),
            tooltip=[alt.Tooltip(f"{category}:N"), alt.Tooltip(f"{value}:Q", format=".3f"),
                     alt.Tooltip(f"{lo}:Q", format=".3f"), alt.Tooltip(f"{hi}:Q", format=".3f")],
        ),
        data=_data(rows),
    ).properties(width=WIDTH + 80, title=title)
    return _spec(chart)


def step_lines(
    rows: list[dict[str, Any]], *, x: str, y: str, runs: Sequence[str], x_title: str, y_title: str, title: str
) -> dict[str, Any]:
    """Cumulative quantities per run as step lines with points (tooltips carry the tool)."""
    base = alt.Chart().encode(
        x=alt.X(f"{x}:Q", title=x_title, axis=alt.Axis(tickMinStep=1)),
        y=alt.Y(f"{y}:Q", title=y_title),
        color=_run_color(runs),
    )
    chart = alt.layer(
        base.mark_line(interpolate="step-after"),
        base.mark_point(filled=True, size=30).encode(
            tooltip=[alt.Tooltip("run:N"), alt.Tooltip(f"{x}:Q"), alt.Tooltip("turn:Q"), alt.Tooltip("tool:N"),
                     alt.Tooltip(f"{y}:Q")]
        ),
        data=_data(rows),
    ).properties(width=WIDTH + 120, height=HEIGHT - 40, title=title)
    return _spec(chart)


def binned_bars(rows: list[dict[str, Any]], *, title: str, x_title: str, y_title: str = "items") -> dict[str, Any]:
    """A histogram from pre-binned rows (bin_start, bin_end, n) on a quantitative axis."""
    chart = (
        alt.Chart(_data(rows))
        .mark_bar(binSpacing=1)
        .encode(
            x=alt.X("bin_start:Q", bin="binned", title=x_title),
            x2="bin_end:Q",
            y=alt.Y("n:Q", title=y_title),
            tooltip=[alt.Tooltip("bin_start:Q", title="from"), alt.Tooltip("bin_end:Q", title="to"),
                     alt.Tooltip("n:Q", title=y_title)],
        )
        .properties(width=WIDTH, height=HEIGHT, title=title)
    )
    return _spec(chart)
