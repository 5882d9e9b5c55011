"""The writer thread of a streamed import (ingest/stream_writer.py): batches written in order on a thread of
their own, and a failure on either side ends both, the one met first in the log's order raised."""

from __future__ import annotations

import threading
import time

import pytest

from agenthop.ingest.stream_writer import StreamWriter


def test_batches_are_written_in_order_on_another_thread() -> None:
    written: list[int] = []
    threads: set[str] = set()

    def write(batch: int) -> None:
        threads.add(threading.current_thread().name)
        written.append(batch)

    with StreamWriter(write) as writer:
        for i in range(50):
            writer(i)
        writer.drain()
        assert written == list(range(50))  # drain: every batch handed over is written
        for i in range(50, 60):
            writer(i)
    assert written == list(range(60))  # leaving the block waits for the rest
    assert threads == {"ingest-write"}


def test_drain_waits_for_a_slow_write() -> None:
    written: list[int] = []

    def write(batch: int) -> None:
        time.sleep(0.05)
        written.append(batch)

    with StreamWriter(write, depth=1) as writer:
        for i in range(4):
            writer(i)
        writer.drain()
        assert written == [0, 1, 2, 3]


def test_a_failed_write_stops_the_reading_side_with_its_exception() -> None:
    """The reading side gets the writer's own exception at its next hand-over (with the queue full, not
    blocked forever), and the batches after the failed one are not written."""
    written: list[int] = []
    failure = RuntimeError("the warehouse refused batch 3")

    def write(batch: int) -> None:
        if batch == 3:
            raise failure
        written.append(batch)

    handed: list[int] = []
    with pytest.raises(RuntimeError) as err:
        with StreamWriter(write, depth=1) as writer:
            for i in range(1000):
                writer(i)
                handed.append(i)
    assert err.value is failure
    assert written == [0, 1, 2]
    assert len(handed) < 1000  # the reading stopped


def test_a_failed_write_is_raised_by_drain() -> None:
    def write(batch: int) -> None:
        raise ValueError(f"bad {batch}")

    with pytest.raises(ValueError, match="bad 0"):
        with StreamWriter(write) as writer:
            writer(0)
            writer.drain()


def test_a_reading_failure_writes_the_batches_read_before_it_then_is_raised() -> None:
    written: list[int] = []

    def write(batch: int) -> None:
        time.sleep(0.02)  # the reading side is ahead
        written.append(batch)

    with pytest.raises(KeyError, match="sample 5"):
        with StreamWriter(write, depth=3) as writer:
            for i in range(5):
                writer(i)
            raise KeyError("sample 5")
    assert written == [0, 1, 2, 3, 4]


def test_a_write_failing_before_the_reading_failure_is_the_one_raised() -> None:
    """A batch handed over before the reading failed comes earlier in the log: its error is the one a
    sequential import would have met first."""
    def write(batch: int) -> None:
        time.sleep(0.02)
        if batch == 1:
            raise RuntimeError("duplicate key in batch 1")

    with pytest.raises(RuntimeError, match="duplicate key in batch 1"):
        with StreamWriter(write, depth=3) as writer:
            for i in range(3):
                writer(i)
            raise KeyError("sample 3")


def test_an_interrupt_stops_the_writer_without_writing_the_rest() -> None:
    written: list[int] = []
    go = threading.Event()

    def write(batch: int) -> None:
        go.wait(5)
        written.append(batch)

    release = threading.Timer(0.3, go.set)  # batch 0 ends after the interrupt
    with pytest.raises(KeyboardInterrupt):
        with StreamWriter(write, depth=3) as writer:
            for i in range(4):
                writer(i)
            release.start()
            raise KeyboardInterrupt
    assert written == [0]
