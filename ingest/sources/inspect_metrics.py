"""The metric catalogue rows of one Inspect log (docs/inspect.md#metrics): one per scorer and dict key.

Pure: reads the score rows the mapping made (``inspect_map.RunRows.scores``). Inspect says nothing
about which way a score is better, so every numeric score is ``higher_is_better`` (Inspect's own
metrics, accuracy and mean, reward high values) until the user says otherwise
(``agenthop-ingest --metric-direction``); a score with no numeric value at all is categorical, with
no direction. Kind: ``binary`` when every numeric value is 0 or 1, else ``continuous``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agenthop.ingest.metric_names import metric_name
from agenthop.schemas import metrics as m

from . import inspect_map

SOURCE = "inspect"


def kind_of(values: Iterable[float | None]) -> str:
    """``binary`` when every numeric value is 0 or 1, ``continuous`` with another number, else
    ``categorical`` (no numeric value at all)."""
    numbers = [v for v in values if v is not None]
    if not numbers:
        return "categorical"
    return "binary" if all(v in (0.0, 1.0) for v in numbers) else "continuous"


def _primary(scores: list[dict[str, Any]], choice: tuple[str, str | None] | None) -> str | None:
    """The metric ``trajectories.score`` holds: ``--score``'s, else the first scorer's first key."""
    for row in scores:
        if choice is None or (row["scorer"] == choice[0] and (choice[1] is None or row["key"] == choice[1])):
            return metric_name(row["scorer"], row["key"])
    return None


def score_metric_row(benchmark: str, scorer: str, key: str, values: Iterable[float | None], is_primary: bool,
                     source: str = SOURCE) -> dict[str, Any]:
    """The catalogue row of the score (scorer, key) with numeric ``values`` (module docstring)."""
    kind = kind_of(values)
    single = key == inspect_map.SINGLE_KEY
    return {
        "benchmark": benchmark,
        "metric": metric_name(scorer, key),
        "kind": kind,
        "direction": m.NO_DIRECTION if kind == "categorical" else m.HIGHER,
        "is_primary": is_primary,
        "label": scorer if single else key,
        "source": source,
        "description": f"Inspect scorer {scorer}" + ("" if single else f", key {key} of its value"),
        "min_value": 0.0 if kind == "binary" else None,
        "max_value": 1.0 if kind == "binary" else None,
    }


def metric_rows(mapped: inspect_map.MappedLog, score: str | None,
                scores: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A ``raw.metric_defs`` row per scorer and key of ``mapped`` (in the order first seen), from its
    runs' score rows ``scores`` (the mapping's batches take them out of the runs)."""
    own_primary = mapped.benchmark != inspect_map.AGENTHOP  # AgentHop's task: its benchmark's primary
    primary = _primary(scores, inspect_map.parse_score_choice(score)) if own_primary else None
    values: dict[tuple[str, str], list[float | None]] = {}
    for row in scores:
        values.setdefault((row["scorer"], row["key"]), []).append(row["value_num"])
    return [score_metric_row(mapped.benchmark, scorer, key, vals, metric_name(scorer, key) == primary)
            for (scorer, key), vals in values.items()]
