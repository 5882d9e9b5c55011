"""A scripted JSON HTTP server on 127.0.0.1 (ephemeral port) running in a background thread.

Each POST pops the next scripted ``Reply`` and answers with its status, headers and JSON body;
every request (method, path, headers, parsed JSON body) is recorded for assertions. When the
script is exhausted the server answers 500 with a body that says so, so a test that makes more
calls than it scripted fails loudly instead of hanging.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from .loopback import Loopback, QuietHandler


@dataclass(slots=True)
class Reply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    #: seconds to wait before answering (to provoke client-side timeouts)
    delay_s: float = 0.0


@dataclass(slots=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class ScriptedServer:
    """Context manager: ``with ScriptedServer([...]) as srv: srv.base_url ...``."""

    #: path prefix the SDK's base URL should include (e.g. '/v1' for OpenAI-compatible servers)
    prefix = ""

    def __init__(self, replies: list[Reply] | None = None,
                 responder: Callable[[Recorded], Reply] | None = None) -> None:
        self.replies: deque[Reply] = deque(replies or [])
        #: answers a request once the scripted replies are used up (an agent played by the server)
        self.responder = responder
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._serving: Loopback | None = None

    # -- script ------------------------------------------------------------------------------
    def push(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def _next(self, rec: Recorded) -> Reply:
        with self._lock:
            self.requests.append(rec)
            if self.replies:
                return self.replies.popleft()
        if self.responder is not None:
            return self.responder(rec)
        return Reply(500, {"error": {"type": "script_exhausted", "message": "no scripted reply left"}})

    @property
    def port(self) -> int:
        assert self._serving is not None
        return self._serving.port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> ScriptedServer:
        server = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                raw = self.read_body()
                try:
                    body: Any = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                reply = server._next(Recorded("POST", self.path, self.lower_headers(), body))
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                payload = json.dumps(reply.body).encode()
                self.answer(reply.status, [("Content-Type", "application/json"),
                                           ("Content-Length", str(len(payload))), *reply.headers.items()], payload)

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        self._serving = Loopback(httpd, 0.02, name="scripted-http")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._serving is not None
        self._serving.stop()
