"""Bounds on reading an Inspect log, checked before memory is spent (docs/inspect.md#limits).

Every JSON document read whole (one ``.eval`` member, or a whole ``.json`` log) is bounded in
size, a ``.eval`` member also in how much it inflates against its compressed size, and every
document in how deeply its lists and objects nest. The limits are per member, not per log: a
log of 200,000 samples of 60 KB each stays far within them.

Decompression streams with a cap (a member may not produce more than the size its ZIP directory
records, and that size must be within the limits), and the nesting depth is measured on the bytes
before they are parsed.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from agenthop.ingest.conform import IngestError

MiB = 1 << 20
#: a member that inflates to at most this much is not held to the ratio limit
RATIO_FLOOR = MiB
_CHUNK = 1 << 16
_OUT = MiB

ZIP_STORED = 0
ZIP_DEFLATED = 8
ZIP_ZSTD = 93


@dataclass(frozen=True)
class Limits:
    """The bounds (defaults documented in docs/inspect.md#limits)."""

    #: the largest JSON document read whole: a ``.eval`` member after decompression, or a ``.json`` log
    max_member_bytes: int = 64 * MiB
    #: how many times its compressed size a ``.eval`` member may inflate to (above RATIO_FLOOR)
    max_ratio: int = 1000
    #: how deeply lists and objects may nest in one document
    max_depth: int = 100
    #: the JSON of the logs one ingest reads whole (``.json`` logs; a ``.eval`` log is streamed);
    #: None: what the machine's available memory allows (:func:`import_budget`)
    max_import_bytes: int | None = None


#: Limits field -> (environment variable that overrides it, unit of the variable's value)
ENV: dict[str, tuple[str, int]] = {
    "max_member_bytes": ("AGENTHOP_INSPECT_MAX_MEMBER_MB", MiB),
    "max_ratio": ("AGENTHOP_INSPECT_MAX_RATIO", 1),
    "max_depth": ("AGENTHOP_INSPECT_MAX_DEPTH", 1),
    "max_import_bytes": ("AGENTHOP_INSPECT_MAX_IMPORT_MB", MiB),
}


def limits_from_env(env: Mapping[str, str] | None = None) -> Limits:
    """The default limits, each overridden by its environment variable when that is set."""
    env = os.environ if env is None else env
    values = {}
    for name, (var, unit) in ENV.items():
        text = env.get(var, "").strip()
        if not text:
            continue
        if not text.isdigit() or int(text) <= 0 or len(text) > 9:
            raise IngestError(f"{var}={text!r}: expected a positive whole number")
        values[name] = int(text) * unit
    return Limits(**values)


def _var(name: str) -> str:
    return ENV[name][0]


class BoundError(ValueError):
    """A member or document breaks a limit or its own recorded size and checksum."""


# --------------------------------------------------------------------------------------------
# decompression


class _Slice:
    """``length`` bytes of ``fh`` from ``offset``, read in pieces (a file-like source for zstd)."""

    def __init__(self, fh: BinaryIO, offset: int, length: int) -> None:
        self._fh, self._pos, self.left = fh, offset, length

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        if n <= 0:
            return b""
        self._fh.seek(self._pos)
        data = self._fh.read(n)
        if len(data) < n:
            raise BoundError("member is truncated")
        self._pos += n
        self.left -= n
        return data


def check_recorded(file_size: int, compress_size: int, limits: Limits) -> None:
    """Refuse, before decompressing, a member whose recorded size breaks the limits."""
    if file_size > limits.max_member_bytes:
        raise BoundError(
            f"inflates to {file_size:,} bytes, more than the limit of {limits.max_member_bytes // MiB} MiB "
            f"({_var('max_member_bytes')})"
        )
    if file_size > RATIO_FLOOR and file_size > limits.max_ratio * max(compress_size, 1):
        raise BoundError(
            f"inflates {file_size // max(compress_size, 1):,} times its compressed size ({compress_size:,} to "
            f"{file_size:,} bytes), more than the limit of {limits.max_ratio} ({_var('max_ratio')})"
        )


def inflate(fh: BinaryIO, offset: int, method: int, compress_size: int, file_size: int, crc: int,
            limits: Limits) -> bytes:
    """The member whose compressed bytes start at ``offset``, decompressed with its output capped at
    the size the directory records; that size and the checksum must match."""
    check_recorded(file_size, compress_size, limits)
    src = _Slice(fh, offset, compress_size)
    out: list[bytes] = []
    total = 0

    def add(piece: bytes) -> None:
        nonlocal total
        total += len(piece)
        if total > file_size:
            raise BoundError(f"inflates to more than its recorded size of {file_size:,} bytes")
        out.append(piece)

    if method == ZIP_STORED:
        while piece := src.read(_OUT):
            add(piece)
    elif method == ZIP_DEFLATED:
        d = zlib.decompressobj(-15)
        pending = b""
        try:
            while True:
                pending = pending or src.read(_CHUNK)
                piece = d.decompress(pending, file_size - total + 1)
                pending = d.unconsumed_tail
                add(piece)
                if d.eof or (not piece and not pending and not src.left):
                    break
        except zlib.error as exc:
            raise BoundError(f"deflate: {exc}") from None
        if not d.eof:
            raise BoundError("the compressed data ends early")
    elif method == ZIP_ZSTD:
        import zstandard

        try:
            reader = zstandard.ZstdDecompressor().stream_reader(src, read_size=_CHUNK)
            while piece := reader.read(min(_OUT, file_size - total + 1)):
                add(piece)
        except zstandard.ZstdError as exc:
            raise BoundError(f"zstd: {exc}") from None
    else:
        raise BoundError(f"compression method {method} is not one Inspect writes (stored, deflate or zstd)")
    raw = b"".join(out)
    if len(raw) != file_size or zlib.crc32(raw) != crc:
        raise BoundError("member does not match its recorded size and checksum")
    return raw


# --------------------------------------------------------------------------------------------
# nesting depth

#: +1 for an opening bracket, -1 for a closing one
_STEP = np.zeros(256, np.int8)
_STEP[[ord("["), ord("{")]] = 1
_STEP[[ord("]"), ord("}")]] = -1
_QUOTE = ord('"')
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}"')))


