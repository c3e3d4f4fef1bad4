"""Ctrl-C that stops training at a safe point.

The first SIGINT only sets a flag; the loop checks it between steps, writes a checkpoint whose metrics
and state agree, and raises `TrainingInterrupted`. A second SIGINT interrupts at once. (A bare
KeyboardInterrupt can land inside a destructor, where Python ignores it, and the run would go on.)
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType


class TrainingInterrupted(KeyboardInterrupt):
    """Raised at a safe point after Ctrl-C; the run directory can be resumed."""


class StopFlag:
    def __init__(self) -> None:
        self.requested = False

    def check(self, before_raising: Callable[[], None] | None = None) -> None:
        if self.requested:
            if before_raising is not None:
                before_raising()
            raise TrainingInterrupted


@contextmanager
def stop_on_sigint(log: Callable[[str], None]) -> Iterator[StopFlag]:
    flag = StopFlag()
    if threading.current_thread() is not threading.main_thread():
        yield flag  # signal handlers live on the main thread; elsewhere Ctrl-C behaves as usual
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if flag.requested:
            raise KeyboardInterrupt
        flag.requested = True
        log("interrupt: stopping after this step (Ctrl-C again to stop now)")

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)
