"""The item pages' one-line summaries of a run (score, ending, turns, calls, tokens): worked out by hand,
with turns and calls in words that agree with the number, and the same on the static item page and in the
site's on-demand item viewer."""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest

from agenthop.reports.core.registry import Outcomes
from agenthop.reports.item_data import Chunk, _side
from agenthop.reports.render import environment, run_summary_line


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


@pytest.mark.parametrize(("summary", "calls", "line"), [
    ({"score": 0.5, "terminated_by": "answer", "total_turns": 3, "total_tokens": 1234, "wall_time_s": 12.345,
      "n_attempts": 3, "attempt": 1}, 2,
     "score 0.500 · ended by answer · 3 turns · 2 calls · 1,234 tokens · 12.3 s · attempt 2 of 3"),
    # no score, no tokens key, one attempt: no wall time and no attempt part
    ({"score": None, "terminated_by": "max_turns", "total_turns": 1, "n_attempts": 1, "attempt": 0}, 1,
     "score n/a · ended by max_turns · 1 turn · 1 call · n/a tokens"),
    # zeros are values, not missing: 0 tokens and 0.0 s are printed; an integer score gets its three decimals
    ({"score": 1, "terminated_by": "budget", "total_turns": 0, "total_tokens": 0, "wall_time_s": 0.0,
      "n_attempts": None}, 0,
     "score 1.000 · ended by budget · 0 turns · 0 calls · 0 tokens · 0.0 s"),
    # NaN score as missing, DuckDB's Decimal tokens rounded, no ending and no turn count
    ({"score": float("nan"), "total_tokens": Decimal("1234567.6")}, 5,
     "score n/a · ended by n/a · n/a turns · 5 calls · 1,234,568 tokens"),
    ({"score": 0.9996, "terminated_by": "error", "total_turns": 2, "total_tokens": 999.5, "wall_time_s": 59.96,
      "n_attempts": 2, "attempt": 0}, 1,
     "score 1.000 · ended by error · 2 turns · 1 call · 1,000 tokens · 60.0 s · attempt 1 of 2"),
])
def test_run_summary_line_by_hand(summary: dict[str, Any], calls: int, line: str) -> None:
    assert run_summary_line(summary, calls) == line


def test_static_page_and_viewer_print_the_same_summary_line() -> None:
    """The macro of the static item page and the viewer's data both print run_summary_line, control
    characters shown as pictures."""
    summary = {"is_correct": False, "terminated_by": "ans\x1bwer", "total_turns": 4, "total_tokens": 2500,
               "score": 0.25, "predicted_answer": None, "wall_time_s": 7.0, "n_attempts": 2, "attempt": 1}
    expected = "score 0.250 · ended by ans\u241bwer · 4 turns · 3 calls · 2,500 tokens · 7.0 s · attempt 2 of 2"
    env = environment()
    macro = env.get_template("_core_macros.html.j2").module.core_side
    side = {"run": {"label": "m", "simulated": False}, "n_calls": 3, "summary": summary}
    html = str(macro(side, Outcomes()))
    assert f'<div class="meta">{expected}</div>' in html
    viewer = _side(SimpleNamespace(summary=summary, n_calls=3), Chunk())
    assert viewer is not None and viewer["meta"] == expected
