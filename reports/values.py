"""Conversions of DuckDB values for JSON, tables and templates (no heavy imports: `sql` uses it)."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from typing import Any

#: Control characters a page or a table file must not hold raw (tab, newline and CR are text).
CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _picture(m: re.Match[str]) -> str:
    code = ord(m.group())
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def control_pictures(text: str) -> str:
    """`text` with its control characters shown as Unicode control pictures (NUL -> U+2400 '␀', ESC ->
    '␛', DEL -> '␡'; C1 controls -> U+FFFD): what every report page and every paper CSV prints."""
    return CONTROL_RE.sub(_picture, text) if CONTROL_RE.search(text) else text


def jsonable(v: Any) -> Any:
    """DuckDB values -> JSON-safe Python values (Decimal -> float, NaN/inf -> None, dates -> ISO)."""
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, (dt.date, dt.datetime, dt.time)):
        return v.isoformat()
    return v


def as_float(v: Any) -> float | None:
    """A numeric value as float; None for NULL/NaN."""
    v = jsonable(v)
    return None if v is None else float(v)
