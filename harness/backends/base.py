"""The one small interface every agent backend implements (sim, openai, anthropic, scripted).

The loop (``harness/loop.py``) owns caps, budget, tool execution and accounting. A backend only
turns a conversation into the next model response and keeps its own provider-native history:

    conv = backend.start(ctx)                      # system prompt, first user message, tool specs
    resp = await conv.complete()                   # one model call = one turn
    conv.add_assistant(resp)                       # keep the response in history
    conv.add_tool_results([(call, text), ...])     # results (with footer) of the executed calls
    conv.add_user(text)                            # nudges and advisories

Errors: raise ``TransientBackendError`` for rate limits, 5xx and timeouts (the loop retries the
same turn with backoff, without using a turn) and ``BackendError`` for anything else (the loop
records an ``error`` turn). Detection must use exception types and HTTP status codes, never
substrings of messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol



class BackendError(Exception):
    """A non-transient model-call failure; costs a turn."""


class TransientBackendError(BackendError):
    """Rate limit (429), server error (5xx), overload or timeout; retried without using a turn.

    ``retry_after``: seconds the server asked to wait (Retry-After, retry-after-ms, x-ratelimit-reset-*,
    Gemini's RetryInfo), None when it named none; ``rate_limited``: the server said 429 / quota, which
    also makes the endpoint's limiter pause and lower its concurrency (harness/limiter.py).
    """

    def __init__(self, message: str = "", *, retry_after: float | None = None, rate_limited: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.rate_limited = rate_limited


@dataclass(slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments


@dataclass(slots=True)
class ToolCall:
    id: str
    name: str
    #: parsed arguments, normally a dict; ``{"_raw": text}`` when the provider sent malformed JSON,
    #: the value itself when it sent valid JSON that is not an object
    args: Any


@dataclass(slots=True)
class ProviderCall:
    """A tool call the provider ran on its own side (native web search): recorded, never executed here.

    ``name`` is the benchmark's tool name the call counts as (``web_search``, ``open_page``), ``args``
    its arguments as the API reported them (``{"query": ...}``, plus ``sources`` where the API names
    them), ``status`` the shared tool-call status vocabulary.
    """

    name: str
    args: dict[str, Any]
    status: str = "ok"
    error_type: str | None = None
    result_chars: int = 0


@dataclass(slots=True)
class ModelResponse:
    text: str
    tool_calls: list[ToolCall]
    prompt_tokens: int  # regular (non-cached) input tokens of this call
    completion_tokens: int
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    #: provider-native payload the conversation needs to replay this turn (e.g. thinking blocks)
    raw: Any = None
    #: lone surrogates replaced by U+FFFD in this response's text, tool calls and payload
    repaired_chars: int = 0
    #: searches (and page fetches) the provider ran itself during this call, in order
    provider_calls: list[ProviderCall] = field(default_factory=list)


@dataclass(slots=True)
class SampleContext:
    """What a backend may know about the sample it is answering."""

    #: the benchmark's item (its ``id`` is the sample id)
    item: Any
    system_prompt: str
    user_prompt: str
    tools: list[ToolSpec]
    condition: str
    #: only simulated policies look at these (docs/simulated_agents.md); real backends must ignore them
    labels: list[Any] = field(default_factory=list)
    graph: Any = None
    papers: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    attempt: int = 0
    #: tools after whose results a backend with prompt caching moves its cache breakpoint (the
    #: benchmark's choice: the calls that bring in large, reused text)
    cache_after_tools: frozenset[str] = frozenset()
    #: ask the provider to search with its own search tool (OpenAI Responses ``web_search``, Gemini
    #: Google Search grounding, Anthropic's web search tool); backends without one raise BackendError
    native_search: bool = False


class Conversation(Protocol):
    async def complete(self) -> ModelResponse: ...

    def add_assistant(self, response: ModelResponse) -> None: ...

    def add_tool_results(self, results: list[tuple[ToolCall, str]]) -> None: ...

    def add_user(self, text: str) -> None: ...

    def transcript(self) -> list[dict[str, Any]]:
        """Messages as dicts with keys role, name, tool_call_id, content (for the messages table)."""
        ...


class Backend(Protocol):
    name: str  # 'sim', 'openai', 'anthropic', ...

    def start(self, ctx: SampleContext) -> Conversation: ...
