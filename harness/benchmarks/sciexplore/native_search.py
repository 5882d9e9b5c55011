"""The searches a provider's own search tool made, as SciExplore call records (docs/sciexplore.md#native-search).

The parsing is the backends' (``harness/backends/native_search.py``: they fill
``ModelResponse.provider_calls`` from the same reports); these pure functions give the same calls as
:class:`~.search_tools.CallRecord`, so native runs count search effort like corpus runs: a
``web_search`` record has the query (``query``) and the sources the API names (``args["sources"]``),
an ``open_page`` / ``find_in_page`` record the URL as target; ``result_chars`` is 0 (the provider does
not show the result text).
"""

from __future__ import annotations

from typing import Any

from ...backends import native_search as core
from ...backends.base import ProviderCall
from .search_tools import CallRecord


def call_record(call: ProviderCall) -> CallRecord:
    """One provider call as a call record (query for searches, the URL as target for page reads)."""
    search = call.name == core.SEARCH
    url = call.args.get("url")
    return CallRecord(call.name, dict(call.args), call.status, call.result_chars,
                      query=str(call.args.get("query", "")) if search else None,
                      target=None if search or url is None else str(url), error_type=call.error_type)


def openai_responses_searches(output: list[Any]) -> list[CallRecord]:
    """Records of the ``web_search_call`` items of a Responses API ``output`` list."""
    return [call_record(c) for c in core.responses_calls(output)]


def anthropic_searches(content: list[Any]) -> list[CallRecord]:
    """Records of the ``server_tool_use`` blocks of a Messages API response's ``content``."""
    return [call_record(c) for c in core.anthropic_calls(content)]


def gemini_searches(candidate: Any) -> list[CallRecord]:
    """Records of a Gemini candidate's Google Search grounding (``grounding_metadata``)."""
    return [call_record(c) for c in core.gemini_calls(candidate)]
