"""Conversions of DuckDB values for JSON, tables and templates (no heavy imports: `sql` uses it)."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

#: Control characters a page or a table file must not hold raw (tab, newline and CR are text).
CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _picture(m: re.Match[str]) -> str:
    code = ord(m.group())
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def control_pictures(text: str) -> str:
    """`text` with its control characters shown as Unicode control pictures (NUL -> U+2400 '␀', ESC ->
    '␛', DEL -> '␡'; C1 controls -> U+FFFD): what every report page and every paper CSV prints."""
    return CONTROL_RE.sub(_picture, text) if CONTROL_RE.search(text) else text


#: first characters that make a spreadsheet read a cell as a formula (or, for tab and CR, hide it)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


#: a text that is just a number ("-3", "+1.5e3"): a spreadsheet reads it as that number, never as a formula
PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def spreadsheet_safe(text: str) -> str:
    """A text cell a spreadsheet shows as text: one beginning with = + - @ (tab, CR) gets a leading
    apostrophe, as spreadsheets expect (CSV injection), unless it is just a number ("-3", a number
    formatted in SQL). Numbers are written as numbers and are never changed; the paper's CSV tables and
    ``agenthop-report sql --format csv`` both use it."""
    return "'" + text if text.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(text) else text


def csv_document(rows: Iterable[Sequence[Any]]) -> str:
    """Rows as CSV text, one ``\\n``-ended line each, a cell quoted when it holds a comma, a quote, a line
    feed or a carriage return (``csv.writer`` with a ``\\n`` line end leaves a lone CR unquoted, which
    splits the row for every reader). The one CSV writer of the reports: every text cell shows its control
    characters as :func:`control_pictures` (a NUL in an id as '␀'), whichever caller made the cell."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")  # CR is then a line-end character: quoted wherever it occurs
    lines = []
    for row in rows:
        buf.seek(0)
        buf.truncate()
        w.writerow([control_pictures(c) if isinstance(c, str) else c for c in row])
        lines.append(buf.getvalue()[:-2] + "\n")
    return "".join(lines)


def jsonable(v: Any) -> Any:
    """DuckDB values -> JSON-safe Python values (Decimal -> float, NaN/inf -> None, dates -> ISO)."""
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, (dt.date, dt.datetime, dt.time)):
        return v.isoformat()
    return v


class Interval(NamedTuple):
    """A DuckDB INTERVAL exactly as stored: months, days and nanoseconds, each with its own sign (a month is
    not a number of days). ``agenthop-report sql`` reads intervals through Arrow (month_day_nano) into it."""

    months: int
    days: int
    nanoseconds: int


def _signed(n: int, unit: str) -> str:
    return f"{n}{unit}" if n else ""


def iso_interval(months: int, days: int, nanoseconds: int) -> str:
    """An interval as an ISO 8601 duration, months kept: 1 month -> "P1M", 14 months 3 days -> "P1Y2M3D",
    2 hours 3.5 seconds -> "PT2H3.5S", minus one second -> "-PT1S", zero -> "PT0S". When the parts have
    different signs (DuckDB allows 1 month -3 days) each part carries its own: "P1M-3D"."""
    parts = (months, days, nanoseconds)
    sign = "-" if all(x <= 0 for x in parts) and any(parts) else ""
    if sign:
        months, days, nanoseconds = -months, -days, -nanoseconds
    years, months = (abs(months) // 12) * (1 if months >= 0 else -1), (abs(months) % 12) * (1 if months >= 0 else -1)
    tsign, ns = (-1 if nanoseconds < 0 else 1), abs(nanoseconds)
    hours, ns = divmod(ns, 3_600_000_000_000)
    minutes, ns = divmod(ns, 60_000_000_000)
    seconds, ns = divmod(ns, 1_000_000_000)
    sec = (f"{seconds}.{ns:09d}".rstrip("0") if ns else str(seconds)) if ns or seconds else ""
    neg = "-" if tsign < 0 else ""
    clock = "".join(f"{neg}{text}{unit}" for text, unit in ((str(hours) if hours else "", "H"),
                                                            (str(minutes) if minutes else "", "M"), (sec, "S")) if text)
    date = _signed(years, "Y") + _signed(months, "M") + _signed(days, "D")
    if not date and not clock:
        return "PT0S"
    return f"{sign}P{date}{f'T{clock}' if clock else ''}"


def iso_duration(td: dt.timedelta) -> str:
    """A Python timedelta as an ISO 8601 duration: 1 day 02:03:04.5 -> "P1DT2H3M4.5S", minus one second ->
    "-PT1S", zero -> "PT0S" (whole days as days, the rest as the time part)."""
    us = td // dt.timedelta(microseconds=1)
    days, rest = divmod(abs(us), 86_400_000_000)
    sign = -1 if us < 0 else 1
    return iso_interval(0, sign * days, sign * rest * 1000)


def blob_text(b: bytes) -> str:
    """A BLOB as DuckDB spells it: printable ASCII as itself, every other byte as \\xHH (b'a\\xaa' -> "a\\xAA")."""
    return "".join(chr(c) if 0x20 <= c < 0x7F and c != 0x5C else f"\\x{c:02X}" for c in b)


def sql_value(v: Any) -> Any:
    """A query result value as JSON data, nested values too: lists (and ARRAY tuples) as lists, structs
    and maps as objects (keys as text), Decimal as a number, NaN/inf as None, dates and times in ISO
    8601, intervals as ISO 8601 durations, UUIDs as text, BLOBs in DuckDB's spelling. Never a Python repr."""
    if v is None or isinstance(v, (str, bool, int)):
        return v
    if isinstance(v, Interval):
        return iso_interval(*v)
    if isinstance(v, (list, tuple)):
        return [sql_value(x) for x in v]
    if isinstance(v, dict):
        return {k if isinstance(k, str) else sql_text(k): sql_value(x) for k, x in v.items()}
    if isinstance(v, dt.timedelta):
        return iso_duration(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return blob_text(bytes(v))
    v = jsonable(v)
    return v if isinstance(v, (str, int, float)) or v is None else str(v)  # a UUID: its text


def sql_text(v: Any) -> Any:
    """A query result value for a text table or a CSV cell: None or a number as it is, a boolean as JSON
    spells it (``true``/``false``, as in a nested value and in DuckDB's own CLI), a list, struct or map as
    its JSON text (``["a", 1]``, ``{"k": "v"}``), anything else as sql_value's text."""
    v = sql_value(v)
    if isinstance(v, (bool, list, dict)):
        return json.dumps(v, ensure_ascii=False, allow_nan=False)
    return v


def as_float(v: Any) -> float | None:
    """A numeric value as float; None for NULL/NaN."""
    v = jsonable(v)
    return None if v is None else float(v)
