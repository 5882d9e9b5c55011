"""JSON read with orjson (several times faster than Python's ``json``) exactly when orjson gives the
value ``json`` gives, and with ``json`` otherwise; so a reader's results and its error messages are
those of ``json``, only sooner.

orjson differs from ``json`` on a few documents, each caught here:

- NaN, Infinity, a number out of a double's range, a lone surrogate escape (``"\\ud800"``), a
  byte order mark: orjson refuses them (``json`` reads the first four, or words the error);
- an integer past 64 bits (or below ``-2**63``): orjson reads it as a float. A document that may
  hold one (:func:`may_hold_long_integer`) goes to ``json``.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

#: digits -> "0", every other byte -> " ": a run of 19 digits is then a run of 19 zeros
_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
#: 19 digits: the shortest integers orjson may not keep whole (below -2**63, 19 digits after the minus)
_LONG = b"0" * 19


def may_hold_long_integer(raw: bytes) -> bool:
    """Whether ``raw`` may hold an integer orjson does not keep whole: a run of 19 or more digits
    after ``:``, ``[`` or ``,`` (and any spaces and a minus sign), or at the start. A run inside a
    string (an IBAN) mostly follows a letter; one that does not only costs a slower parse."""
    marks = raw.translate(_DIGITS)
    at = marks.find(_LONG)
    while at >= 0:
        start = marks.rfind(b" ", 0, at) + 1  # where this run of digits starts
        before = raw[max(0, start - 8):start].rstrip(b" \t\r\n-")
        if not before or before[-1:] in (b":", b"[", b","):
            return True
        end = marks.find(b" ", at)
        if end < 0:
            return False
        at = marks.find(_LONG, end)
    return False


#: what :func:`loads_if_exact` returns for a document orjson does not read as ``json`` would
REFUSED: Any = object()


def loads_if_exact(data: bytes, raw: bytes | str | None = None) -> Any:
    """orjson's value of the UTF-8 document ``data`` (parsed from ``raw``, the same document as the
    caller holds it, when given), or :data:`REFUSED` when orjson cannot give exactly the value
    ``json`` gives (``json`` then reads it, or words its error)."""
    if may_hold_long_integer(data):
        return REFUSED
    try:
        return orjson.loads(data if raw is None else raw)
    except orjson.JSONDecodeError:
        return REFUSED


def parse_json_exact(raw: bytes | str) -> tuple[Any, bool]:
    """A JSON document's value as Python's ``json`` reads it, and whether orjson read it (then
    orjson writes it back exactly). Raises what ``json.loads`` raises on a document it refuses."""
    value = loads_if_exact(raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass"), raw)
    if value is not REFUSED:
        return value, True
    return json.loads(raw), False
