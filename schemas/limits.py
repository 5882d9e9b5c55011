"""Limits of the file formats that writers and readers share (docs/ingest.md, docs/harness.md).

``MAX_TEXT_BYTES``: the largest text value (bytes of UTF-8) of any column ingest loads; ingest
refuses a larger one (never truncates it), so the harness never writes one: a model reply that would
need one is recorded as an error turn instead (harness/replies.py).
"""

from __future__ import annotations

MAX_TEXT_BYTES = 5 * 1024 * 1024


def bytes_over_cap(text: str) -> int:
    """The UTF-8 size of ``text`` when it is above ``MAX_TEXT_BYTES``, else 0 (texts short enough to be
    under the cap in any encoding are not encoded)."""
    if len(text) * 4 <= MAX_TEXT_BYTES:
        return 0
    n = len(text.encode("utf-8", "surrogatepass"))
    return n if n > MAX_TEXT_BYTES else 0
