"""Item pages whose data loads on demand: one viewer page per report page and the items' data in script files.

A site of fifty models with five epochs links hundreds of thousands of items; a full HTML page per item
would hold its styles, scripts and footer once per item. In this mode (``agenthop-report site``) a page's
folder holds instead::

    <page>_files/items/view.html          the item viewer: the page's styles, run names and footer, once
    <page>_files/items/view-data/<k>.js   the data of the items whose name hashes to chunk k

(``view-2.html`` and ``view-2-data/`` for a second set of runs the page shows items of, and so on) and
the page links ``<page>_files/items/view.html#<item name>``. Opening that loads the one data file the item is
in through a ``<script src>`` (a browser refuses ``fetch`` from ``file://``, so the file calls a function
the viewer defines, ``agenthopItemChunk("<data>", <n>)``, with its JSON deflated: :func:`script`), then inflates it
(``DecompressionStream``) and builds the same sections the static item page of :mod:`reports.core.item`
shows. Texts are formatted here as the templates format them, so the viewer
only places them; a chunk keeps each distinct text once (a task's system prompt, an item's input shared
by every run, an answer that is also the last message).
"""

from __future__ import annotations

import json
import math
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from .render import cell, clip, pretty_json, run_summary_line
from .trajectories import SHOWN_FROM
from .values import CONTROL_RE, control_pictures

#: items per data file, about: a chunk is what one opened item costs to load
ITEMS_PER_CHUNK = 128
#: items a page loads from the warehouse and formats at once (whole chunks: :func:`chunk_batches`), so the memory a
#: page takes does not grow with its items: the first batch's size, and the least one (:class:`BatchSizer`)
BATCH_ITEMS = 1024
#: the most items in a batch, however short their transcripts
MAX_BATCH_ITEMS = 16_384
#: the characters of text (messages, inputs, answers, counted as loaded) a batch is sized to hold once the batches
#: before it tell how long an item's text is: about what 1,024 items of two runs of 27,000-character transcripts
#: hold, so a site of short transcripts loads a page's items in one batch (each batch reads its runs' rows again)
BATCH_CHARS = 32_000_000
VIEWER_STEM = "view"
#: zlib's level for the data files: 4 deflates a site's item data about 2.7 times as fast as 9 for some 4% more
#: bytes (measured on a lab's site: 136 MB of JSON to 37.5 MB, against 36.1 MB at 9); the viewer inflates any level
LEVEL = 4
#: the item header templates whose context the viewer lays out itself
HEADER_FIELDS = {"inspect_item_header.html.j2": ("input", "target", "metadata")}


