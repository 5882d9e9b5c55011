"""A backend that replays a script (tests; reproducing a reported trajectory by hand).

The script is one sequence shared by every conversation the backend starts (so a sample retried
after an ``error`` attempt simply continues with the next steps). A step is

* a ``ModelResponse`` (returned as is),
* an exception instance or class (raised, e.g. ``TransientBackendError("429")``),
* a callable ``step(conv) -> ModelResponse | BaseException`` that sees the conversation so far.

Every conversation records what the loop sent it (``messages``: system, user, assistant, tool
results with their footers, nudges, advisories) and a snapshot of the history at each ``complete()``.
Helpers ``call(...)``, ``reply(...)`` and ``say(...)`` build responses tersely.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any, Union

from .base import ModelResponse, SampleContext, ToolCall

Step = Union[ModelResponse, BaseException, type, Callable[["ScriptedConversation"], Any]]

_ids = itertools.count()


class ScriptExhausted(BaseException):
    """The loop asked for more model calls than the script holds (a test bug: a BaseException, so
    that the loop's rule "any backend exception is an error turn" does not swallow it)."""


def call(name: str, call_id: str | None = None, **args: Any) -> ToolCall:
    """A tool call with keyword arguments: ``call("lookup", id="p1", part="A")``."""
    return ToolCall(id=call_id or f"call_{next(_ids)}", name=name, args=dict(args))


def reply(
    *calls: ToolCall,
    text: str = "",
    prompt: int = 100,
    completion: int = 10,
    cache_read: int = 0,
    cache_creation: int = 0,
) -> ModelResponse:
    """A response carrying ``calls`` (and optional text) with the given token counts."""
    return ModelResponse(
        text=text,
        tool_calls=list(calls),
        prompt_tokens=prompt,
        completion_tokens=completion,
        cache_read_tokens=cache_read,
        cache_creation_tokens=cache_creation,
    )


def say(text: str, prompt: int = 100, completion: int = 10) -> ModelResponse:
    """A text-only response."""
    return reply(text=text, prompt=prompt, completion=completion)


class ScriptedConversation:
    def __init__(self, backend: ScriptedBackend, ctx: SampleContext) -> None:
        self.backend = backend
        self.ctx = ctx
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "name": None, "tool_call_id": None, "content": ctx.system_prompt},
            {"role": "user", "name": None, "tool_call_id": None, "content": ctx.user_prompt},
        ]
        #: history length at each complete() call
        self.calls_seen: list[int] = []

    async def complete(self) -> ModelResponse:
        self.calls_seen.append(len(self.messages))
        step = self.backend._next_step()
        if isinstance(step, type) and issubclass(step, BaseException):
            raise step()
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, ModelResponse):
            return step
        result = step(self)
        if isinstance(result, BaseException):
            raise result
        return result

    def add_assistant(self, response: ModelResponse) -> None:
        self.messages.append(
            {
                "role": "assistant",
                "name": None,
                "tool_call_id": None,
                "content": response.text,
                "tool_calls": [(c.id, c.name, c.args) for c in response.tool_calls],
            }
        )

    def add_tool_results(self, results: list[tuple[ToolCall, str]]) -> None:
        for c, text in results:
            self.messages.append({"role": "tool", "name": c.name, "tool_call_id": c.id, "content": text})

    def add_user(self, text: str) -> None:
        self.messages.append({"role": "user", "name": None, "tool_call_id": None, "content": text})

    def transcript(self) -> list[dict[str, Any]]:
        return [
            {"role": m["role"], "name": m["name"], "tool_call_id": m["tool_call_id"], "content": m["content"]}
            for m in self.messages
        ]

    # conveniences for assertions
    def tool_messages(self) -> list[str]:
        return [m["content"] for m in self.messages if m["role"] == "tool"]

    def user_messages(self) -> list[str]:
        return [m["content"] for m in self.messages if m["role"] == "user"]


class ScriptedBackend:
    name = "scripted"

    def __init__(self, script: Iterable[Step]) -> None:
        self._script = list(script)
        self._pos = 0
        self.contexts: list[SampleContext] = []
        self.conversations: list[ScriptedConversation] = []

    def start(self, ctx: SampleContext) -> ScriptedConversation:
        if ctx.native_search:  # no search tool of its own (harness/backends/native_search.py)
            from .native_search import unsupported

            raise unsupported("scripted")
        self.contexts.append(ctx)
        conv = ScriptedConversation(self, ctx)
        self.conversations.append(conv)
        return conv

    def _next_step(self) -> Step:
        if self._pos >= len(self._script):
            raise ScriptExhausted(f"script exhausted after {self._pos} model calls")
        step = self._script[self._pos]
        self._pos += 1
        return step

    @property
    def steps_used(self) -> int:
        return self._pos

    @property
    def remaining(self) -> int:
        return len(self._script) - self._pos
