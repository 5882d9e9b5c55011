"""What the agent loop keeps of a model's reply, and what it sends back (docs/harness.md#hostile-replies).

Pure functions over :class:`~agenthop.harness.backends.base.ModelResponse`:

* :func:`reply_problem`: why the trajectory store cannot hold a reply, or None. Ingest refuses a text
  value above ``MAX_TEXT_BYTES`` (schemas/limits.py) and a tool call without a name, so a reply whose
  text, a call's name or a call's arguments (as ``args_json``) passes the cap, or that has a call with
  an empty name, is not used: the loop records an error turn naming the problem (with the reply's
  tokens, which were paid for) and asks again, like after any other bad answer of a backend.
* :func:`resent_reply` and :func:`resent_text`: what goes back into the conversation. A text, a call's
  name and every string argument longer than ``MAX_RESENT_CHARS`` characters are sent back cut to that
  length with a note ``… (N characters more)``; the store keeps them whole. A reply that had to be cut
  is sent back rebuilt from its text and calls (its provider-specific parts, such as reasoning blocks,
  are not sent back). Each request then stays bounded however long the model's output grows.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from agenthop.schemas.limits import MAX_TEXT_BYTES, bytes_over_cap

from .backends.base import ModelResponse, ToolCall

#: characters of one text sent back to the model (a tool result, a reply's text, a call's name, one
#: string argument); above the longest text a built-in tool returns (an AgentHop section: 70,015)
MAX_RESENT_CHARS = 100_000

_CAP = f"the {MAX_TEXT_BYTES // (1024 * 1024)} MiB ({MAX_TEXT_BYTES:,}-byte) cap of one stored text"

_dumps = json.JSONEncoder(ensure_ascii=False, default=str).encode


def args_json(args: Any) -> str:
    """A call's arguments as the store's ``args_json`` text."""
    try:
        return _dumps(args)
    except (TypeError, ValueError, RecursionError):
        return json.dumps(str(args))


def _shown(name: str) -> str:
    return repr(name if len(name) <= 40 else name[:37] + "...")


def reply_problem(resp: ModelResponse) -> str | None:
    """Why the store cannot hold ``resp`` (the text of an error turn), or None."""
    if n := bytes_over_cap(resp.text or ""):
        return f"the reply's text has {n:,} bytes, above {_CAP}; the reply was not used"
    calls = [(c.name, c.args) for c in resp.tool_calls or []]
    calls += [(c.name, c.args) for c in resp.provider_calls or []]
    for i, (name, args) in enumerate(calls):
        if not isinstance(name, str) or not name.strip():
            return f"tool call {i} of the reply has an empty name; the reply was not used"
        if n := bytes_over_cap(name):
            return f"tool call {i} of the reply has a name of {n:,} bytes, above {_CAP}; the reply was not used"
        if n := bytes_over_cap(args_json(args)):
            return (f"tool call {i} ({_shown(name)}) of the reply has arguments of {n:,} bytes, above {_CAP}; "
                    "the reply was not used")
    return None


def resent_text(text: str, limit: int = MAX_RESENT_CHARS) -> str:
    """``text`` cut to ``limit`` characters with a note of how many more it had."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"… ({len(text) - limit:,} characters more)"


def _resent_args(args: Any) -> Any:
    if len(args_json(args)) <= MAX_RESENT_CHARS:
        return args
    if isinstance(args, dict):
        cut = {k: resent_text(v) if isinstance(v, str) else v for k, v in args.items()}
        if len(args_json(cut)) <= 2 * MAX_RESENT_CHARS:
            return cut
    return {"_raw": resent_text(args_json(args))}


def resent_reply(resp: ModelResponse) -> ModelResponse:
    """``resp`` as it is sent back to the model: itself, or rebuilt with long texts cut (module docstring)."""
    calls = [ToolCall(c.id, resent_text(c.name), _resent_args(c.args)) for c in resp.tool_calls]
    text = resent_text(resp.text or "")
    if text == (resp.text or "") and all(a.name == b.name and a.args is b.args
                                          for a, b in zip(calls, resp.tool_calls)):
        return resp
    return dataclasses.replace(resp, text=text, tool_calls=calls, raw=None)