def chunk_of(name: str, n_chunks: int) -> int:
    """The data file of an item: FNV-1a (32 bit) of its page name's UTF-8 bytes, modulo `n_chunks` (the
    viewer computes the same in JavaScript)."""
    h = 0x811C9DC5
    for b in name.encode("utf-8"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h % n_chunks


def n_chunks_for(n_items: int) -> int:
    return max(1, math.ceil(n_items / ITEMS_PER_CHUNK))


#: the first of the 32,768 UTF-16 code units that carry 15 bits each: U+4000 to U+BFFF, none a surrogate, a
#: quote, a backslash or a line break, so none needs escaping in a JavaScript string
UNIT_BASE = 0x4000


def to_units(data: bytes) -> str:
    """`data` as 15 bits per character (U+4000 + the next 15 bits, the last ones padded with zeros): 15 bytes
    make 8 characters, character j the 3 bytes from byte 15j // 8 shifted by 15j % 8."""
    n_units = -(-8 * len(data) // 15)
    rows = np.frombuffer(data + bytes(-len(data) % 15 + 2), dtype=np.uint8)
    b = rows.astype(np.uint32)
    groups = len(rows) // 15
    units = np.empty((groups, 8), dtype=np.uint32)
    for j in range(8):
        at, r = divmod(15 * j, 8)
        idx = np.arange(groups) * 15 + at
        units[:, j] = (((b[idx] << 16) | (b[idx + 1] << 8) | b[idx + 2]) >> (9 - r)) & 0x7FFF
    return (units.ravel()[:n_units] + UNIT_BASE).astype("<u2").tobytes().decode("utf-16-le")


def from_units(text: str, n_bytes: int) -> bytes:
    """The `n_bytes` bytes :func:`to_units` wrote as `text`."""
    units = (np.frombuffer(text.encode("utf-16-le"), dtype="<u2").astype(np.uint32) - UNIT_BASE).astype(">u2")
    bits = np.unpackbits(units.view(np.uint8)).reshape(-1, 16)[:, 1:].ravel()
    return np.packbits(bits[: 8 * n_bytes]).tobytes()


def script(call: str, text: str, lead: Sequence[str] = ()) -> bytes:
    """A data file: ``<call>(<lead>..., <text packed>)``, as UTF-16 (little-endian, with a byte order mark,
    which tells the browser so whatever the page's encoding): `text` deflated (zlib, :data:`LEVEL`), 15 bits in each
    character of a JavaScript string, then the deflated length. About 7% more bytes than the deflated data, where base64
    in UTF-8 takes a third more."""
    packed = zlib.compress(text.encode("utf-8"), LEVEL)
    args = "".join(json.dumps(a) + ", " for a in lead)
    return ("\ufeff" + f'{call}({args}"{to_units(packed)}", {len(packed)});\n').encode("utf-16-le")


_has_control = CONTROL_RE.search


def _text(v: Any) -> str:
    """`v` as text, its control characters as pictures (render.visible_controls; called for every field of every
    item, so without its calls where the text has none)."""
    s = "" if v is None else v if type(v) is str else str(v)
    return control_pictures(s) if _has_control(s) else s


def _score_cell(v: dict[str, Any] | None) -> list[str | None] | None:
    """A score cell as the item page prints it: the value's text, and its number beside it when they differ."""
    if not v:
        return None
    text = v["value_text"] if v["value_text"] is not None else cell(v["value_num"])
    extra = None
    if v["value_num"] is not None and v["value_text"] is not None and v["value_text"] != str(v["value_num"]):
        extra = _text(cell(v["value_num"]))
    return [_text(text), extra]


def _side(side: Any, chunk: Chunk) -> dict[str, Any] | None:
    s = side.summary
    if s is None:
        return None
    answer = s.get("predicted_answer")
    return {"ok": bool(s.get("is_correct")), "meta": _text(run_summary_line(s, side.n_calls)),
            "answer": chunk.text(clip(answer, 400)) if answer else None}


def _call(c: dict[str, Any]) -> list[Any]:
    out = None
    if c.get("output_chars") is not None and c["status"] != "not_executed":
        out = f"{c['output_chars']:,} char{'s' if c['output_chars'] != 1 else ''}"
    return [c["seq"] + SHOWN_FROM, _text(c["tool"]), _text(c["status"]), _text(c.get("error_type")) or None,
            _text(clip(pretty_json(c["args_json"]), 700)) if c.get("args_json") else None, out]


class Chunk:
    """The items of one data file, with a table of the distinct message texts."""

    def __init__(self) -> None:
        self.strings: list[str] = []
        self._index: dict[str, int] = {}
        self.items: dict[str, dict[str, Any]] = {}
        #: the characters of every text given to :meth:`text`, repeats included (what the loaded items held)
        self.chars = 0

    def text(self, s: str) -> int:
        """The index of message text `s` in the chunk's table (control characters shown as pictures on writing)."""
        self.chars += len(s)
        k = self._index.get(s)
        if k is None:
            k = self._index[s] = len(self.strings)
            self.strings.append(s)
        return k

    def script(self) -> bytes:
        """The data file: its JSON packed (:func:`script`), passed to the viewer's agenthopItemChunk."""
        body = json.dumps({"strings": [_text(s) for s in self.strings], "items": self.items}, ensure_ascii=False,
                          separators=(",", ":"))
        return script("agenthopItemChunk", body)


def payload(ctx: dict[str, Any], chunk: Chunk) -> dict[str, Any] | None:
    """One item's data: what the shared item page's template context `ctx` shows, formatted; None when the
    item has a header the viewer cannot lay out (its page is then written whole)."""
    header = None
    h = ctx.get("header")
    if h is not None:
        fields = HEADER_FIELDS.get(h.template)
        if fields is not None:
            it = h.context
            header = {"title": _text(h.title), "input": chunk.text(str(it.get("input") or "")),  # as the user message
                      "target": _text(it.get("target")) or None,
                      "metadata": [[_text(k), _text(clip(v, 400))] for k, v in (it.get("metadata") or [])]}
        else:
            return None
    aligned = ctx["aligned"]
    msgs = []
    for r in ctx["runs"]:
        msgs.append([[m["idx"] + 1, _text(m["role"]), _text(m.get("name")) or None,
                      chunk.text(str(m["content"])) if m.get("content") else None]
                     for m in ctx["messages"].get(r.run_id, [])])
    return {
        "id": _text(ctx["sample_id"]),
        "group": _text(ctx["group"]) if ctx.get("group") else None,
        "header": header,
        "sides": [_side(s, chunk) for s in aligned.sides],
        "scores": [[_text(row["scorer"]), _text(row["key"]), [_score_cell(v) for v in row["cells"]]] for row in ctx["scores"]],
        "rows": [[turn, [[_call(c) for c in calls] for calls in per_side]] for turn, per_side in aligned.rows],
        "msgs": msgs,
    }


def chunk_batches(sizes: Sequence[int], limit: int) -> list[list[int]]:
    """The non-empty chunks (their numbers, in order) of a page whose chunk k holds `sizes[k]` items, in batches
    of at most `limit` items (a larger chunk alone): the items a page loads, formats and writes at once."""
    return list(_batches(sizes, lambda: limit))


def _batches(sizes: Sequence[int], limit: Callable[[], int]) -> Iterator[list[int]]:
    """:func:`chunk_batches`, each batch at most `limit()` items, read as the batch starts (so after the caller
    has handled the batch before)."""
    batch: list[int] = []
    n = cap = 0
    for k, size in enumerate(sizes):
        if not size:
            continue
        if batch and n + size > cap:
            yield batch
            batch = []
        if not batch:
            cap, n = limit(), 0
        batch.append(k)
        n += size
    if batch:
        yield batch


class BatchSizer:
    """How many items the next batch of a page takes: :data:`BATCH_ITEMS` until a batch was measured, then as many
    as :data:`BATCH_CHARS` of text hold at the longest text per item measured so far (at least BATCH_ITEMS, at most
    :data:`MAX_BATCH_ITEMS`). One sizer serves the pages of a benchmark (:func:`sizer_for`), so a page's first batch
    is sized by the pages before it; a batch longer than foreseen makes the next ones smaller. Which items share a
    batch does not change what is written."""

    def __init__(self) -> None:
        self.chars_per_item = 0.0  # the most measured, 0 before the first batch

    @property
    def limit(self) -> int:
        if self.chars_per_item <= 0:
            return BATCH_ITEMS
        return max(BATCH_ITEMS, min(MAX_BATCH_ITEMS, int(BATCH_CHARS // self.chars_per_item)))

    def saw(self, items: int, chars: int) -> None:
        """A batch of `items` items whose texts held `chars` characters was loaded and formatted."""
        if items > 0:
            self.chars_per_item = max(self.chars_per_item, chars / items, 1.0)

    def batches(self, sizes: Sequence[int]) -> Iterator[list[int]]:
        """:func:`chunk_batches` of `sizes`, each batch at most the :attr:`limit` when it starts (report each batch
        with :meth:`saw` before taking the next)."""
        return _batches(sizes, lambda: self.limit)


def sizer_for(memo: dict[str, Any], key: str) -> BatchSizer:
    """The sizer of `key` (a benchmark) kept in `memo` (the warehouse connection's, so a process's pages share it)."""
    return memo.setdefault("item_batches", {}).setdefault(key, BatchSizer())


class ChunkWriter:
    """Writes data files through `write(data, path)` in the order they were added, each packed (deflated,
    :func:`script`) in one of `pending` threads while the caller formats the next chunk (zlib and numpy release
    the GIL); at most `pending` chunks wait, so memory stays bounded. Use as a context manager: leaving it
    writes what is left (or, on an error, drops it)."""

    def __init__(self, write: Any, pending: int = 2) -> None:
        self._write, self._pending = write, pending
        self._pool = ThreadPoolExecutor(max_workers=pending, thread_name_prefix="item-data")
        self._queue: deque[tuple[Path, Future[bytes]]] = deque()

    def add(self, chunk: Chunk, path: Path) -> None:
        """Pack `chunk` (:meth:`Chunk.script`, in the background) and write it as `path`."""
        self._queue.append((path, self._pool.submit(chunk.script)))
        while len(self._queue) > self._pending:
            self._flush_one()

    def _flush_one(self) -> None:
        path, done = self._queue.popleft()
        self._write(done.result(), path)

    def __enter__(self) -> ChunkWriter:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        try:
            if exc_type is None:
                while self._queue:
                    self._flush_one()
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._queue.clear()


__all__ = ["BATCH_CHARS", "BATCH_ITEMS", "BatchSizer", "Chunk", "ChunkWriter", "ITEMS_PER_CHUNK", "UNIT_BASE", "VIEWER_STEM", "MAX_BATCH_ITEMS", "chunk_batches", "chunk_of", "sizer_for",
           "from_units", "n_chunks_for", "payload", "script", "to_units"]
