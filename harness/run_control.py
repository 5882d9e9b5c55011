"""Ctrl-C and SIGTERM while runs go, and what the runs of one event loop share (docs/running.md).

Ctrl-C once sets the stop flag: no new samples start, the in-flight ones finish and are written.
Ctrl-C again, or SIGTERM, also sets ``abort``: the in-flight samples are cancelled (they are not
written and run again on resume). The run's status is then decided from its directory alone
(harness/completion.py), so a cancelled sample can never make a run look complete.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from typing import Any, Protocol

from .run_result import say


class StopFlag(Protocol):
    def is_set(self) -> bool: ...

    def set(self) -> None: ...


class RunControl:
    """What the runs of one event loop share: the stop flag, Ctrl-C / SIGTERM handling, the global cap
    on samples in flight (``--max-concurrency``) and the cost guard (``--max-cost-usd``).

    Handlers are installed once per event loop, however many runs share it.
    """

    def __init__(self, stop: StopFlag, *, max_concurrency: int = 0, cost: Any = None) -> None:
        self.stop = stop
        self.abort = asyncio.Event()
        self.sigints = 0
        self.in_flight = 0
        self.gate = asyncio.Semaphore(max_concurrency) if max_concurrency else None
        self.cost = cost
        #: the signal that stopped the runs ("SIGINT" / "SIGTERM"), None while none has
        self.stopped_by: str | None = None
        self._installed: list[int] = []

    def on_sigint(self) -> None:
        self.sigints += 1
        self.stopped_by = self.stopped_by or "SIGINT"
        if self.sigints == 1:
            self.stop.set()
            say(f"\nCtrl-C: taking no new samples; finishing {self.in_flight} in-flight sample(s) "
                "(press Ctrl-C again to drop them)")
        else:
            say("Ctrl-C again: dropping in-flight samples")
            self.abort.set()

    def on_sigterm(self) -> None:
        self.stopped_by = "SIGTERM"
        say(f"\nSIGTERM: dropping {self.in_flight} in-flight sample(s); finished samples are kept")
        self.stop.set()
        self.abort.set()

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        loop = asyncio.get_running_loop()
        for sig, fn in ((signal.SIGINT, self.on_sigint), (signal.SIGTERM, self.on_sigterm)):
            try:
                loop.add_signal_handler(sig, fn)
                self._installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass

    def uninstall(self) -> None:
        if self._installed:
            loop = asyncio.get_running_loop()
            for sig in self._installed:
                loop.remove_signal_handler(sig)
            self._installed = []
