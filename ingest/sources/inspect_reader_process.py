"""The second process of an Inspect import (``inspect_read.mapping_samples``; docs/inspect.md#speed):
``python -m agenthop.ingest.sources.inspect_reader_process LOG READER`` reads the log's samples as
the ingest's own reading does (decompressed, checked, parsed, cut to what the mapping reads) and
writes them to its standard output as frames: a kind byte, an 8-byte length, the payload. A sample is
orjson's text when orjson read it (and so writes it back exactly), else a pickle; the reading ends
with an ``END`` frame, or with an ``ERROR`` frame holding the one-line message the ingest reports.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

JSON, PICKLE, ERROR, END = b"j", b"p", b"e", b"z"
_HEAD = struct.Struct("<cQ")


def frames(stream: BinaryIO) -> Iterator[tuple[bytes, bytes]]:
    """(kind, payload) of every frame on ``stream`` until it ends."""
    while True:
        head = stream.read(_HEAD.size)
        if len(head) < _HEAD.size:
            return
        kind, size = _HEAD.unpack(head)
        payload = stream.read(size)
        if len(payload) < size:
            return
        yield kind, payload


def _write(out: BinaryIO, kind: bytes, payload: bytes) -> None:
    out.write(_HEAD.pack(kind, len(payload)))
    out.write(payload)


def main(argv: list[str]) -> int:
    out = os.fdopen(os.dup(1), "wb", buffering=1 << 20)
    os.dup2(2, 1)  # anything printed goes elsewhere than the frames
    path, reader = Path(argv[0]), argv[1]
    try:
        import orjson

        from agenthop.ingest.conform import IngestError

        from . import inspect_read

        try:
            log = inspect_read.open_log(path, reader)
            try:
                for sample in log.samples(for_mapping=True):
                    if log.exact:
                        _write(out, JSON, orjson.dumps(sample))
                    else:
                        _write(out, PICKLE, pickle.dumps(sample, protocol=5))
            finally:
                log.close()
            _write(out, END, b"")
        except IngestError as exc:
            _write(out, ERROR, str(exc).encode("utf-8", "replace"))
        except Exception as exc:  # reported by the ingest as one line, never a traceback
            line = " ".join(str(exc).split())[:300]
            _write(out, ERROR, f"{path}: cannot be read ({type(exc).__name__}: {line})".encode("utf-8", "replace"))
        out.flush()
    except BrokenPipeError:  # the ingest stopped reading (it failed on an earlier sample)
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
