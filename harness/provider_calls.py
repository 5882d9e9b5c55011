"""The calls a provider ran on its own side (native web search) as ``tool_calls`` rows.

A backend that asked its provider to search (``SampleContext.native_search``) lists the searches the
response reports in ``ModelResponse.provider_calls`` (harness/backends/native_search.py). The loop
(harness/loop.py) records them through :func:`provider_call_rows`, right after the model call and
before the turn's own function calls (the provider searched while it generated the response), so:

* each is one ``tool_calls`` row of that turn: ``call_index`` 0, 1, ... (the turn's function calls
  follow), ``seq`` in the same order, the tool name and arguments as the backend gave them
  (``{"query", "sources"}`` for a search), the benchmark's own columns from the episode's
  ``emitted_columns(name, args)`` (SciExplore: the query in ``search_query``), cost 0 (the budget is
  untouched: ``budget_after`` is the budget before the turn's calls), the status given (``ok``, or
  ``tool_error`` with the API's reason in ``error_type``; a status outside the shared vocabulary
  becomes ``tool_error`` with that status as error type), ``output_chars`` the result size the
  provider showed (0: no provider returns the result text);
* they count like executed calls: in ``turns.n_tool_calls`` of their turn (so the call rows and the
  turn counts agree), in ``seq``, and, when their status is one of the episode's error statuses, in
  ``trajectories.tool_errors``; they are recorded even when the response crossed the token cap (the
  provider already ran them; the turn's function calls become ``not_executed`` as usual).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agenthop.schemas.trajectory import TOOL_CALL_STATUSES

from .backends.base import ProviderCall

TOOL_ERROR = "tool_error"

#: the loop's row builder: (sample_id, attempt, turn, call_index, seq, tool, args, columns, cost, status,
#: output_chars, budget_after, error_type) -> a tool_calls row
RowBuilder = Callable[..., dict[str, Any]]
#: the episode's ``emitted_columns(tool, args)``
Columns = Callable[[str, Any], dict[str, Any]]


def _status(call: ProviderCall) -> tuple[str, str | None]:
    if call.status in TOOL_CALL_STATUSES:
        return call.status, call.error_type
    return TOOL_ERROR, call.error_type or str(call.status)


def provider_call_rows(calls: list[ProviderCall], row: RowBuilder, sample_id: str, attempt: int, turn: int,
                       first_seq: int, columns: Columns, budget_after: int) -> list[dict[str, Any]]:
    """The ``tool_calls`` rows of one response's provider calls (see the module docstring)."""
    out: list[dict[str, Any]] = []
    for i, call in enumerate(calls or []):
        status, error_type = _status(call)
        args = dict(call.args)
        out.append(row(sample_id, attempt, turn, i, first_seq + i, call.name, args, columns(call.name, args), 0,
                       status, max(0, int(call.result_chars or 0)), budget_after, error_type))
    return out


__all__ = ["provider_call_rows"]
