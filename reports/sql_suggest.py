"""'Did you mean …?' for `agenthop-report sql`: the nearest table and column names to a typo.

Pure functions over DuckDB's error text and the warehouse's catalogue (relation -> columns); the
warehouse module calls :func:`suggestion` when a user query fails.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence

_UNKNOWN_TABLE = re.compile(r"Table with name (?P<name>[^\s!]+) does not exist")
_UNKNOWN_COLUMN = re.compile(r'(?:Referenced column|does not have a column named) "(?P<name>[^"]+)"')


def nearest(name: str, candidates: Sequence[str], n: int = 3, cutoff: float = 0.75) -> list[str]:
    """Up to ``n`` candidates closest to ``name`` (case-insensitive, difflib ratio >= ``cutoff``, so a shared prefix alone is not enough)."""
    by_lower: dict[str, str] = {}
    for cand in candidates:
        by_lower.setdefault(cand.lower(), cand)
    return [by_lower[m] for m in difflib.get_close_matches(name.lower(), list(by_lower), n=n, cutoff=cutoff)]


def suggestion(message: str, catalogue: Mapping[str, Sequence[str]]) -> str | None:
    """A hint such as ``did you mean table model_summary?`` for an unknown-table or unknown-column
    error, or None. ``catalogue`` maps relation names (``model_summary``, ``raw.runs``) to columns."""
    table = _UNKNOWN_TABLE.search(message)
    if table:
        typo = table.group("name").split(".")[-1]
        unqualified = {rel.split(".")[-1]: rel for rel in catalogue}
        found = [unqualified[m] for m in nearest(typo, list(unqualified))]
        return f"did you mean table {' or '.join(found)}?" if found else None
    column = _UNKNOWN_COLUMN.search(message)
    if column:
        owners: dict[str, list[str]] = {}
        for rel, cols in catalogue.items():
            for col in cols:
                owners.setdefault(col, []).append(rel)
        found = nearest(column.group("name"), list(owners))
        if not found:
            return None
        parts = [f"{col} ({', '.join(sorted(owners[col])[:4])}{', …' if len(owners[col]) > 4 else ''})"
                 for col in found]
        return f"did you mean column {' or '.join(parts)}?"
    return None


__all__ = ["nearest", "suggestion"]
