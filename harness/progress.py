"""Progress of runs: a live tqdm line in this process, or batched counts through a queue from a pool
worker process (docs/running.md)."""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol


def _fmt_tokens(n: int) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= div:
            return f"{n / div:.2f}{unit}"
    return str(n)


def progress_postfix(done: int, correct: int, tokens: int, usd: float) -> str:
    """The tail of a progress line: accuracy so far, tokens, estimated USD (when any was spent)."""
    acc = f"{correct / done:.3f}" if done else "-"
    tail = f" ~${usd:,.2f}" if usd else ""
    return f"acc={acc} tok={_fmt_tokens(tokens)}{tail}"


class Progress(Protocol):
    def start(self, total: int, done: int, correct: int, tokens: int) -> None: ...

    def sample(self, correct: bool, tokens: int, usd: float = 0.0) -> None: ...

    def close(self) -> None: ...


class NullProgress:
    def start(self, total: int, done: int, correct: int, tokens: int) -> None:
        pass

    def sample(self, correct: bool, tokens: int, usd: float = 0.0) -> None:
        pass

    def close(self) -> None:
        pass


class _NoBar:
    """What :class:`BarProgress` uses of a tqdm bar when none is shown: lines go to stderr as they are."""

    total: int | None = None
    initial = n = last_print_n = 0

    def write(self, msg: str, file: Any = None) -> None:
        print(msg, file=file or sys.stderr)

    def close(self) -> None:
        pass


class BarProgress:
    """One live tqdm line: items done/total, rate, ETA, accuracy so far, tokens and (real backends) the
    estimated USD of this invocation's samples. ``fixed_total`` for panels."""

    def __init__(self, desc: str, enabled: bool, fixed_total: int | None = None,
                 position: int | None = None) -> None:
        if enabled:  # tqdm loads only when a bar is shown
            from tqdm import tqdm

            self.bar: Any = tqdm(total=fixed_total, desc=desc, unit="item", file=sys.stderr, mininterval=0.5,
                                 dynamic_ncols=True, smoothing=0.05, position=position)
        else:
            self.bar = _NoBar()
        self.enabled = enabled
        self.fixed = fixed_total is not None
        self.done = self.correct = self.tokens = 0
        self.usd = 0.0

    def start(self, total: int, done: int, correct: int, tokens: int) -> None:
        """Samples already finished (resume): shown as done, but not counted in the rate / ETA."""
        if not self.fixed:
            self.bar.total = total
        self.done += done
        self.correct += correct
        self.tokens += tokens
        if done and self.enabled:
            self.bar.initial += done
            self.bar.n += done
            self.bar.last_print_n = self.bar.n
        self._postfix()
        if self.enabled:
            self.bar.refresh()

    def add(self, n: int, correct: int, tokens: int) -> None:
        self.done += n
        self.correct += correct
        self.tokens += tokens
        if self.enabled:
            self._postfix()
            self.bar.update(n)

    def sample(self, correct: bool, tokens: int, usd: float = 0.0) -> None:
        self.usd += usd
        self.add(1, int(correct), tokens)

    def _postfix(self) -> None:
        if self.enabled:
            self.bar.set_postfix_str(progress_postfix(self.done, self.correct, self.tokens, self.usd), refresh=False)

    def write(self, msg: str) -> None:
        self.bar.write(msg, file=sys.stderr)

    def close(self) -> None:
        self.bar.close()


class QueueProgress:
    """Progress of a run in a worker process, batched into a multiprocessing queue."""

    def __init__(self, queue: Any, interval: float = 0.5) -> None:
        self.queue = queue
        self.interval = interval
        self.n = self.correct = self.tokens = 0
        self.last = time.monotonic()

    def start(self, total: int, done: int, correct: int, tokens: int) -> None:
        self.queue.put(("resumed", done, correct, tokens))

    def sample(self, correct: bool, tokens: int, usd: float = 0.0) -> None:
        self.n += 1
        self.correct += int(correct)
        self.tokens += tokens
        now = time.monotonic()
        if now - self.last >= self.interval:
            self._send()
            self.last = now

    def _send(self) -> None:
        if self.n:
            self.queue.put(("add", self.n, self.correct, self.tokens))
            self.n = self.correct = self.tokens = 0

    def close(self) -> None:
        self._send()
