"""Loopback OpenAI Responses API server (``POST /v1/responses``, non-streaming) with scripted replies.

Like the real API with ``store=false`` it checks each request before answering (a failed check
answers 400 invalid_request_error and does not use up a scripted reply):

- every function call it answered after a reasoning item comes back with that reasoning item
  (same id, same encrypted content) before it ("... was provided without its required 'reasoning'
  item");
- every ``function_call_output`` answers a function call that precedes it in ``input``;
- nothing refers to a stored response (``previous_response_id``) while ``store`` is false;
- native search: a ``web_search_call`` item it answered comes back in ``input`` unchanged (same id,
  status and action, as the API re-reads it), and it answers with such items only when the request
  declares the ``{type: web_search}`` tool (a scripted one without it is refused as a test error).

Replies are built with :func:`response` from output items (:func:`reasoning`, :func:`function_call`,
:func:`message`, :func:`web_search_call`) and usage with cached and reasoning tokens, and :func:`error`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .scripted_http import Recorded, Reply, ScriptedServer


class ResponsesServer(ScriptedServer):
    prefix = "/v1"

    def __init__(self, replies: list[Reply] | None = None,
                 responder: Callable[[Recorded], Reply] | None = None) -> None:
        super().__init__(replies, responder)
        #: call_id of every function call answered after a reasoning item -> that reasoning item
        self.required_reasoning: dict[str, dict[str, Any]] = {}
        self.refused: list[str] = []
        #: id -> every web_search_call item answered (they must come back as they were)
        self.searches: dict[str, dict[str, Any]] = {}

    def _next(self, rec: Recorded) -> Reply:
        problem = self.check(rec)
        if problem is not None:
            with self._lock:
                self.requests.append(rec)
                self.refused.append(problem)
            return error(400, problem, "invalid_request_error")
        reply = super()._next(rec)
        if reply.status == 200 and isinstance(reply.body, dict):
            last_reasoning = None
            body = rec.body if isinstance(rec.body, dict) else {}
            declared = any(t.get("type") == "web_search" for t in body.get("tools") or [])
            for item in reply.body.get("output") or []:
                if item.get("type") == "web_search_call":
                    if not declared:
                        with self._lock:
                            self.refused.append("test script: web_search_call answered without the web_search tool")
                    with self._lock:
                        self.searches[item["id"]] = item
                if item.get("type") == "reasoning":
                    last_reasoning = item
                elif item.get("type") == "function_call" and last_reasoning is not None:
                    with self._lock:
                        self.required_reasoning[item["call_id"]] = last_reasoning
        return reply

    def check(self, rec: Recorded) -> str | None:
        if rec.path != "/v1/responses":
            return f"unknown path {rec.path}"
        body = rec.body if isinstance(rec.body, dict) else {}
        if body.get("store") is False and body.get("previous_response_id"):
            return "Previous response cannot be used when store is false."
        items = body.get("input") or []
        if isinstance(items, str):
            return None
        seen_reasoning: dict[str, Any] = {}
        calls: set[str] = set()
        for item in items:
            itype = item.get("type")
            if itype == "reasoning":
                seen_reasoning[item.get("id")] = item.get("encrypted_content")
            elif itype == "function_call":
                need = self.required_reasoning.get(item.get("call_id"))
                if need is not None and seen_reasoning.get(need["id"], object()) != need.get("encrypted_content"):
                    return (f"Item '{item.get('id')}' of type 'function_call' was provided without its required "
                            f"'reasoning' item: '{need['id']}'.")
                calls.add(item.get("call_id"))
            elif itype == "web_search_call":
                sent = self.searches.get(item.get("id"))
                if sent is None or item != sent:
                    return f"Invalid 'input': web_search_call item '{item.get('id')}' does not match the call it names."
            elif itype == "function_call_output" and item.get("call_id") not in calls:
                return f"No tool call found for function call output with call_id {item.get('call_id')}."
        return None


def reasoning(rs_id: str, summary: list[str], encrypted: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": rs_id, "summary": [{"type": "summary_text", "text": s} for s in summary],
            "encrypted_content": encrypted}


def function_call(fc_id: str, call_id: str, name: str, args: dict[str, Any] | str) -> dict[str, Any]:
    arguments = args if isinstance(args, str) else json.dumps(args)
    return {"type": "function_call", "id": fc_id, "call_id": call_id, "name": name, "arguments": arguments,
            "status": "completed"}


def message(msg_id: str, text: str) -> dict[str, Any]:
    return {"type": "message", "id": msg_id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def web_search_call(ws_id: str, query: str | list[str] | None = None, *, sources: list[str] | None = None,
                    status: str = "completed", action: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``web_search_call`` output item (openai.types.responses.ResponseFunctionWebSearch): a ``search``
    action with ``query`` (a list: ``queries``) and its ``sources`` (present with
    ``include=["web_search_call.action.sources"]``), or the ``action`` given (open_page, find_in_page)."""
    if action is None:
        action = {"type": "search"}
        if isinstance(query, list):
            action["queries"] = query
        elif query is not None:
            action["query"] = query
        if sources is not None:
            action["sources"] = [{"type": "url", "url": u} for u in sources]
    return {"type": "web_search_call", "id": ws_id, "status": status, "action": action}


def cited_message(msg_id: str, text: str, urls: list[tuple[str, str]]) -> dict[str, Any]:
    """An assistant message whose text cites ``urls`` ((url, title) pairs) with url_citation annotations."""
    annotations = [{"type": "url_citation", "start_index": 0, "end_index": len(text), "url": u, "title": t}
                   for u, t in urls]
    return {"type": "message", "id": msg_id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": annotations}]}


def response(output: list[dict[str, Any]], *, input_tokens: int = 0, output_tokens: int = 0, cached: int = 0,
             reasoning_tokens: int = 0, model: str = "gpt-test") -> Reply:
    body = {"id": "resp_test", "object": "response", "created_at": 1_700_000_000, "model": model,
            "status": "completed", "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": [],
            "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached},
                      "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                      "total_tokens": input_tokens + output_tokens}}
    return Reply(200, body)


def error(status: int, message: str = "scripted error", etype: str = "server_error") -> Reply:
    return Reply(status, {"error": {"message": message, "type": etype, "param": None, "code": None}})
