"""Altair chart specs for the reports, built from rows that DuckDB has already aggregated.

Every function takes plain row dicts and returns a Vega-Lite spec dict (``chart.to_dict()``).
Data is embedded inline; the reports keep each chart to a few hundred rows (MAX_ROWS guards it).
"""

from __future__ import annotations

import math
from functools import lru_cache
from collections.abc import Iterable, Sequence
from typing import Any

import altair as alt

from .values import jsonable

#: Hard budget of inline rows per chart; aggregated report data never comes close.
MAX_ROWS = 2000

#: Fixed sizes for the charts that cannot take the page's width (facets, the labelled scatter).
WIDTH = 320
HEIGHT = 200
SCATTER_WIDTH = 600
SCATTER_HEIGHT = 420
#: Smallest font of any chart text (axis labels, legends, marks), in px.
FONT = 12
LABEL_FONT = 11
#: Colour of interval whiskers: dark, so they stay visible on every run colour.
WHISKER = "#1b1b1b"
#: Height of one bar in horizontal grouped bar charts, in px.
BAR = 15


class ChartTooLarge(ValueError):
    """A chart was handed more rows than MAX_ROWS: aggregate in SQL first."""


def _values(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    values = [{k: jsonable(v) for k, v in r.items()} for r in rows]
    if len(values) > MAX_ROWS:
        raise ChartTooLarge(f"chart data has {len(values)} rows (budget {MAX_ROWS}); aggregate in SQL first")
    return values


def _data(rows: Iterable[dict[str, Any]]) -> alt.Data:
    return alt.Data(values=_values(rows))


def _spec(chart: alt.TopLevelMixin, *, container: bool = False) -> dict[str, Any]:
    """Configure fonts (never below 11 px) and, for single and layered views, the page's content width."""
    chart = (
        chart.configure_view(stroke=None)
        .configure_axis(labelLimit=260, labelFontSize=FONT, titleFontSize=FONT, titleFontWeight="normal")
        .configure_legend(labelFontSize=FONT, titleFontSize=FONT, labelLimit=420, symbolSize=90)
        .configure_title(fontSize=14, anchor="start", offset=8)
        .configure_header(labelFontSize=FONT, titleFontSize=FONT)
        .configure_text(fontSize=LABEL_FONT)
    )
    spec = chart.to_dict(validate=False)  # the specs are fixed by this module; validation costs ~10 ms each
    if container:
        spec["width"] = "container"
        spec["autosize"] = {"type": "fit-x", "contains": "padding"}
    return spec


def _run_color(runs: Sequence[str], orient: str = "top") -> alt.Color:
    return alt.Color("run:N", sort=list(runs), title=None, scale=alt.Scale(domain=list(runs)), legend=alt.Legend(orient=orient, direction="horizontal"
                                                                             if orient in ("top", "bottom") else "vertical"))


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
    """Horizontal bars of `value` per `category`, one bar per run, optional Wilson whiskers.

    Categories sit on the y axis (long names stay horizontal and readable); the chart takes the page's
    width. A `facet` field is folded into the category ("ST: read"), keeping one view."""
    fmt = ".0%" if percent else ",.2f"
    order = list(category_order or [])
    if facet:
        groups = list(facet_order or sorted({r[facet] for r in rows}))
        cats = []
        for g in groups:
            for c in order or sorted({r[category] for r in rows if r[facet] == g}):
                if any(r[facet] == g and r[category] == c for r in rows):
                    cats.append(f"{g}: {c}")
        rows = [{**r, category: f"{r[facet]}: {r[category]}"} for r in rows]
        order = cats
    n_cat = len(order) or len({r[category] for r in rows})
    y = alt.Y(f"{category}:N", sort=order or None, title=None,
              scale=alt.Scale(paddingInner=0.25, paddingOuter=0.1))
    x = alt.X(f"{value}:Q", title=value_title or value, axis=alt.Axis(format=fmt, tickCount=6))
    tooltip = [alt.Tooltip("run:N"), alt.Tooltip(f"{category}:N"), alt.Tooltip(f"{value}:Q", format=".3f")]
    if lo and hi:
        tooltip += [alt.Tooltip(f"{lo}:Q", format=".3f", title="95% low"), alt.Tooltip(f"{hi}:Q", format=".3f", title="95% high")]
    if "n" in (rows[0] if rows else {}):
        tooltip.append(alt.Tooltip("n:Q"))
    base = alt.Chart().encode(y=y, yOffset=alt.YOffset("run:N", sort=list(runs), scale=alt.Scale(domain=list(runs))))
    layers: list[alt.Chart] = [base.mark_bar().encode(x=x, color=_run_color(runs), tooltip=tooltip)]
    if lo and hi:
        layers.append(base.mark_rule(strokeWidth=1.6).encode(x=alt.X(f"{lo}:Q"), x2=alt.X2(f"{hi}:Q"),
                                                             color=alt.value(WHISKER), tooltip=tooltip))
        layers.append(base.mark_tick(thickness=1.6, size=BAR * 0.7).encode(x=alt.X(f"{hi}:Q"), color=alt.value(WHISKER)))
        layers.append(base.mark_tick(thickness=1.6, size=BAR * 0.7).encode(x=alt.X(f"{lo}:Q"), color=alt.value(WHISKER)))
    height = max(80, n_cat * (max(1, len(runs)) * BAR + 10))
    chart = alt.layer(*layers, data=_data(rows)).properties(height=height, title=title)
    return _spec(chart, container=True)


def heatmaps(rows: list[dict[str, Any]], *, runs: Sequence[str], tools: Sequence[str], title: str) -> dict[str, Any]:
    """P(next | prev) as a tool x tool heatmap per run, side by side."""
    rect = alt.Chart().mark_rect().encode(
        x=alt.X("next_tool:N", sort=list(tools), title="next tool", axis=alt.Axis(labelAngle=-90)),
        y=alt.Y("prev_tool:N", sort=list(tools), title="previous tool"),
        color=alt.Color("p_next:Q", title="P(next | prev)", scale=alt.Scale(domain=[0, 1], scheme="blues")),
        tooltip=[alt.Tooltip("prev_tool:N"), alt.Tooltip("next_tool:N"), alt.Tooltip("p_next:Q", format=".2f"),
                 alt.Tooltip("n:Q")],
    )
    text = alt.Chart().mark_text(fontSize=LABEL_FONT).transform_filter("datum.p_next >= 0.005").encode(
        x=alt.X("next_tool:N", sort=list(tools)),
        y=alt.Y("prev_tool:N", sort=list(tools)),
        text=alt.Text("p_next:Q", format=".2f"),
        color=alt.condition("datum.p_next > 0.5", alt.value("white"), alt.value("black")),
    )
    chart = (
        alt.layer(rect, text, data=_data(rows))
        .properties(width=300, height=300)
        .facet(column=alt.Column("run:N", sort=list(runs), title=None,
                                 header=alt.Header(labelLimit=300, labelFontWeight="bold")))
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
        .properties(height=HEIGHT, title=title)
    )
    return _spec(chart, container=True)


def _domain(values: Sequence[float], step: float = 0.05) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    lo = max(0.0, math.floor(lo / step - 1e-9) * step - step / 2)
    hi = min(1.0, math.ceil(hi / step + 1e-9) * step + step / 2)
    if hi - lo < 4 * step:
        mid = (lo + hi) / 2
        lo, hi = max(0.0, mid - 2 * step), min(1.0, mid + 2 * step)
    return round(lo, 4), round(hi, 4)


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float], gap: float = 2) -> bool:
    return not (a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1] or b[3] + gap <= a[1])


