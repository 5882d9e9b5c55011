"""Parse a T4 answer into a table (docs/sciexplore.md#t4-answers).

A T4 answer is either Markdown text, possibly with prose around the table, or an object
``{"columns": [...], "rows": [{column: value}, ...]}``. ``parse_table`` returns a ``Table`` or a
``ParseFailure`` with the reason. Rows with too few cells are padded with empty cells and extra
cells are dropped (their cells are still judged); ``format_ok`` says whether the table has exactly
the task's columns (order free, names compared normalised).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .normalize import normalize

_SEPARATOR_CELL = re.compile(r"^:?-{1,}:?$")


@dataclass(frozen=True, slots=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[dict[str, str], ...]

    def to_json(self) -> dict[str, Any]:
        return {"columns": list(self.columns), "rows": [dict(r) for r in self.rows]}


@dataclass(frozen=True, slots=True)
class ParseFailure:
    reason: str


def _split_row(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    cells = re.split(r"(?<!\\)\|", s)
    return [c.strip().replace("\\|", "|") for c in cells]


def _is_separator(cells: list[str]) -> bool:
    return bool(cells) and all(_SEPARATOR_CELL.match(c.replace(" ", "")) for c in cells)


def parse_markdown(text: str) -> Table | ParseFailure:
    """The first Markdown table in ``text`` (a header line, a separator line, then rows)."""
    lines = text.splitlines()
    saw_pipe = False
    for i, line in enumerate(lines):
        if "|" not in line:
            continue
        saw_pipe = True
        if i + 1 >= len(lines) or not _is_separator(_split_row(lines[i + 1])):
            continue
        header = _split_row(line)
        if not any(header):
            return ParseFailure(f"line {i + 1}: the table header is empty")
        rows: list[dict[str, str]] = []
        for body in lines[i + 2:]:
            if "|" not in body or not body.strip():
                break
            cells = _split_row(body)
            cells = (cells + [""] * len(header))[: len(header)]
            rows.append(dict(zip(header, cells)))
        if len(set(header)) != len(header):
            return ParseFailure(f"line {i + 1}: the table header repeats a column name")
        return Table(columns=tuple(header), rows=tuple(rows))
    if saw_pipe:
        return ParseFailure("lines with '|' but no header followed by a separator line (| --- |)")
    return ParseFailure("no Markdown table in the answer")


def parse_object(obj: dict[str, Any]) -> Table | ParseFailure:
    cols = obj.get("columns")
    rows = obj.get("rows")
    if not isinstance(cols, list) or not cols or not all(isinstance(c, str) for c in cols):
        return ParseFailure("object answer: 'columns' must be a non-empty list of strings")
    if len(set(cols)) != len(cols):
        return ParseFailure("object answer: 'columns' repeats a name")
    if not isinstance(rows, list):
        return ParseFailure("object answer: 'rows' must be a list of objects")
    out = []
    for i, r in enumerate(rows):
        if not isinstance(r, dict):
            return ParseFailure(f"object answer: rows[{i}] is not an object column -> value")
        out.append({c: _cell_text(r.get(c)) for c in cols})
    return Table(columns=tuple(cols), rows=tuple(out))


def _cell_text(v: Any) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else str(v)


def parse_table(answer: Any) -> Table | ParseFailure:
    if answer is None or (isinstance(answer, str) and not answer.strip()):
        return ParseFailure("empty answer")
    if isinstance(answer, dict):
        return parse_object(answer)
    if isinstance(answer, str):
        return parse_markdown(answer)
    return ParseFailure(f"a T4 answer is Markdown text or an object, got {type(answer).__name__}")


def format_ok(table: Table | ParseFailure, task_columns: tuple[str, ...] | list[str]) -> bool:
    """Exactly the task's columns, order free, names compared normalised."""
    if isinstance(table, ParseFailure):
        return False
    got = sorted(normalize(c) for c in table.columns)
    return len(got) == len(task_columns) and got == sorted(normalize(c) for c in task_columns)
