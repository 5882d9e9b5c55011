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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

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
        assert self._httpd is not None
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> ScriptedServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                rec = Recorded("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                reply = server._next(rec)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                payload = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return  # keep test output quiet

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.02,), name="scripted-http", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._httpd is not None and self._thread is not None
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
