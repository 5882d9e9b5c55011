"""A loopback provider that plays a simple agent over the OpenAI chat-completions or Anthropic Messages
protocol, with latency, a requests-per-minute limit answered by the provider's 429 headers, and faults
injected per conversation (for runner tests and bench/harness_real.py).

The agent: ``think_turns`` turns that each call ``think``, then one turn that calls ``submit_answer``
with answer A, so a sample costs ``think_turns + 1`` model calls. A conversation is told apart by its
system prompt (which holds the question); ``fault(system_prompt)`` names a fault for it or None:

- ``surrogate``: the text and the think argument contain a lone surrogate escape (``\\ud800``);
- ``html``: an HTTP 200 whose body is an HTML page;
- ``truncated``: JSON cut in the middle;
- ``empty``: ``{"choices": []}`` (openai) / a message without content (anthropic);
- ``echo``: the text and the submit reasoning repeat the request's API key and Host header.

Every request's headers are recorded (``headers``); ``n_requests`` / ``n_429`` count answers.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import Any

from .loopback import Loopback, QuietHandler

Fault = Callable[[str], str | None]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


class RpmBucket:
    """Token bucket of ``rpm`` requests per minute with one second of burst (thread-safe)."""

    def __init__(self, rpm: float) -> None:
        self.rate = rpm / 60.0
        self.capacity = max(1.0, self.rate)
        self.tokens = self.capacity
        self.t = time.monotonic()
        self.lock = threading.Lock()

    def take(self) -> float:
        """0 when a request may pass (and takes a token), else the seconds until the next token."""
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.capacity, self.tokens + (now - self.t) * self.rate)
            self.t = now
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return 0.0
            return (1.0 - self.tokens) / self.rate


class FakeProvider:
    def __init__(self, protocol: str = "openai", *, latency_s: float = 0.0, rpm: float | None = None,
                 think_turns: int = 3, fault: Fault | None = None, prompt_tokens: int = 500,
                 completion_tokens: int = 40) -> None:
        assert protocol in ("openai", "anthropic")
        self.protocol = protocol
        self.latency_s = latency_s
        self.bucket = RpmBucket(rpm) if rpm else None
        self.think_turns = think_turns
        self.fault = fault
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.headers: list[dict[str, str]] = []
        self.n_requests = 0
        self.n_429 = 0
        self._lock = threading.Lock()
        self._serving: Loopback | None = None

    @property
    def base_url(self) -> str:
        assert self._serving is not None
        return f"http://127.0.0.1:{self._serving.port}" + ("/v1" if self.protocol == "openai" else "")

    # -- protocol ----------------------------------------------------------------------------
    def _system_and_turn(self, body: dict[str, Any]) -> tuple[str, int]:
        if self.protocol == "openai":
            msgs = body.get("messages") or []
            system = next((m.get("content") or "" for m in msgs if m.get("role") == "system"), "")
        else:
            msgs = body.get("messages") or []
            system = " ".join(b.get("text", "") for b in body.get("system") or [])
        turn = sum(1 for m in msgs if m.get("role") == "assistant")
        return str(system), turn

    def _calls(self, turn: int, key: str, host: str, echo: bool) -> tuple[str, list[tuple[str, str, str]]]:
        text = f"Turn {turn}: thinking."
        if echo:
            text += f" My key is {key} and I live at {host}."
        if turn < self.think_turns:
            return text, [(f"c{turn}", "think", json.dumps({"thought": "step"}))]
        reasoning = f"echo {key} at {host}" if echo else "because"
        return text, [(f"c{turn}", "submit_answer", json.dumps({"answer": "A", "reasoning": reasoning}))]

    def _openai_body(self, text: str, calls: list[tuple[str, str, str]]) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 1_700_000_000, "model": "fake",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": text,
                "tool_calls": [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                               for i, n, a in calls]}}],
            "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                      "total_tokens": self.prompt_tokens + self.completion_tokens},
        }

    def _anthropic_body(self, text: str, calls: list[tuple[str, str, str]]) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
        blocks += [{"type": "tool_use", "id": i, "name": n, "input": json.loads(a)} for i, n, a in calls]
        return {"id": "msg_fake", "type": "message", "role": "assistant", "model": "fake", "content": blocks,
                "stop_reason": "tool_use", "stop_sequence": None,
                "usage": {"input_tokens": self.prompt_tokens, "output_tokens": self.completion_tokens}}

    def answer(self, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body bytes) of one request."""
        with self._lock:
            self.n_requests += 1
            self.headers.append(headers)
        if self.bucket is not None:
            wait = self.bucket.take()
            if wait > 0:
                with self._lock:
                    self.n_429 += 1
                return self._too_many(wait)
        if self.latency_s:
            time.sleep(self.latency_s)
        system, turn = self._system_and_turn(body if isinstance(body, dict) else {})
        fault = self.fault(system) if self.fault else None
        if fault == "html":
            return 200, {"Content-Type": "text/html"}, b"<html><body><h1>502 Bad Gateway</h1></body></html>"
        if fault == "empty":
            payload = {"choices": []} if self.protocol == "openai" else {"id": "m", "type": "message"}
            return 200, {"Content-Type": "application/json"}, json.dumps(payload).encode()
        auth = headers.get("authorization", "").removeprefix("Bearer ") or headers.get("x-api-key", "")
        text, calls = self._calls(turn, auth, headers.get("host", ""), fault == "echo")
        build = self._openai_body if self.protocol == "openai" else self._anthropic_body
        raw = json.dumps(build(text, calls))
        if fault == "surrogate":
            raw = raw.replace("thinking.", "thinking \\ud800 hard.").replace('\\"step\\"', '\\"st\\\\udc00ep\\"')
        data = raw.encode()
        if fault == "truncated":
            data = data[: len(data) // 2]
        return 200, {"Content-Type": "application/json"}, data

    def _too_many(self, wait: float) -> tuple[int, dict[str, str], bytes]:
        if self.protocol == "openai":
            hdrs = {"retry-after-ms": str(max(1, round(wait * 1000))), "retry-after": str(max(1, math.ceil(wait))),
                    "x-ratelimit-limit-requests": str(round(self.bucket.rate * 60)) if self.bucket else "0",
                    "x-ratelimit-remaining-requests": "0",
                    "x-ratelimit-reset-requests": f"{wait:.3f}s"}
            body = {"error": {"message": "Rate limit reached for requests", "type": "requests",
                              "param": None, "code": "rate_limit_exceeded"}}
        else:
            hdrs = {"retry-after": str(max(1, math.ceil(wait)))}
            body = {"type": "error", "error": {"type": "rate_limit_error", "message": "rate limited"}}
        hdrs["Content-Type"] = "application/json"
        return 429, hdrs, json.dumps(body).encode()

    # -- lifecycle -------------------------------------------------------------------------------
    def __enter__(self) -> FakeProvider:
        provider = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802
                raw = self.read_body()
                try:
                    body = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    body = None
                status, hdrs, payload = provider.answer(body, self.lower_headers())
                self.answer(status, [*hdrs.items(), ("Content-Length", str(len(payload)))], payload)

        self._serving = Loopback(_Server(("127.0.0.1", 0), Handler), 0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._serving is not None
        self._serving.stop()
