"""The providers' own search tools: the tool each backend declares, and pure parsers that turn what a
response reports about the searches the provider ran into :class:`~.base.ProviderCall` records
(docs/backends.md#native-search).

Names follow the providers' own vocabulary: a search is ``web_search`` with ``{"query", "sources"}``
(``sources``: the URLs the API names, when it names any); OpenAI's ``open_page`` / ``find_in_page``
actions and Anthropic's ``web_fetch`` are ``open_page`` / ``find_in_page`` with ``{"url"}`` (and the
``pattern``). Statuses are the shared tool-call vocabulary: ``ok``, or ``tool_error`` with the API's
own reason in ``error_type``. No provider shows the result text, so ``result_chars`` is 0.

* OpenAI Responses: each ``web_search_call`` output item; a ``search`` action is one call per query
  (``query``, or each of ``queries``) with the action's ``sources``; an item whose status is not
  ``completed`` (``failed``, ``incomplete``) is a ``tool_error`` with that status as error type;
* Anthropic Messages: each ``server_tool_use`` block named ``web_search`` (its ``input.query``), with
  the URLs of the ``web_search_tool_result`` block answering it; that block's ``error_code`` makes it a
  ``tool_error``; a block no result answers is a ``tool_error`` of type ``no_result``;
* Gemini (Google Search grounding): each of the candidate's ``grounding_metadata.web_search_queries``;
  Gemini neither ties its grounding chunks to a query nor reports failed searches, so every query is
  ``ok`` and the chunks' URIs go with the first query.

The parsers take the official SDKs' response objects or the same shapes as plain dicts; they import no SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import AgentHopError
from .base import ProviderCall

SEARCH = "web_search"
OPEN_PAGE = "open_page"
FIND_IN_PAGE = "find_in_page"
OK = "ok"
TOOL_ERROR = "tool_error"

#: backends whose provider can search on its own side (``SampleContext.native_search``)
NATIVE_SEARCH_BACKENDS = ("responses", "google", "anthropic")
#: the tool a Responses request declares
RESPONSES_TOOL: dict[str, Any] = {"type": "web_search"}
#: what a Responses request includes so that search actions name their sources
RESPONSES_INCLUDE = "web_search_call.action.sources"
#: the server tool an Anthropic request declares
ANTHROPIC_TOOL: dict[str, Any] = {"type": "web_search_20250305", "name": "web_search"}


def unsupported(backend: str) -> AgentHopError:
    """The configuration error of a backend asked for native search that has none."""
    return AgentHopError(
        f"backend {backend!r} has no native search: the provider's own search tool is available with the "
        f"backends {', '.join(NATIVE_SEARCH_BACKENDS)} (use the corpus search tools with {backend!r})")


def supports_native_search(backend: str) -> bool:
    """Whether ``backend`` (a backend name) can ask its provider to search."""
    return backend in NATIVE_SEARCH_BACKENDS


def refusal(bench: Any, backend: str, condition: str, options: Mapping[str, Any]) -> AgentHopError | None:
    """The error of a run of ``bench`` (a registry :class:`~..benchmarks.Benchmark`) under ``condition``
    with ``options`` that has the provider search while ``backend`` cannot; None when it is fine.
    Checked while a run is planned, before anything is written."""
    asks = getattr(bench, "native_search", None)
    if asks is None or not asks(condition, options) or supports_native_search(backend):
        return None
    return unsupported(backend)


def _plain(obj: Any) -> Any:
    """SDK (pydantic) objects as dicts; dicts and lists as they are."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_none=True)
    if isinstance(obj, (list, tuple)):
        return [_plain(x) for x in obj]
    return obj


def _search(query: Any, sources: list[str], status: str = OK, error_type: str | None = None) -> ProviderCall:
    args: dict[str, Any] = {"query": "" if query is None else str(query)}
    if sources:
        args["sources"] = sources
    return ProviderCall(SEARCH, args, status, error_type)


def _page(tool: str, url: Any, status: str = OK, error_type: str | None = None, **extra: Any) -> ProviderCall:
    args = {"url": str(url), **extra} if url else dict(extra)
    return ProviderCall(tool, args, status, error_type)


def _urls(items: Any) -> list[str]:
    return [str(s["url"]) for s in items or [] if isinstance(s, dict) and s.get("url")]


def responses_calls(output: list[Any]) -> list[ProviderCall]:
    """The provider calls of the ``web_search_call`` items of a Responses API ``output`` list, in order."""
    out: list[ProviderCall] = []
    for item in _plain(list(output or [])):
        if not isinstance(item, dict) or item.get("type") != "web_search_call":
            continue
        item_status = item.get("status")
        status, error_type = (OK, None) if item_status == "completed" else (TOOL_ERROR, str(item_status or "unknown"))
        action = item.get("action") if isinstance(item.get("action"), dict) else {}
        kind = action.get("type")
        if kind == "search":
            sources = _urls(action.get("sources"))
            queries = [action["query"]] if action.get("query") else list(action.get("queries") or [])
            out += [_search(q, sources, status, error_type) for q in queries] or [_search("", sources, status, error_type)]
        elif kind == "open_page":
            out.append(_page(OPEN_PAGE, action.get("url"), status, error_type))
        elif kind == "find_in_page":
            out.append(_page(FIND_IN_PAGE, action.get("url"), status, error_type, pattern=action.get("pattern")))
        else:  # an action this version does not know: still a search the provider made
            out.append(_search("", [], status, error_type))
    return out


def anthropic_calls(content: list[Any]) -> list[ProviderCall]:
    """The provider calls of the ``server_tool_use`` blocks of a Messages API response's ``content``."""
    blocks = [b for b in _plain(list(content or [])) if isinstance(b, dict)]
    results = {b.get("tool_use_id"): b.get("content") for b in blocks
               if b.get("type") in ("web_search_tool_result", "web_fetch_tool_result")}
    out: list[ProviderCall] = []
    for b in blocks:
        if b.get("type") != "server_tool_use" or b.get("name") not in (SEARCH, "web_fetch"):
            continue
        has_result = b.get("id") in results
        result = results.get(b.get("id"))
        error = result.get("error_code") if isinstance(result, dict) and "error_code" in result else None
        if not has_result:
            error = "no_result"
        status = TOOL_ERROR if error else OK
        inp = b.get("input") if isinstance(b.get("input"), dict) else {}
        if b.get("name") == SEARCH:
            out.append(_search(inp.get("query"), _urls(result) if isinstance(result, list) else [], status, error))
        else:
            out.append(_page(OPEN_PAGE, inp.get("url"), status, error))
    return out


def gemini_calls(candidate: Any) -> list[ProviderCall]:
    """The provider calls of a Gemini candidate's Google Search grounding (``grounding_metadata``)."""
    raw = candidate.get("grounding_metadata") if isinstance(candidate, dict) else getattr(candidate, "grounding_metadata", None)
    meta = _plain(raw) or {}
    queries = [q for q in meta.get("web_search_queries") or [] if isinstance(q, str)]
    sources = [str(ch["web"]["uri"]) for ch in meta.get("grounding_chunks") or []
               if isinstance(ch, dict) and isinstance(ch.get("web"), dict) and ch["web"].get("uri")]
    return [_search(q, sources if i == 0 else []) for i, q in enumerate(queries)]


__all__ = [
    "ANTHROPIC_TOOL", "NATIVE_SEARCH_BACKENDS", "RESPONSES_INCLUDE", "RESPONSES_TOOL", "anthropic_calls",
    "gemini_calls", "refusal", "responses_calls", "supports_native_search", "unsupported",
]
