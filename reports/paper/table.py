"""One table of the paper report: its columns, rows and how each cell is printed.

The same object is written as CSV (every column, raw values: rates as fractions), as a LaTeX booktabs
fragment and as an HTML table (the shown columns, formatted the way the paper prints them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import stats
from ..values import jsonable

#: How a cell is printed in LaTeX and HTML, by column kind.
FORMATS: dict[str, Callable[[Any], str]] = {}


def _fmt(kind: str) -> Callable[[Callable[[Any], str]], Callable[[Any], str]]:
    def register(fn: Callable[[Any], str]) -> Callable[[Any], str]:
        FORMATS[kind] = fn
        return fn

    return register


def _number(v: Any) -> float | None:
    v = jsonable(v)
    if v is None or isinstance(v, (str, bytes, bool)):
        return None
    return float(v)


@_fmt("text")
def _text(v: Any) -> str:
    v = jsonable(v)
    return "" if v is None else str(v)


def _numeric(template: str, scale: float = 1.0, convert: Callable[[float], Any] = float) -> Callable[[Any], str]:
    """A number printed with ``template`` after scaling (a missing value prints as "–")."""

    def fmt(v: Any) -> str:
        x = _number(v)
        return "–" if x is None else template.format(convert(scale * x))

    return fmt


FORMATS.update({
    "int": _numeric("{}", convert=int),
    "rate": _numeric("{:.1f}", scale=100),  # a fraction as a percentage with one decimal: 0.8541 -> 85.4
    "pp": _numeric("{:+.1f}"),              # percentage points with a sign: 3.1 -> +3.1
    "num1": _numeric("{:.1f}"),
    "num2": _numeric("{:.2f}"),
    "num3": _numeric("{:.3f}"),
    "usd": _numeric("{:.2f}"),
    "usd4": _numeric("{:.4f}"),
    "frac3": _numeric("{:.3f}"),             # a fraction the way the paper prints it: 0.8541 -> 0.854
    "pct": _numeric("{:.1f}%", scale=100),   # a fraction as a percentage with its sign: 0.0323 -> 3.2%
    "k0": _numeric("{:.0f}", scale=1e-3),    # a count in thousands: 87012 -> 87
    "comma": _numeric("{:,.0f}"),            # a count with thousands separators: 5003.2 -> 5,003
})


@_fmt("cell")
def _cell(v: Any) -> str:
    """Text printed as given but aligned as a number (e.g. "94.4 ± 3.2", "7/19")."""
    return _text(v) or "–"


@_fmt("p")
def _p(v: Any) -> str:
    x = _number(v)
    return "–" if x is None else stats.format_p(x)


@_fmt("bool")
def _bool(v: Any) -> str:
    return "" if v is None else ("yes" if v else "no")


@dataclass(frozen=True)
class Column:
    """A CSV column; `header` set means it is also shown (LaTeX and HTML) with `kind`'s format."""

    key: str
    kind: str = "text"
    header: str | None = None
    latex: str | None = None  # the header in LaTeX when it needs math (e.g. $\Delta_{\text{kw}}$)
    tip: str | None = None  # the header's tooltip on the page (what an abbreviation stands for)

    def __post_init__(self) -> None:
        if self.kind not in FORMATS:
            raise ValueError(f"column {self.key}: unknown kind {self.kind!r}")

    @property
    def shown(self) -> bool:
        return self.header is not None

    def format(self, value: Any) -> str:
        return FORMATS[self.kind](value)


#: Row key of the columns whose value repeats the row above (the paper prints a block's label once).
REPEATS = "_repeats"

#: Cell marks: `best` (bold), `leader` (asterisk), `sig` (dagger), `sim` (a simulated system's name: the page's
#: SIMULATED badge, "(sim)" in the LaTeX).
MARKS = ("best", "leader", "sig", "sim")


@dataclass
class Table:
    """A paper table (or the data of a figure): CSV columns, rows, and its place in the paper."""

    key: str  # file stem under tables/, e.g. table02_main
    ref: str  # what it reproduces, e.g. "Table 2"
    title: str
    definition: str  # anchor of its definition in docs/metrics.md
    columns: list[Column]
    rows: list[dict[str, Any]]
    note: str = ""
    group_by: str | None = None  # shown rows are grouped under a header row per value of this column
    marks: dict[tuple[int, str], set[str]] = field(default_factory=dict)  # (row index, column key) -> marks
    latex: bool = True  # also written as LaTeX (figure data are CSV only)
    #: The paper's layout of this table for the page and the LaTeX (wide blocks, the paper's headers and
    #: number formats); the CSV is always the table itself. None: the table is shown as it is.
    view: Table | None = None
    #: Spanning header cells above the headers, over the shown columns: (label, number of columns).
    header_groups: list[tuple[str, int]] = field(default_factory=list)
    #: The LaTeX's own arrangement of this layout when it differs from the page's (Tables 15 and 18: two
    #: tiers side by side, as the paper prints them; the page stacks them so that the rows sort).
    latex_view: Table | None = None
    #: Group names are "left|right": the LaTeX prints each over its half of the columns.
    split_groups: bool = False
    #: Rows printed after the body under a rule and never sorted with it (Table 8's Total).
    footer: list[dict[str, Any]] = field(default_factory=list)
    #: What one body row is ("system"), for a row count beside a footer: "10 systems and the Mean row".
    row_noun: str = "row"
    #: A second header row under the headers (the paper's units row, e.g. "(%)", "(pp)"), one per column.
    units: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        keys = [c.key for c in self.columns]
        if len(set(keys)) != len(keys):
            raise ValueError(f"table {self.key}: duplicate column names")
        n_shown = len(self.shown_columns)
        if self.header_groups and sum(n for _, n in self.header_groups) != n_shown:
            raise ValueError(f"table {self.key}: header groups span {sum(n for _, n in self.header_groups)} "
                             f"columns, {n_shown} are shown")
        if self.units and len(self.units) != n_shown:
            raise ValueError(f"table {self.key}: {len(self.units)} units for {n_shown} shown columns")
        for (i, key), marks in self.marks.items():
            if key not in keys or not 0 <= i < len(self.rows) or not marks <= set(MARKS):
                raise ValueError(f"table {self.key}: bad mark {marks} at row {i}, column {key}")

    @property
    def shown(self) -> Table:
        """What the page and the LaTeX print: the paper's layout when there is one."""
        return self.view or self

    @property
    def shown_columns(self) -> list[Column]:
        return [c for c in self.columns if c.shown and c.key != self.group_by]

    def mark(self, i: int, key: str, mark: str) -> None:
        self.marks.setdefault((i, key), set()).add(mark)

    def groups(self) -> list[tuple[str | None, list[tuple[int, dict[str, Any]]]]]:
        """Rows in order, split into consecutive runs of the group_by value (one group without it)."""
        if self.group_by is None:
            return [(None, list(enumerate(self.rows)))]
        out: list[tuple[str | None, list[tuple[int, dict[str, Any]]]]] = []
        for i, row in enumerate(self.rows):
            g = _text(row.get(self.group_by)) or "–"
            if not out or out[-1][0] != g:
                out.append((g, []))
            out[-1][1].append((i, row))
        return out
