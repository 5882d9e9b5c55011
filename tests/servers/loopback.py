"""What the loopback test servers share: a quiet request handler that reads a POST body and writes
an answer, and an HTTP server on 127.0.0.1 (ephemeral port) served from a background thread."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive, no log lines; subclasses answer in ``do_POST``."""

    protocol_version = "HTTP/1.1"

    def read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def lower_headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def answer(self, status: int, headers: Iterable[tuple[str, str]], payload: bytes) -> None:
        """Send ``status``, ``headers`` in the order given, and ``payload``."""
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return  # keep test output quiet


class Loopback:
    """``httpd`` served from a daemon thread (polling every ``poll_s`` seconds) until ``stop()``."""

    def __init__(self, httpd: ThreadingHTTPServer, poll_s: float, name: str | None = None) -> None:
        self.httpd = httpd
        self.thread = threading.Thread(target=httpd.serve_forever, args=(poll_s,), name=name, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