def place_labels(
    points: Sequence[tuple[float, float, str]], notable: Sequence[int], *, width: float, height: float,
    domain: tuple[float, float], font: float = LABEL_FONT, marker: float = 5,
) -> dict[int, str]:
    """Greedy label placement in pixel space: index -> side ('r', 'l', 't', 'b') for the notable points
    whose label fits inside the plot without touching another label or any point; the rest stay
    unlabelled (their names are in the tooltips)."""
    lo, hi = domain

    def px(x: float, y: float) -> tuple[float, float]:
        return (x - lo) / (hi - lo) * width, height - (y - lo) / (hi - lo) * height

    char_w, text_h = font * 0.62, font * 1.25
    pts = [px(x, y) for x, y, _ in points]
    obstacles = [(cx - marker, cy - marker, cx + marker, cy + marker) for cx, cy in pts]
    placed: list[tuple[float, float, float, float]] = []
    out: dict[int, str] = {}
    for i in notable:
        cx, cy = pts[i]
        w = len(points[i][2]) * char_w
        boxes = {
            "r": (cx + 7, cy - text_h / 2, cx + 7 + w, cy + text_h / 2),
            "l": (cx - 7 - w, cy - text_h / 2, cx - 7, cy + text_h / 2),
            "t": (cx - w / 2, cy - 8 - text_h, cx + w / 2, cy - 8),
            "b": (cx - w / 2, cy + 8, cx + w / 2, cy + 8 + text_h),
        }
        for side, box in boxes.items():
            inside = box[0] >= 0 and box[1] >= 0 and box[2] <= width and box[3] <= height
            if inside and not any(_overlaps(box, o, 0) for j, o in enumerate(obstacles) if j != i) \
                    and not any(_overlaps(box, o) for o in placed):
                placed.append(box)
                out[i] = side
                break
    return out


