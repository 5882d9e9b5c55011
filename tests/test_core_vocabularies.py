"""The shared vocabularies are one list each: the dbt macros repeat schemas/trajectory.py exactly."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from agenthop.schemas import quality, trajectory

MACROS = Path(__file__).resolve().parents[1] / "dbt_support" / "macros" / "vocabularies.sql"


def macro_list(name: str) -> list[str]:
    text = MACROS.read_text()
    m = re.search(r"{%\s*macro " + name + r"\(\)\s*-?%}\s*{{\s*return\((\[.*?\])\)\s*}}", text, re.S)
    assert m, f"macro {name}() not found in {MACROS}"
    return ast.literal_eval(m.group(1))


def test_dbt_vocabularies_equal_the_schemas() -> None:
    assert macro_list("terminated_by_values") == list(trajectory.TERMINATIONS)
    assert macro_list("tool_call_statuses") == list(trajectory.TOOL_CALL_STATUSES)
    harness = macro_list("harness_terminations")
    assert set(harness) <= set(trajectory.TERMINATIONS) and harness[0] == "answer" and harness[-1] == "error"


def test_shared_vocabularies() -> None:
    assert trajectory.TERMINATIONS == (
        "answer", "max_turns", "budget", "token_limit", "time_limit", "cost_limit", "message_limit",
        "context_limit", "other_limit", "error",
    )
    assert trajectory.TOOL_CALL_STATUSES[-1] == "tool_error"
    assert {"reference-json", "inspect-log", "responses-file"} <= set(trajectory.BACKENDS)
    assert quality.ALLOWED_VALUES["trajectories"]["terminated_by"] == trajectory.TERMINATIONS
    assert quality.ALLOWED_VALUES["runs"]["backend"] == trajectory.BACKENDS
