"""The item pages' one-line summaries count turns and calls in words that agree with the number."""

from __future__ import annotations

import pytest

from agenthop.reports.core.registry import Outcomes
from agenthop.reports.render import environment


MACRO = {"_core_macros.html.j2": "core_side"}  # every benchmark's item page heads its runs with it


def _summary(template: str, turns: int, calls: int) -> str:
    env = environment()
    macro = getattr(env.get_template(template).module, MACRO[template])
    side = {"run": {"label": "m", "simulated": False}, "n_calls": calls,
            "summary": {"is_correct": True, "terminated_by": "answer", "total_turns": turns, "budget_used": 1,
                        "total_tokens": 10, "paper_recall": False, "score": 1.0, "predicted_answer": "A",
                        "wall_time_s": None, "n_attempts": 1, "attempt": 0}}
    args = (side, Outcomes())  # the shared page names outcomes
    return " ".join(str(macro(*args)).split())


@pytest.mark.parametrize("template", ["_core_macros.html.j2"])
@pytest.mark.parametrize(("turns", "calls", "words"), [
    (1, 1, "1 turn · 1 call ·"), (1, 0, "1 turn · 0 calls ·"), (2, 3, "2 turns · 3 calls ·")])
def test_turns_and_calls_agree_with_their_number(template: str, turns: int, calls: int, words: str) -> None:
    assert words in _summary(template, turns, calls)