def notable_points(xs: Sequence[float], ys: Sequence[float], k: int = 3) -> list[int]:
    """Indices worth a label, most notable first: best and worst y, extremes of x, and the points
    farthest above and below the diagonal y = x."""
    idx = list(range(len(xs)))
    order: list[int] = []
    for seq in (sorted(idx, key=lambda i: -ys[i])[:k], sorted(idx, key=lambda i: ys[i])[:2],
                sorted(idx, key=lambda i: -(ys[i] - xs[i]))[:2], sorted(idx, key=lambda i: ys[i] - xs[i])[:2],
                sorted(idx, key=lambda i: -xs[i])[:1], sorted(idx, key=lambda i: xs[i])[:1]):
        order += [i for i in seq if i not in order]
    return order


def scatter(
    rows: list[dict[str, Any]], *, x: str, y: str, x_title: str, y_title: str, color: str, title: str
) -> dict[str, Any]:
    """One point per run on equal axes with the diagonal y = x; notable points labelled without
    overlap (every point's name, values and tier are in its tooltip); legends outside the plot."""
    xs = [float(r[x]) for r in rows]
    ys = [float(r[y]) for r in rows]
    domain = _domain(xs + ys)
    sides = place_labels([(a, b, str(r["run"])) for a, b, r in zip(xs, ys, rows)], notable_points(xs, ys),
                         width=SCATTER_WIDTH, height=SCATTER_HEIGHT, domain=domain)
    data = [{**r, "label_side": sides.get(i, "")} for i, r in enumerate(rows)]
    scale = alt.Scale(domain=list(domain), nice=False, zero=False)
    xenc = alt.X(f"{x}:Q", title=x_title, axis=alt.Axis(format=".0%"), scale=scale)
    yenc = alt.Y(f"{y}:Q", title=y_title, axis=alt.Axis(format=".0%"), scale=scale)
    diagonal = alt.Chart(alt.Data(values=[{"d": domain[0]}, {"d": domain[1]}])).mark_line(
        color="#8a96a3", strokeDash=[6, 4], strokeWidth=1.2
    ).encode(x=alt.X("d:Q", scale=scale), y=alt.Y("d:Q", scale=scale))
    base = alt.Chart(_data(data)).encode(x=xenc, y=yenc)
    points = base.mark_point(size=80, filled=True, opacity=0.9).encode(
        color=alt.Color(f"{color}:N", title=color, legend=alt.Legend(orient="right")),
        shape=alt.Shape("kind:N", title="backend", legend=alt.Legend(orient="right")),
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip(f"{x}:Q", format=".1%", title=x_title),
                 alt.Tooltip(f"{y}:Q", format=".1%", title=y_title), alt.Tooltip(f"{color}:N"),
                 alt.Tooltip("kind:N", title="backend")],
    )
    text_layers = []
    for side, kw in (("r", {"align": "left", "dx": 7}), ("l", {"align": "right", "dx": -7}),
                     ("t", {"align": "center", "dy": -8, "baseline": "bottom"}),
                     ("b", {"align": "center", "dy": 8, "baseline": "top"})):
        kw.setdefault("baseline", "middle")
        text_layers.append(base.transform_filter(f"datum.label_side == '{side}'").mark_text(
            fontSize=LABEL_FONT, color="#333", **kw).encode(text="run:N"))
    chart = alt.layer(diagonal, points, *text_layers).properties(
        width=SCATTER_WIDTH, height=SCATTER_HEIGHT, title=title)
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
    chart = alt.Chart(_data(rows)).mark_bar().encode(**enc).properties(height=HEIGHT, title=title)
    return _spec(chart, container=True)