def depth_exceeds(data: bytes, limit: int) -> bool:
    """True when the JSON text ``data`` nests lists and objects deeper than ``limit``.

    Counted on the bytes, outside strings, at C and NumPy speed, before the text is parsed.
    """
    if len(data) <= limit:
        return False
    # drop every escape (a backslash and the character it escapes, left to right: one pass, several
    # times cheaper than two replaces on text full of ``\n``; what is left of ``\uXXXX`` is no bracket
    # or quote): each quote left opens or closes a string
    marks = _ESCAPE.sub(b"", data).translate(None, _NOT_STRUCTURE)
    if len(marks) <= limit:
        return False
    inside = 0
    depth = 0
    for start in range(0, len(marks), _OUT):
        a = np.frombuffer(marks, np.uint8, count=min(_OUT, len(marks) - start), offset=start)
        quoted = (np.cumsum(a == _QUOTE, dtype=np.int32) + inside) & 1
        step = _STEP[a]
        step[quoted.astype(bool)] = 0
        levels = np.cumsum(step, dtype=np.int32) + depth
        if int(levels.max()) > limit:
            return True
        inside = int(quoted[-1])
        depth = int(levels[-1])
    return False


def check_depth(data: bytes, limits: Limits) -> None:
    if depth_exceeds(data, limits.max_depth):
        raise BoundError(f"nests lists and objects more than {limits.max_depth} deep ({_var('max_depth')})")


def check_document_size(size: int, limits: Limits) -> None:
    if size > limits.max_member_bytes:
        raise BoundError(
            f"is {size:,} bytes, more than the limit of {limits.max_member_bytes // MiB} MiB for a JSON document "
            f"read whole ({_var('max_member_bytes')}; a .eval log is read one sample at a time)"
        )


# --------------------------------------------------------------------------------------------
# the whole import

#: peak memory of an ingest per byte of a ``.json`` log it reads whole, a margin over the 0.9 measured
#: when every log's rows were held until the commit (docs/inspect.md#memory)
MEMORY_PER_JSON_BYTE = 2.0
#: the share of the available memory an import may plan to use
MEMORY_SHARE = 0.8


def available_memory(meminfo: str = "/proc/meminfo") -> int | None:
    """The memory the kernel reports as available to new work (bytes), or None where it does not say."""
    try:
        with open(meminfo) as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def import_budget(limits: Limits, available: int | None = None) -> int | None:
    """The JSON bytes of the logs one ingest may read whole: the override, else what the available
    memory allows."""
    if limits.max_import_bytes is not None:
        return limits.max_import_bytes
    available = available_memory() if available is None else available
    return None if available is None else int(available * MEMORY_SHARE / MEMORY_PER_JSON_BYTE)


class ImportBudget:
    """JSON of the logs read whole so far in one ingest, refused past :func:`import_budget` before it is read."""

    def __init__(self, limits: Limits, available: int | None = None) -> None:
        self.limit = import_budget(limits, available)
        self.used = 0

    def take(self, size: int) -> None:
        if self.limit is not None and self.used + size > self.limit:
            before = f" (with the {self.used / MiB:,.0f} MiB of the logs read before it)" if self.used else ""
            raise BoundError(
                f"its samples are {size / MiB:,.0f} MiB of JSON{before}, more than this ingest can hold in memory: "
                f"{self.limit / MiB:,.0f} MiB of sample JSON at about {MEMORY_PER_JSON_BYTE:g} bytes of memory per "
                f"byte; convert the log to .eval (inspect log convert --to eval), which is read a sample at a time, "
                f"ingest fewer logs at a time, or set {_var('max_import_bytes')} on a machine with more memory"
            )
        self.used += size
