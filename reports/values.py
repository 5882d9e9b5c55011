"""Conversions of DuckDB values for JSON, tables and templates (no heavy imports: `sql` uses it)."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any


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