def points_with_ci(
    rows: list[dict[str, Any]], *, category: str, value: str, lo: str, hi: str, title: str, color: str | None = None
) -> dict[str, Any]:
    """Dots with interval whiskers, e.g. accuracy per replicate with Wilson intervals.

    The axis spans only the intervals (not 0-100 %), so replicates a point apart are visibly apart;
    each dot is labelled with its value."""
    lows = [float(r[lo]) for r in rows if r.get(lo) is not None]
    highs = [float(r[hi]) for r in rows if r.get(hi) is not None]
    span = (max(highs) - min(lows)) if lows and highs else 0.1
    pad = max(0.005, span * 0.08)
    domain = [max(0.0, min(lows) - pad), min(1.0, max(highs) + pad)] if lows and highs else [0.0, 1.0]
    scale = alt.Scale(domain=domain, nice=False, zero=False)
    base = alt.Chart().encode(
        y=alt.Y(f"{category}:N", title=None, sort=None, scale=alt.Scale(paddingInner=0.3)),
    )
    tooltip = [alt.Tooltip(f"{category}:N"), alt.Tooltip(f"{value}:Q", format=".3f"),
               alt.Tooltip(f"{lo}:Q", format=".3f", title="95% low"), alt.Tooltip(f"{hi}:Q", format=".3f", title="95% high")]
    dot_color = alt.Color(f"{color}:N") if color else alt.value("#2458a6")
    chart = alt.layer(
        base.mark_rule(strokeWidth=2, color="#5a6570").encode(
            x=alt.X(f"{lo}:Q", title="accuracy (Wilson 95%)", axis=alt.Axis(format=".1%", tickCount=6), scale=scale),
            x2=alt.X2(f"{hi}:Q")),
        base.mark_point(filled=True, size=90, opacity=1).encode(x=alt.X(f"{value}:Q", scale=scale), color=dot_color,
                                                                tooltip=tooltip),
        base.mark_text(dy=-12, fontSize=LABEL_FONT).encode(x=alt.X(f"{value}:Q", scale=scale),
                                                           text=alt.Text(f"{value}:Q", format=".1%")),
        data=_data(rows),
    ).properties(height=max(90, 46 * len(rows)), title=title)
    return _spec(chart, container=True)


def step_lines(
    rows: list[dict[str, Any]], *, x: str, y: str, runs: Sequence[str], x_title: str, y_title: str, title: str
) -> dict[str, Any]:
    """Cumulative quantities per run as step lines with points (tooltips carry the tool).

    Item pages draw one per item, hundreds per report, and building a spec through Altair costs
    about a tenth of a second; so the spec is built once per (runs, titles) without data and each
    call gets a copy with its rows inlined."""
    spec = dict(_step_lines_template(x, y, tuple(runs), x_title, y_title, title))  # shared, never mutated
    spec["data"] = {"values": _values(rows)}
    return spec


@lru_cache(maxsize=64)
def _step_lines_template(x: str, y: str, runs: tuple[str, ...], x_title: str, y_title: str,
                         title: str) -> dict[str, Any]:
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
        data=alt.Data(values=[{x: 0, y: 0, "run": runs[0] if runs else "", "turn": 0, "tool": ""}]),
    ).properties(height=HEIGHT, title=title)
    spec = _spec(chart, container=True)
    spec.pop("datasets", None)
    spec.pop("data", None)
    return spec


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
        .properties(height=HEIGHT, title=title)
    )
    return _spec(chart, container=True)
