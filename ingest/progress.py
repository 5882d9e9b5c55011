"""Progress output for long loads: tqdm on an interactive stderr, periodic lines otherwise."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")

#: Seconds between progress lines when stderr is not a terminal.
LINE_INTERVAL_S = 5.0


class Progress:
    def __init__(self, *, quiet: bool = False, stream: TextIO | None = None) -> None:
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def iterate(self, items: list[T], desc: str, unit: str = "item") -> Iterator[T]:
        """Yield ``items`` while reporting progress (nothing for quick loads off a terminal)."""
        if self.quiet or not items:
            yield from items
            return
        if self.tty:
            from tqdm import tqdm

            yield from tqdm(items, desc=desc, unit=unit, file=self.stream, leave=False)
            return
        last = time.monotonic()
        n = len(items)
        for i, item in enumerate(items, 1):
            yield item
            now = time.monotonic()
            if now - last >= LINE_INTERVAL_S and i < n:
                self.line(f"{desc}: {i}/{n} {unit}s ({self.elapsed():.0f} s)")
                last = now

    def line(self, msg: str) -> None:
        if not self.quiet:
            print(f"agenthop-ingest: {msg}", file=self.stream, flush=True)

    def phase(self, msg: str, big: bool) -> None:
        """Announce a long step (only when it is big, so small loads stay silent)."""
        if big:
            self.line(msg)
