"""The searches a provider's own search tool made, as call records (docs/sciexplore.md#native-search).

With native search the provider searches on its side and reports what it did in the response; these
pure functions read those reports (the official SDKs' objects, or the same shapes as plain dicts)
and return one :class:`~.search_tools.CallRecord` per search, tool ``web_search`` with its query and
the sources the API names, so native runs count search effort like corpus runs:

* OpenAI Responses: each ``web_search_call`` output item; a ``search`` action gives one record per
  query (``query``, or each of ``queries``) with the action's ``sources``; ``open_page`` and
  ``find_in_page`` actions give ``open_page`` / ``find_in_page`` records with the URL as target; an
  item whose status is ``failed`` is a ``tool_error``;
* Anthropic Messages: each ``server_tool_use`` block named ``web_search`` (its ``input.query``), with
  the URLs of the matching ``web_search_tool_result`` block, or ``tool_error`` and the API's
  ``error_code`` when that block holds an error; ``web_fetch`` blocks become ``open_page`` records;
* Gemini (Google Search grounding): each of a candidate's ``grounding_metadata.web_search_queries``;
  Gemini does not tie its grounding chunks to a query, so their URIs go with the first query.

The provider does not show us the result text, so ``result_chars`` is 0.
"""

from __future__ import annotations

from typing import Any

from .search_tools import OK, TOOL_ERROR, CallRecord


def _plain(obj: Any) -> Any:
    """SDK (pydantic) objects as dicts; dicts and lists as they are."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_none=True)
    if isinstance(obj, list):
        return [_plain(x) for x in obj]
    return obj


def _search(query: str, sources: list[str], status: str = OK, error_type: str | None = None) -> CallRecord:
    args: dict[str, Any] = {"query": query}
    if sources:
        args["sources"] = sources
    return CallRecord("web_search", args, status, 0, query=query, error_type=error_type)


def _page(tool: str, url: str | None, status: str = OK, error_type: str | None = None, **extra: Any) -> CallRecord:
    return CallRecord(tool, {"url": url, **extra} if url else dict(extra), status, 0, target=url,
                      error_type=error_type)


def openai_responses_searches(output: list[Any]) -> list[CallRecord]:
    """Records of the ``web_search_call`` items of a Responses API ``output`` list."""
    out: list[CallRecord] = []
    for item in _plain(list(output)):
        if not isinstance(item, dict) or item.get("type") != "web_search_call":
            continue
        status = TOOL_ERROR if item.get("status") == "failed" else OK
        error_type = "failed" if status == TOOL_ERROR else None
        action = item.get("action") or {}
        kind = action.get("type")
        if kind == "search":
            sources = [s["url"] for s in action.get("sources") or [] if isinstance(s, dict) and s.get("url")]
            queries = [action["query"]] if action.get("query") else list(action.get("queries") or [])
            out += [_search(q, sources, status, error_type) for q in queries] or [_search("", sources, status, error_type)]
        elif kind == "open_page":
            out.append(_page("open_page", action.get("url"), status, error_type))
        elif kind == "find_in_page":
            out.append(_page("find_in_page", action.get("url"), status, error_type, pattern=action.get("pattern")))
        else:  # an action this version does not know: still a search the provider made
            out.append(_search("", [], status, error_type))
    return out


def anthropic_searches(content: list[Any]) -> list[CallRecord]:
    """Records of the ``server_tool_use`` blocks of a Messages API response's ``content``."""
    blocks = [b for b in _plain(list(content)) if isinstance(b, dict)]
    results = {b.get("tool_use_id"): b.get("content") for b in blocks
               if b.get("type") in ("web_search_tool_result", "web_fetch_tool_result")}
    out: list[CallRecord] = []
    for b in blocks:
        if b.get("type") != "server_tool_use":
            continue
        result = results.get(b.get("id"))
        error = result.get("error_code") if isinstance(result, dict) and "error_code" in result else None
        status = TOOL_ERROR if error else OK
        inp = b.get("input") or {}
        if b.get("name") == "web_search":
            sources = [r["url"] for r in result or [] if isinstance(r, dict) and r.get("url")] \
                if isinstance(result, list) else []
            out.append(_search(str(inp.get("query", "")), sources, status, error))
        elif b.get("name") == "web_fetch":
            out.append(_page("open_page", inp.get("url"), status, error))
    return out


def gemini_searches(candidate: Any) -> list[CallRecord]:
    """Records of a Gemini candidate's Google Search grounding (``grounding_metadata``)."""
    c = _plain(candidate) or {}
    meta = c.get("grounding_metadata") or {}
    queries = list(meta.get("web_search_queries") or [])
    sources = [ch["web"]["uri"] for ch in meta.get("grounding_chunks") or []
               if isinstance(ch, dict) and isinstance(ch.get("web"), dict) and ch["web"].get("uri")]
    return [_search(q, sources if i == 0 else []) for i, q in enumerate(queries)]
