"""Altair chart specs for the reports, built from rows that DuckDB has already aggregated.

Every function takes plain row dicts and returns a Vega-Lite spec dict (``chart.to_dict()``).
Data is embedded inline; the reports keep each chart to a few hundred rows (MAX_ROWS guards it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


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
#: The Vega-Lite schema the specs are written for (identifies the version; never fetched).
SCHEMA = "https://vega.github.io/schema/vega-lite/v6.4.1.json"


class ChartTooLarge(ValueError):
    """A chart was handed more rows than MAX_ROWS: aggregate in SQL first."""


def _values(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    values = [{k: jsonable(v) for k, v in r.items()} for r in rows]
    if len(values) > MAX_ROWS:
        raise ChartTooLarge(f"chart data has {len(values)} rows (budget {MAX_ROWS}); aggregate in SQL first")
    return values


def _data(rows: Iterable[dict[str, Any]]) -> Any:
    import altair as alt

    return alt.Data(values=_values(rows))


def _spec(chart: Any, *, container: bool = False) -> dict[str, Any]:
    """Configure fonts (never below 11 px) and, for single and layered views, the page's content width."""
    chart = (
        chart.configure_view(stroke=None)
        .configure_axis(labelLimit=260, labelFontSize=FONT, titleFontSize=FONT, titleFontWeight="normal",
                        labelSeparation=6)  # with labelOverlap: no two tick labels closer than 6 px
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


def _run_color(runs: Sequence[str], orient: str = "top") -> Any:
    import altair as alt

    return alt.Color("run:N", sort=list(runs), title=None, scale=alt.Scale(domain=list(runs)), legend=alt.Legend(orient=orient, direction="horizontal"
                                                                             if orient in ("top", "bottom") else "vertical"))


def _config() -> dict[str, Any]:
    """The shared Vega-Lite config (fonts never below 11 px), as `_spec` sets it through Altair."""
    return {
        "view": {"continuousWidth": 300, "continuousHeight": 300, "stroke": None},
        # labelSeparation: a tick label closer than 6 px to its neighbour is left out (labelOverlap, on
        # by default for continuous axes), so no axis reads "220240"
        "axis": {"labelFontSize": FONT, "labelLimit": 260, "titleFontSize": FONT, "titleFontWeight": "normal",
                 "labelSeparation": 6},
        "header": {"labelFontSize": FONT, "titleFontSize": FONT},
        "legend": {"labelFontSize": FONT, "labelLimit": 420, "symbolSize": 90, "titleFontSize": FONT},
        "text": {"fontSize": LABEL_FONT},
        "title": {"anchor": "start", "fontSize": 14, "offset": 8},
    }


def _plain(layers: list[dict[str, Any]], rows: list[dict[str, Any]], *, title: str, height: int) -> dict[str, Any]:
    """A layered spec at the page's width, written as a dict: Altair costs ~0.1 s per chart to build
    and serialise, which the reports' most common charts do without."""
    return {"$schema": SCHEMA, "config": _config(), "data": {"values": _values(rows)}, "layer": layers,
            "height": height, "title": title, "width": "container",
            "autosize": {"type": "fit-x", "contains": "padding"}}


def _run_color_dict(runs: Sequence[str], columns: int = 0) -> dict[str, Any]:
    """Colour by run, the legend above the chart in one row (or in `columns` columns)."""
    legend: dict[str, Any] = {"orient": "top", "direction": "horizontal"}
    if columns:
        legend["columns"] = columns
    return {"field": "run", "type": "nominal", "sort": list(runs), "scale": {"domain": list(runs)}, "title": None,
            "legend": legend}


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
    width. A `facet` field is folded into the category ("ST: read"), keeping one view. Whiskers are
    dark rules with end ticks, visible on every run colour."""
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
    y = {"field": category, "type": "nominal", "title": None, "scale": {"paddingInner": 0.25, "paddingOuter": 0.1}}
    if order:
        y["sort"] = order
    y_off = {"field": "run", "type": "nominal", "sort": list(runs), "scale": {"domain": list(runs)}}
    tooltip = [{"field": "run", "type": "nominal"}, {"field": category, "type": "nominal"},
               {"field": value, "type": "quantitative", "format": ".3f"}]
    if lo and hi:
        tooltip += [{"field": lo, "type": "quantitative", "format": ".3f", "title": "95% low"},
                    {"field": hi, "type": "quantitative", "format": ".3f", "title": "95% high"}]
    if "n" in (rows[0] if rows else {}):
        tooltip.append({"field": "n", "type": "quantitative"})
    layers: list[dict[str, Any]] = [{"mark": {"type": "bar"}, "encoding": {
        "y": y, "yOffset": y_off, "color": _run_color_dict(runs), "tooltip": tooltip,
        "x": {"field": value, "type": "quantitative", "title": value_title or value,
              "axis": {"format": fmt, "tickCount": 6}}}}]
    if lo and hi:
        dark = {"value": WHISKER}
        layers.append({"mark": {"type": "rule", "strokeWidth": 1.6}, "encoding": {
            "y": y, "yOffset": y_off, "color": dark, "tooltip": tooltip,
            "x": {"field": lo, "type": "quantitative"}, "x2": {"field": hi}}})
        for end in (lo, hi):
            layers.append({"mark": {"type": "tick", "thickness": 1.6, "size": BAR * 0.7}, "encoding": {
                "y": y, "yOffset": y_off, "color": dark, "x": {"field": end, "type": "quantitative"}}})
    height = max(80, n_cat * (max(1, len(runs)) * BAR + 10))
    return _plain(layers, rows, title=title, height=height)


def heatmaps(rows: list[dict[str, Any]], *, runs: Sequence[str], tools: Sequence[str], title: str) -> dict[str, Any]:
    """P(next | prev) as a tool x tool heatmap per run, side by side; every non-zero cell is labelled
    (two decimals, "<.01" below 0.005), in the given tool order on both axes."""
    x = {"field": "next_tool", "type": "nominal", "sort": list(tools), "scale": {"domain": list(tools)}}
    y = {"field": "prev_tool", "type": "nominal", "sort": list(tools), "scale": {"domain": list(tools)}}
    rect = {"mark": {"type": "rect"}, "encoding": {
        "x": {**x, "title": "next tool", "axis": {"labelAngle": -90}}, "y": {**y, "title": "previous tool"},
        "color": {"field": "p_next", "type": "quantitative", "title": "P(next | prev)",
                  "scale": {"domain": [0, 1], "scheme": "blues"}},
        "tooltip": [{"field": "prev_tool", "type": "nominal"}, {"field": "next_tool", "type": "nominal"},
                    {"field": "p_next", "type": "quantitative", "format": ".2f"}, {"field": "n", "type": "quantitative"}]}}
    label = "datum.p_next >= 0.005 ? format(datum.p_next, '.2f') : '<.01'"
    text = {"mark": {"type": "text", "fontSize": LABEL_FONT},
            "transform": [{"filter": "datum.p_next > 0"}, {"calculate": label, "as": "label"}],
            "encoding": {"x": x, "y": y, "text": {"field": "label", "type": "nominal"},
                         "color": {"condition": {"test": "datum.p_next > 0.5", "value": "white"}, "value": "black"}}}
    return {"$schema": SCHEMA, "config": _config(), "data": {"values": _values(rows)}, "title": title,
            "facet": {"column": {"field": "run", "type": "nominal", "sort": list(runs), "title": None,
                                 "header": {"labelLimit": 300, "labelFontWeight": "bold"}}},
            "spec": {"layer": [rect, text], "width": 300, "height": 300}}


def histogram(rows: list[dict[str, Any]], *, runs: Sequence[str], title: str, x_title: str) -> dict[str, Any]:
    """Pre-binned shares (bin_start, bin_end, share per run) as overlaid translucent bars. Bins of whole
    numbers (turns, calls) get whole-number ticks: no axis reads 1.4 turns."""
    axis: dict[str, Any] = {"labelOverlap": True}
    edges = [float(r[k]) for r in rows for k in ("bin_start", "bin_end") if r[k] is not None]
    if edges and all(e.is_integer() for e in edges):
        axis.update(_whole_ticks(min(edges), max(edges)))
    layer = {"mark": {"type": "bar", "opacity": 0.55, "binSpacing": 0}, "encoding": {
        "x": {"field": "bin_start", "type": "quantitative", "bin": "binned", "title": x_title, "axis": axis},
        "x2": {"field": "bin_end"},
        "y": {"field": "share", "type": "quantitative", "title": "share of items", "axis": {"format": ".0%"},
              "stack": None},
        # histograms stand two abreast: more than two runs' names do not fit in one legend row
        "color": _run_color_dict(runs, columns=2 if len(runs) > 2 else 0),
        "tooltip": [{"field": "run", "type": "nominal"}, {"field": "bin_start", "type": "quantitative", "title": "from"},
                    {"field": "bin_end", "type": "quantitative", "title": "to"}, {"field": "n", "type": "quantitative"},
                    {"field": "share", "type": "quantitative", "format": ".1%"}]}}
    return _plain([layer], rows, title=title, height=HEIGHT)


def _domain(values: Sequence[float], step: float = 0.05) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    lo = max(0.0, math.floor(lo / step - 1e-9) * step - step / 2)
    hi = min(1.0, math.ceil(hi / step + 1e-9) * step + step / 2)
    if hi - lo < 4 * step:
        mid = (lo + hi) / 2
        lo, hi = max(0.0, mid - 2 * step), min(1.0, mid + 2 * step)
    return round(lo, 4), round(hi, 4)


Box = tuple[float, float, float, float]  # left, top, right, bottom in pixels (y grows downwards)


def _overlaps(a: Box, b: Box, gap: float = 2) -> bool:
    return not (a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1] or b[3] + gap <= a[1])


@dataclass(frozen=True)
class Label:
    """Where a point's label goes: its anchor (data units), the text's alignment at the anchor, the text's
    box in plot pixels (as estimated) and whether it sits off its point (then a leader line joins them)."""

    x: float
    y: float
    align: str  # left | right | center
    box: Box
    line: bool


#: Each label's text box is estimated with this width per character and line height (em): generous (DejaVu
#: Sans, the widest common sans-serif, averages about 0.5 em per character in the labels' names), so the
#: rendered text stays inside the box that was kept free.
CHAR_EM, LINE_EM = 0.62, 1.3
#: The directions tried around a point (right first) and the distances, in px, of the spots tried along them.
_DIRECTIONS = ((1, 0), (-1, 0), (0, -1), (0, 1), (1, -1), (-1, -1), (1, 1), (-1, 1),
               (1, -0.5), (-1, -0.5), (1, 0.5), (-1, 0.5), (0.5, -1), (-0.5, -1), (0.5, 1), (-0.5, 1))
_DISTANCES = (8, 16, 26, 38, 52, 70, 90, 115, 140, 170, 200)


def place_labels(
    points: Sequence[tuple[float, float, str]], *, width: float, height: float, x_domain: tuple[float, float],
    y_domain: tuple[float, float], order: Sequence[int] | None = None, font: float = LABEL_FONT, marker: float = 5,
) -> tuple[dict[int, Label], list[int]]:
    """Labels for the points of a scatter, none touching another label or any point and all inside the plot:
    per point (in `order`, default the most crowded first), the first free spot of sixteen directions at
    growing distances. A point with no free spot gets no label: returns (index -> Label, the unlabelled
    indices in `order`), so the chart can name those elsewhere (scatter_note)."""
    (x0, x1), (y0, y1) = x_domain, y_domain

    def px(x: float, y: float) -> tuple[float, float]:
        return (x - x0) / (x1 - x0) * width, height - (y - y0) / (y1 - y0) * height

    char_w, text_h = font * CHAR_EM, font * LINE_EM
    pts = [px(x, y) for x, y, _ in points]
    obstacles = [(cx - marker, cy - marker, cx + marker, cy + marker) for cx, cy in pts]
    if order is None:
        crowd = [sum(1 for q in pts if abs(q[0] - p[0]) < 60 and abs(q[1] - p[1]) < 30) for p in pts]
        order = sorted(range(len(points)), key=lambda i: (-crowd[i], i))
    placed: dict[int, Label] = {}
    missing: list[int] = []
    for i in order:
        cx, cy = pts[i]
        w = len(points[i][2]) * char_w
        spot = None
        for dist in _DISTANCES:
            for dx, dy in _DIRECTIONS:
                ax, ay = cx + dx * dist, cy + dy * dist * 0.8
                align = "left" if dx > 0 else ("right" if dx < 0 else "center")
                left = ax if align == "left" else (ax - w if align == "right" else ax - w / 2)
                box = (left, ay - text_h / 2, left + w, ay + text_h / 2)
                inside = box[0] >= 0 and box[1] >= 0 and box[2] <= width and box[3] <= height
                if inside and not any(_overlaps(box, o, 1) for o in obstacles) \
                        and not any(_overlaps(box, lab.box, 2) for lab in placed.values()):
                    spot = Label(x0 + ax / width * (x1 - x0), y0 + (height - ay) / height * (y1 - y0), align, box,
                                 dist > 8)
                    break
            if spot:
                break
        if spot is None:
            missing.append(i)
        else:
            placed[i] = spot
    return placed, missing


def scatter_note(names: Sequence[str], per_line: int = 4) -> list[str]:
    """A chart subtitle naming the points left without a label (no free spot beside them), a few per line."""
    if not names:
        return []
    chunks = [", ".join(names[i:i + per_line]) for i in range(0, len(names), per_line)]
    return [f"Not labelled (no room beside the point; hover it): {chunks[0]}", *chunks[1:]]


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
    rows: list[dict[str, Any]], *, x: str, y: str, x_title: str, y_title: str, color: str, title: str,
    color_scale: tuple[Sequence[str], Sequence[str]] | None = None,
) -> dict[str, Any]:
    """One point per run on equal axes with the diagonal y = x; every point labelled where its label has room
    (the notable points first, place_labels), a label set off from its point joined to it by a line, and the
    points left without one named in the subtitle (every point's name, values and tier are in its tooltip);
    legends outside the plot. ``color_scale`` (values, colours) fixes the legend's order and each value's
    colour."""
    import altair as alt  # imported where used: about half a second the compare page does without

    xs = [float(r[x]) for r in rows]
    ys = [float(r[y]) for r in rows]
    domain = _domain(xs + ys)
    notable = notable_points(xs, ys)
    order = notable + [i for i in range(len(rows)) if i not in notable]
    labels, missing = place_labels([(a, b, str(r["run"])) for a, b, r in zip(xs, ys, rows)], width=SCATTER_WIDTH,
                                   height=SCATTER_HEIGHT, x_domain=domain, y_domain=domain, order=order)
    data = [{**r, **({"label_x": labels[i].x, "label_y": labels[i].y, "align": labels[i].align,
                      "line": labels[i].line} if i in labels else {"align": "", "line": False})}
            for i, r in enumerate(rows)]
    scale = alt.Scale(domain=list(domain), nice=False, zero=False)
    xenc = alt.X(f"{x}:Q", title=x_title, axis=alt.Axis(format=".0%"), scale=scale)
    yenc = alt.Y(f"{y}:Q", title=y_title, axis=alt.Axis(format=".0%"), scale=scale)
    diagonal = alt.Chart(alt.Data(values=[{"d": domain[0]}, {"d": domain[1]}])).mark_line(
        color="#8a96a3", strokeDash=[6, 4], strokeWidth=1.2
    ).encode(x=alt.X("d:Q", scale=scale), y=alt.Y("d:Q", scale=scale))
    base = alt.Chart(_data(data))
    leaders = base.transform_filter("datum.line").mark_rule(color="#9aa5b1", strokeWidth=0.8).encode(
        x=xenc, y=yenc, x2="label_x:Q", y2="label_y:Q")
    points = base.encode(x=xenc, y=yenc).mark_point(size=80, filled=True, opacity=0.9).encode(
        color=alt.Color(f"{color}:N", title=color, legend=alt.Legend(orient="right"),
                        **({"sort": list(color_scale[0]), "scale": alt.Scale(domain=list(color_scale[0]),
                                                                             range=list(color_scale[1]))}
                           if color_scale else {})),
        shape=alt.Shape("kind:N", title="backend", legend=alt.Legend(orient="right")),
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip(f"{x}:Q", format=".1%", title=x_title),
                 alt.Tooltip(f"{y}:Q", format=".1%", title=y_title), alt.Tooltip(f"{color}:N"),
                 alt.Tooltip("kind:N", title="backend")],
    )
    texts = [base.transform_filter(f"datum.align == '{a}'").mark_text(
        align=a, baseline="middle", fontSize=LABEL_FONT, color="#333").encode(
        x=alt.X("label_x:Q", scale=scale), y=alt.Y("label_y:Q", scale=scale), text="run:N")
        for a in ("left", "right", "center")]
    note = scatter_note([str(rows[i]["run"]) for i in missing])
    chart = alt.layer(diagonal, leaders, points, *texts).properties(
        width=SCATTER_WIDTH, height=SCATTER_HEIGHT, title=alt.TitleParams(title, subtitle=note) if note else title)
    return _spec(chart)


def _whole_ticks(lo: float, hi: float) -> dict[str, Any]:
    """Axis settings for whole-number values: Vega's tickMinStep alone still puts ticks at 0.5 on a
    span of one or two, so short spans list their ticks outright."""
    if hi - lo <= 10:
        return {"values": list(range(math.floor(lo), math.ceil(hi) + 1)), "format": "d"}
    return {"tickMinStep": 1, "format": "d"}


def simple_bars(
    rows: list[dict[str, Any]], *, x: str, y: str, x_title: str, y_title: str, title: str,
    x_type: str = "O", color: str | None = None, integer: bool = False,
) -> dict[str, Any]:
    """A plain bar chart (histograms computed upstream, per-replicate values, ...); `integer` counts get
    whole-number ticks."""
    import altair as alt  # imported where used: about half a second the compare page does without

    enc: dict[str, Any] = {
        "x": alt.X(f"{x}:{x_type}", title=x_title, axis=alt.Axis(labelAngle=0)),
        "y": alt.Y(f"{y}:Q", title=y_title,
                   axis=alt.Axis(**_whole_ticks(0, max((r[y] for r in rows), default=0))) if integer else alt.Axis()),
        "tooltip": [alt.Tooltip(f"{x}:{x_type}"), alt.Tooltip(f"{y}:Q")],
    }
    if color:
        enc["color"] = alt.Color(f"{color}:N")
        enc["xOffset"] = alt.XOffset(f"{color}:N")
    chart = alt.Chart(_data(rows)).mark_bar().encode(**enc).properties(height=HEIGHT, title=title)
    return _spec(chart, container=True)


def points_with_ci(
    rows: list[dict[str, Any]], *, category: str, value: str, lo: str, hi: str, title: str, color: str | None = None,
    x_title: str = "accuracy (Wilson 95%)", fmt: str = ".1%",
) -> dict[str, Any]:
    """Dots with interval whiskers, e.g. accuracy per replicate with Wilson intervals.

    The axis spans only the intervals (not 0-100 %), so replicates a point apart are visibly apart;
    each dot is labelled with its value."""
    import altair as alt  # imported where used: about half a second the compare page does without

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
            # ticks without trailing zeros ("78%", "78.5%"), the dots' labels with the table's decimals
            x=alt.X(f"{lo}:Q", title=x_title, axis=alt.Axis(format=fmt.replace("%", "~%") if "~" not in fmt else fmt,
                                                            tickCount=6), scale=scale),
            x2=alt.X2(f"{hi}:Q")),
        # end ticks, as on the bars' whiskers: where the interval stops is readable at a glance
        *(base.mark_tick(thickness=2, size=12, color="#5a6570").encode(x=alt.X(f"{end}:Q", scale=scale))
          for end in (lo, hi)),
        base.mark_point(filled=True, size=90, opacity=1).encode(x=alt.X(f"{value}:Q", scale=scale), color=dot_color,
                                                                tooltip=tooltip),
        base.mark_text(dy=-12, fontSize=LABEL_FONT).encode(x=alt.X(f"{value}:Q", scale=scale),
                                                           text=alt.Text(f"{value}:Q", format=fmt)),
        data=_data(rows),
    ).properties(height=max(90, 46 * len(rows)), title=title)
    return _spec(chart, container=True)


def step_lines(
    rows: list[dict[str, Any]], *, x: str, y: str, runs: Sequence[str], x_title: str, y_title: str, title: str
) -> dict[str, Any]:
    """Cumulative quantities per run as step lines with points (tooltips carry the tool); one per item
    page, so hundreds per report: written as a dict."""
    enc = {"x": {"field": x, "type": "quantitative", "title": x_title, "axis": {"tickMinStep": 1}},
           "y": {"field": y, "type": "quantitative", "title": y_title}, "color": _run_color_dict(runs)}
    tooltip = [{"field": "run", "type": "nominal"}, {"field": x, "type": "quantitative"},
               {"field": "turn", "type": "quantitative"}, {"field": "tool", "type": "nominal"},
               {"field": y, "type": "quantitative"}]
    layers = [{"mark": {"type": "line", "interpolate": "step-after"}, "encoding": enc},
              {"mark": {"type": "point", "filled": True, "size": 30}, "encoding": {**enc, "tooltip": tooltip}}]
    return _plain(layers, rows, title=title, height=HEIGHT)


def binned_bars(rows: list[dict[str, Any]], *, title: str, x_title: str, y_title: str = "items") -> dict[str, Any]:
    """A histogram from pre-binned rows (bin_start, bin_end, n) on a quantitative axis."""
    import altair as alt  # imported where used: about half a second the compare page does without

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
