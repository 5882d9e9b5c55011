"""Loopback Gemini REST server (``models/{model}:generateContent``, non-streaming) with scripted replies.

Like the real API it checks each request before answering (a failed check answers 400
INVALID_ARGUMENT and does not use up a scripted reply):

- the path is ``/v1beta/models/{model}:generateContent`` (or ``/v1/...``) and a key is sent in
  ``x-goog-api-key``;
- function declarations use Gemini's Schema form (upper-case type names, only Schema fields: no
  ``default``);
- every function call it answered with a ``thoughtSignature`` comes back with exactly that
  signature on that part (Gemini 3: "Function call is missing a thought_signature");
- a model turn with function calls is followed by a user turn with the same number of
  ``functionResponse`` parts, same names, same order;
- every tool is one of the Tool fields the API knows (``functionDeclarations``, ``googleSearch``,
  ...; the SDK sends them in camelCase), and a reply with ``groundingMetadata`` (Google Search
  grounding) is only sent to a request that declares ``googleSearch`` (else a test error).

Replies are built with :func:`response` from parts (:func:`text`, :func:`thought`,
:func:`function_call`), usage metadata (``toolUsePromptTokenCount`` too) and the candidate's
:func:`grounding` metadata, and :func:`error` (a Google error body with a status
name and an optional RetryInfo delay).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from .scripted_http import Recorded, Reply, ScriptedServer

_PATH = re.compile(r"^/(v1|v1beta)/models/([^/:]+):generateContent$")
_TYPES = {"STRING", "INTEGER", "NUMBER", "BOOLEAN", "ARRAY", "OBJECT"}
_SCHEMA_FIELDS = {"type", "format", "description", "nullable", "enum", "properties", "required", "items",
                  "minimum", "maximum", "minItems", "maxItems", "min_items", "max_items"}
MISSING_SIGNATURE = ("Function call is missing a thought_signature in functionCall parts. This is required for "
                     "tools to work correctly, and missing thought_signature may lead to degraded model "
                     "performance.")
_TOOL_FIELDS = {"functionDeclarations", "googleSearch", "googleSearchRetrieval", "codeExecution", "urlContext",
                "retrieval", "googleMaps", "fileSearch", "computerUse", "enterpriseWebSearch", "mcpServers"}
COUNT_MISMATCH = ("Please ensure that the number of function response parts is equal to the number of function "
                  "call parts of the function call turn.")


def _key(name: str, args: Any) -> str:
    return json.dumps([name, args], sort_keys=True)


class GeminiServer(ScriptedServer):
    prefix = ""

    def __init__(self, replies: list[Reply] | None = None,
                 responder: Callable[[Recorded], Reply] | None = None) -> None:
        super().__init__(replies, responder)
        #: (name, args) of every function call answered with a signature -> the signatures
        self.signatures: dict[str, set[str]] = {}
        #: requests refused by a check, with the reason
        self.refused: list[str] = []

    @property
    def models(self) -> list[str]:
        return [m.group(2) for r in self.requests if (m := _PATH.match(r.path))]

    def _next(self, rec: Recorded) -> Reply:
        problem = self.check(rec)
        if problem is not None:
            with self._lock:
                self.requests.append(rec)
                self.refused.append(problem[1])
            return error(problem[0], "INVALID_ARGUMENT" if problem[0] == 400 else "NOT_FOUND", problem[1])
        reply = super()._next(rec)
        if reply.status == 200 and isinstance(reply.body, dict):
            body = rec.body if isinstance(rec.body, dict) else {}
            searching = any("googleSearch" in t for t in body.get("tools") or [])
            for cand in reply.body.get("candidates") or []:
                if "groundingMetadata" in cand and not searching:
                    with self._lock:
                        self.refused.append("test script: grounding answered without the googleSearch tool")
                for part in (cand.get("content") or {}).get("parts") or []:
                    if "functionCall" in part and part.get("thoughtSignature"):
                        fc = part["functionCall"]
                        with self._lock:
                            self.signatures.setdefault(_key(fc.get("name"), fc.get("args") or {}), set()).add(
                                part["thoughtSignature"])
        return reply

    def check(self, rec: Recorded) -> tuple[int, str] | None:
        if not _PATH.match(rec.path):
            return 404, f"unknown path {rec.path}"
        if not rec.headers.get("x-goog-api-key"):
            return 400, "API key not valid. Please pass a valid API key."
        body = rec.body if isinstance(rec.body, dict) else {}
        for tool in body.get("tools") or []:
            unknown = set(tool) - _TOOL_FIELDS
            if unknown:
                return 400, f'Invalid JSON payload received. Unknown name "{sorted(unknown)[0]}" at \'tools[0]\': Cannot find field.'
            for decl in tool.get("functionDeclarations") or []:
                problem = _schema_problem(decl.get("parameters") or {}, f"function {decl.get('name')}")
                if problem:
                    return 400, problem
        contents = body.get("contents") or []
        for i, content in enumerate(contents):
            if content.get("role") != "model":
                continue
            calls = [p for p in content.get("parts") or [] if "functionCall" in p]
            for part in calls:
                fc = part["functionCall"]
                sent = self.signatures.get(_key(fc.get("name"), fc.get("args") or {}))
                if sent and part.get("thoughtSignature") not in sent:
                    return 400, MISSING_SIGNATURE
            if calls and i + 1 < len(contents):
                nxt = contents[i + 1]
                responses = [p["functionResponse"] for p in nxt.get("parts") or [] if "functionResponse" in p]
                if nxt.get("role") != "user" or [r.get("name") for r in responses] != [
                        p["functionCall"].get("name") for p in calls]:
                    return 400, COUNT_MISMATCH
        return None


def _schema_problem(schema: Any, where: str) -> str | None:
    if not isinstance(schema, dict):
        return f"{where}: schema must be an object"
    for key in schema:
        if key not in _SCHEMA_FIELDS:
            return f'Invalid JSON payload received. Unknown name "{key}" at \'{where}\': Cannot find field.'
    if "type" in schema and schema["type"] not in _TYPES:
        return f"{where}: invalid type {schema['type']!r}"
    for name, sub in (schema.get("properties") or {}).items():
        problem = _schema_problem(sub, f"{where}.{name}")
        if problem:
            return problem
    if "items" in schema:
        return _schema_problem(schema["items"], f"{where}[]")
    return None


def text(value: str, signature: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"text": value}
    if signature:
        part["thoughtSignature"] = signature
    return part


def thought(value: str) -> dict[str, Any]:
    return {"text": value, "thought": True}


def function_call(name: str, args: dict[str, Any], signature: str | None = None,
                  call_id: str | None = None) -> dict[str, Any]:
    fc: dict[str, Any] = {"name": name, "args": args}
    if call_id:
        fc["id"] = call_id
    part: dict[str, Any] = {"functionCall": fc}
    if signature:
        part["thoughtSignature"] = signature
    return part


def grounding(queries: list[str], chunks: list[tuple[str, str]], text: str = "") -> dict[str, Any]:
    """A candidate's ``groundingMetadata`` after Google Search grounding (google.genai.types.GroundingMetadata):
    the queries run, the web chunks ((uri, title) pairs), one support tying ``text`` to every chunk, and
    the search entry point (the HTML suggestions widget)."""
    meta: dict[str, Any] = {
        "webSearchQueries": queries,
        "groundingChunks": [{"web": {"uri": uri, "title": title}} for uri, title in chunks],
        "searchEntryPoint": {"renderedContent": "<div class=\"container\">suggestions</div>"},
    }
    if text and chunks:
        meta["groundingSupports"] = [{"segment": {"startIndex": 0, "endIndex": len(text.encode()), "text": text},
                                      "groundingChunkIndices": list(range(len(chunks))),
                                      "confidenceScores": [0.9] * len(chunks)}]
    return meta


def response(parts: list[dict[str, Any]], *, prompt: int = 0, candidates: int = 0, cached: int | None = None,
             thoughts: int | None = None, tool_prompt: int | None = None,
             grounding_metadata: dict[str, Any] | None = None, model: str = "gemini-test") -> Reply:
    usage: dict[str, Any] = {"promptTokenCount": prompt, "candidatesTokenCount": candidates,
                             "totalTokenCount": prompt + candidates + (thoughts or 0) + (tool_prompt or 0)}
    if cached is not None:
        usage["cachedContentTokenCount"] = cached
    if thoughts is not None:
        usage["thoughtsTokenCount"] = thoughts
    if tool_prompt is not None:
        usage["toolUsePromptTokenCount"] = tool_prompt
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
    if grounding_metadata is not None:
        candidate["groundingMetadata"] = grounding_metadata
    body = {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model, "responseId": "resp-test"}
    return Reply(200, body)


def error(status: int, status_name: str, message: str = "scripted error", retry_delay: str | None = None) -> Reply:
    err: dict[str, Any] = {"code": status, "message": message, "status": status_name}
    if retry_delay is not None:
        err["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}]
    return Reply(status, {"error": err})
