"""A fake S3 endpoint on 127.0.0.1 that lists and serves whatever keys a test gives it, including
keys a real store may refuse to create (``runs/x/../../PWNED.txt``, ``runs//abs/path``), and that can
trickle an object's bytes (one byte, then a pause) to stand for a hostile or broken endpoint.

It speaks just enough of the S3 protocol for s3fs/botocore: ListObjectsV2 (``GET /bucket?list-type=2``,
with ``prefix``, ``encoding-type=url`` and one page), HeadObject and GetObject (path-style). Nothing is
authenticated: any signature is accepted.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit
from xml.sax.saxutils import escape

from .loopback import Loopback, QuietHandler


@dataclass
class FakeS3:
    """The store's content and behaviour (mutable while the server runs)."""

    bucket: str
    #: key -> bytes
    objects: dict[str, bytes] = field(default_factory=dict)
    #: keys whose body is sent one byte per ``trickle_s`` seconds
    trickle: set[str] = field(default_factory=set)
    trickle_s: float = 5.0
    #: set to stop every trickle at once (server shutdown)
    stopped: threading.Event = field(default_factory=threading.Event)
    #: GetObject keys requested, in order
    fetched: list[str] = field(default_factory=list)


def _list_xml(store: FakeS3, prefix: str, url_encoded: bool) -> bytes:
    def enc(text: str) -> str:
        return escape(quote(text, safe="/") if url_encoded else text)

    keys = sorted(k for k in store.objects if k.startswith(prefix))
    contents = "".join(
        f"<Contents><Key>{enc(k)}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>"
        f"<ETag>&quot;0&quot;</ETag><Size>{len(store.objects[k])}</Size><StorageClass>STANDARD</StorageClass></Contents>"
        for k in keys)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        f"<Name>{escape(store.bucket)}</Name><Prefix>{enc(prefix)}</Prefix><KeyCount>{len(keys)}</KeyCount>"
        f"<MaxKeys>1000</MaxKeys>{'<EncodingType>url</EncodingType>' if url_encoded else ''}"
        f"<IsTruncated>false</IsTruncated>{contents}</ListBucketResult>"
    ).encode()


def _handler(store: FakeS3) -> type[QuietHandler]:
    class Handler(QuietHandler):
        def _key(self) -> tuple[str, str, dict[str, list[str]]]:
            parts = urlsplit(self.path)
            path = unquote(parts.path)
            bucket, _, key = path.lstrip("/").partition("/")
            return bucket, key, parse_qs(parts.query, keep_blank_values=True)

        def _missing(self) -> None:
            body = b"<?xml version='1.0'?><Error><Code>NoSuchKey</Code><Message>none</Message></Error>"
            self.answer(404, [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))], body)

        def _object_headers(self, data: bytes) -> list[tuple[str, str]]:
            return [("Content-Type", "application/octet-stream"), ("Content-Length", str(len(data))),
                    ("ETag", '"0"'), ("Last-Modified", formatdate(0, usegmt=True)), ("Accept-Ranges", "bytes")]

        def do_HEAD(self) -> None:  # noqa: N802
            bucket, key, _ = self._key()
            if bucket != store.bucket or key not in store.objects:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            for k, v in self._object_headers(store.objects[key]):
                self.send_header(k, v)
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802
            bucket, key, query = self._key()
            if bucket != store.bucket:
                return self._missing()
            if not key and query.get("list-type") == ["2"]:
                body = _list_xml(store, query.get("prefix", [""])[0], query.get("encoding-type") == ["url"])
                return self.answer(200, [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))],
                                   body)
            store.fetched.append(key)
            if key not in store.objects:
                return self._missing()
            data = store.objects[key]
            if key not in store.trickle:
                return self.answer(200, self._object_headers(data), data)
            self.send_response(200)
            for k, v in self._object_headers(data):
                self.send_header(k, v)
            self.end_headers()
            try:
                for i in range(len(data)):
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    if store.stopped.wait(store.trickle_s):
                        return
            except (BrokenPipeError, ConnectionResetError):
                return

    return Handler


class FakeS3Server:
    """``FakeS3`` served on 127.0.0.1 (an ephemeral port) until ``stop()``."""

    def __init__(self, store: FakeS3) -> None:
        self.store = store
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(store))
        httpd.daemon_threads = True
        self.loop = Loopback(httpd, 0.05, name="fake-s3")

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.loop.port}"

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` with credentials (made up: nothing is checked) and this endpoint."""
        return dict(base, AWS_ACCESS_KEY_ID="AKFAKE", AWS_SECRET_ACCESS_KEY="sk-fake-secret-0123456789",
                    AWS_ENDPOINT_URL=self.endpoint, AWS_REGION="us-east-1")

    def stop(self) -> None:
        self.store.stopped.set()
        self.loop.stop()
