"""A sink that writes on a thread of its own, so that reading the next batches overlaps writing the last.

An imported log's batches of rows are made by Python (reading, parsing, mapping: it holds the GIL) and
written by DuckDB (inserts and the search index: DuckDB releases the GIL while a statement runs), so on
two cores the two overlap when the writing happens on another thread (docs/inspect.md#speed).
:class:`StreamWriter` is that thread: the reading side hands it each batch through a bounded queue (at
most :data:`DEPTH` batches wait, so memory stays bounded) and the writer calls ``write`` on each, in
order. The connection is used by one thread at a time: whoever else needs it first calls
:meth:`StreamWriter.drain`, which returns once every batch handed over is written.

Failures end both sides, and the one a sequential import would have met first is raised:

- ``write`` fails: the writer stops writing (later batches are dropped) and the reading side gets the
  same exception at its next hand-over or :meth:`~StreamWriter.drain`, which stops the reading;
- the reading side fails (inside ``with StreamWriter(...)``): the batches already handed over were read
  before the failure, so they are written first; if one of them fails, that error is raised instead
  (it comes earlier in the log), else the reading side's own.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Generic, TypeVar

T = TypeVar("T")

#: Batches that may wait for the writer (each is one batch of samples as Arrow tables: about 256 x 60 KB).
DEPTH = 2
#: Seconds between checks, while waiting on the queue, whether the other side has failed.
POLL_S = 0.1

_STOP = object()


class StreamWriter(Generic[T]):
    """Calls ``write`` on each batch handed to it (``writer(batch)``), in order, on a thread of its own
    (started at the first batch); use it as a context manager, which waits for the writes to end."""

    def __init__(self, write: Callable[[T], None], depth: int = DEPTH, name: str = "ingest-write") -> None:
        self._write = write
        self._queue: queue.Queue[object] = queue.Queue(maxsize=depth)
        self._name = name
        self._thread: threading.Thread | None = None
        #: the first exception ``write`` raised (later batches are then dropped)
        self.error: BaseException | None = None
        self._failed = threading.Event()

    def __call__(self, batch: T) -> None:
        """Hand ``batch`` to the writer; raises the writer's exception if it has failed."""
        self._raise_error()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()
        while True:
            try:
                self._queue.put(batch, timeout=POLL_S)
                return
            except queue.Full:
                self._raise_error()

    def drain(self) -> None:
        """Return once every batch handed over is written (the connection is then free); raises the
        writer's exception if a write failed."""
        if self._thread is not None:
            while not self._failed.is_set():
                with self._queue.all_tasks_done:
                    if not self._queue.unfinished_tasks:
                        break
                    self._queue.all_tasks_done.wait(POLL_S)
        self._raise_error()

    def close(self) -> None:
        """Stop the thread once it has taken every batch handed over (written or dropped)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._queue.put(_STOP)
        thread.join()

    def __enter__(self) -> StreamWriter[T]:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is not None and not isinstance(exc, Exception):  # an interrupt: stop without writing more
            self._failed.set()
        self.close()
        if exc is None or isinstance(exc, Exception):
            # the writer's error comes from a batch read before the reading side's failure (or there is none)
            self._raise_error()

    def _raise_error(self) -> None:
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                if not self._failed.is_set():
                    self._write(item)  # type: ignore[arg-type]
            except BaseException as exc:  # handed to the reading side, which stops
                self.error = exc
                self._failed.set()
            finally:
                self._queue.task_done()
