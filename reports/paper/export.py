"""Tables as files: CSV (the machine-readable contract of docs/reports.md) and LaTeX booktabs fragments."""

from __future__ import annotations

import math
import re
from typing import Any

from ..values import control_pictures, csv_document, jsonable, spreadsheet_safe
from .table import REPEATS, Table

# -- CSV ----------------------------------------------------------------------------------------------


def csv_value(v: Any) -> str:
    """Raw values: floats at full precision (repr round-trips), NULL as empty, booleans as true/false."""
    v = jsonable(v)
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "" if math.isnan(v) else repr(v)
    return str(v)


def csv_text(text: str) -> str:
    """A text cell as the CSV holds it: never read as a formula (spreadsheet_safe); the writer
    (values.csv_document) shows its control characters as the page does (a NUL in an id is '␀')."""
    return spreadsheet_safe(text)


def csv_cell(v: Any) -> str:
    text = csv_value(v)
    return csv_text(text) if isinstance(jsonable(v), str) else text


def to_csv(table: Table) -> str:
    return csv_document([[csv_text(c.key) for c in table.columns],
                         *([csv_cell(row.get(c.key)) for c in table.columns] for row in table.rows)])


# -- LaTeX --------------------------------------------------------------------------------------------

_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX_ESCAPES))
_UNICODE = {"–": "--", "—": "---", "−": "-", "±": r"$\pm$", "Δ": r"$\Delta$", "→": r"$\rightarrow$",
            "≤": r"$\le$", "≥": r"$\ge$", "×": r"$\times$", "α": r"$\alpha$", "ρ": r"$\rho$", "↑": r"$\uparrow$",
            "↓": r"$\downarrow$", "·": r"$\cdot$", "∗": r"$^{\ast}$", "†": r"$^{\dagger}$", "≈": r"$\approx$",
            "<": r"\textless{}", ">": r"\textgreater{}",
            # a cell that opens with "[" would be read as the optional argument of the row's "\\"
            "[": "{[}", "]": "{]}"}
#: the control pictures of values.control_pictures as plain ASCII a fragment can typeset anywhere
#: (pdflatex has no glyph for U+2400...): NUL -> [NUL], ESC -> [ESC], DEL -> [DEL], a C1 control -> [?]
_C0_NAMES = ("NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR", "SO", "SI",
             "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US")
_PICTURES = {chr(0x2400 + i): rf"\texttt{{[{name}]}}" for i, name in enumerate(_C0_NAMES)} | {
    "\u2421": r"\texttt{[DEL]}", "\ufffd": r"\texttt{[?]}"}
#: line breaks end a comment line and, doubled, a paragraph (an error inside a tabular cell): spaces
_LINE_BREAKS = re.compile(r"[\r\n]+")


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters (and a few Unicode signs) so any text typesets literally:
    control characters first become what every export shows (values.control_pictures), spelled here
    in ASCII (``\\texttt{[NUL]}``); line breaks become spaces."""
    text = _LINE_BREAKS.sub(" ", control_pictures(text))
    out = _LATEX_RE.sub(lambda m: _LATEX_ESCAPES[m.group(0)], text)
    return "".join(_UNICODE.get(ch) or _PICTURES.get(ch, ch) for ch in out)


def _latex_cell(text: str, marks: set[str]) -> str:
    cell = latex_escape(text)
    if "best" in marks:
        cell = rf"\textbf{{{cell}}}"
    if "leader" in marks:
        cell += r"$^{\ast}$"
    if "sig" in marks:
        cell += r"$^{\dagger}$"
    if "sim" in marks:
        cell += r" \textit{(sim)}"
    return cell


def _group_row(group: str, n_cols: int, split: bool) -> str:
    """A group header over every column, or (split) "left|right" over the two halves."""
    if not split:
        return rf"\multicolumn{{{n_cols}}}{{l}}{{\textit{{{latex_escape(group)}}}}} \\"
    left, _, right = group.partition("|")
    half = n_cols // 2
    return " & ".join(rf"\multicolumn{{{half}}}{{l}}{{\textit{{{latex_escape(g)}}}}}" if g
                      else rf"\multicolumn{{{half}}}{{l}}{{}}" for g in (left, right)) + r" \\"


def _header_rows(table: Table) -> list[str]:
    """The spanning group row (with its \\cmidrule rules), the headers and the units row."""
    cols = table.shown_columns
    lines = []
    if table.header_groups:
        cells, rules, start = [], [], 1
        for label, span in table.header_groups:
            cells.append(rf"\multicolumn{{{span}}}{{c}}{{{latex_escape(label)}}}" if label and span > 1
                         else latex_escape(label))
            if label:
                rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
            start += span
        lines += [" & ".join(cells) + r" \\", " ".join(rules)] if rules else []
    lines.append(" & ".join(c.latex or latex_escape(c.header or c.key) for c in cols) + r" \\")
    if table.units:
        lines.append(" & ".join(latex_escape(u) for u in table.units) + r" \\")
    return lines


def to_latex(table: Table) -> str:
    """A booktabs tabular fragment: \\begin{tabular} ... \\toprule header \\midrule body \\bottomrule, in the
    paper's layout (the table's view) when it has one.

    Text columns are left-aligned, numbers right-aligned; group headers span every column."""
    source = table
    table = table.shown.latex_view or table.shown
    cols = table.shown_columns
    spec = "".join("l" if c.kind == "text" else "r" for c in cols)
    lines = [
        f"% {latex_escape(table.ref)}: {latex_escape(table.title)} (agenthop-report paper; "
        f"tables/{source.key}.csv has the data)",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        *_header_rows(table),
        r"\midrule",
    ]
    groups = table.groups()
    for gi, (group, rows) in enumerate(groups):
        if group is not None:
            if gi > 0:
                lines.append(r"\midrule")
            lines.append(_group_row(group, len(cols), table.split_groups))
        for i, row in rows:
            repeats = row.get(REPEATS, ())
            cells = ["" if c.key in repeats else _latex_cell(c.format(row.get(c.key)), table.marks.get((i, c.key), set()))
                     for c in cols]
            lines.append(" & ".join(cells) + r" \\")
    if table.footer:
        lines.append(r"\midrule")
        lines += [" & ".join(latex_escape(c.format(row.get(c.key))) for c in cols) + r" \\" for row in table.footer]
    lines.append(r"\bottomrule")
    lines.append(r"\end{tabular}")
    return "\n".join(lines) + "\n"
