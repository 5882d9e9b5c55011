"""SQL helpers every report query uses: parameter lists, 0/1 flags, a run-filtered mart slice.

Run ids are always bound as parameters; the only identifiers spliced into SQL come from fixed
whitelists in the modules of this package.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...warehouse import Warehouse


def in_list(n: int) -> str:
    """``(?, ?, ...)`` with `n` placeholders."""
    return "(" + ", ".join(["?"] * n) + ")"


def flag(col: str) -> str:
    """A boolean-or-integer flag column as 0/1 integer (NULL -> 0)."""
    return f"coalesce(({col})::INT, 0)"


def mart_slice(wh: Warehouse, mart: str, run_ids: Sequence[str], order: str) -> list[dict[str, Any]]:
    """Every row of `mart` for the given runs, ordered by `order`."""
    if not run_ids:
        return []
    return wh.rows(
        f"SELECT * FROM {mart} WHERE run_id IN {in_list(len(run_ids))} ORDER BY {order}", list(run_ids)
    )
