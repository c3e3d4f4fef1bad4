"""How fast a batcher grades: items per second over the last minute.

Two rates. Per wall-clock second (what /health shows) falls when the server idles. Per *busy*
second — time during which at least one batch was being graded, however many run at once — is
the rate a non-empty queue drains at, so it is what a drain-time estimate (and `Retry-After`)
divides by. Before anything has been graded the meter assumes `prior_seconds_per_item`.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

# about one sandboxed code item per core; replaced by the measured rate once a batch finishes
PRIOR_SECONDS_PER_ITEM = 0.05


class ThroughputMeter:
    """Not thread-safe: the batcher calls it under its own lock."""

    def __init__(
        self,
        window_seconds: float = 60.0,
        prior_seconds_per_item: float = PRIOR_SECONDS_PER_ITEM,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.window_seconds = window_seconds
        self.prior_seconds_per_item = prior_seconds_per_item
        self.clock = clock
        self._started = clock()
        self._running = 0  # batches being graded now
        self._busy_since = 0.0
        self._busy_closed = 0.0  # busy seconds of the intervals that have ended
        # (finished at, items, busy seconds since the start up to then), newest last
        self._finished: deque[tuple[float, int, float]] = deque()
        self._busy_before_window = 0.0  # the cumulative busy time of the last entry that left the window
        self._items_total = 0
        self._busy_at_last_finish = 0.0

    def _busy_total(self, now: float) -> float:
        return self._busy_closed + (now - self._busy_since if self._running else 0.0)

    def batch_started(self) -> None:
        if self._running == 0:
            self._busy_since = self.clock()
        self._running += 1

    def batch_finished(self, items: int) -> None:
        now = self.clock()
        busy = self._busy_total(now)
        self._running -= 1
        if self._running == 0:
            self._busy_closed += now - self._busy_since
        self._finished.append((now, items, busy))
        self._items_total += items
        self._busy_at_last_finish = busy

    def _expire(self, now: float) -> None:
        while self._finished and now - self._finished[0][0] > self.window_seconds:
            self._busy_before_window = self._finished.popleft()[2]

    def items_per_second(self) -> float:
        """Items graded over the last minute per wall-clock second (0 when idle)."""
        now = self.clock()
        self._expire(now)
        span = min(self.window_seconds, max(now - self._started, 1e-9))
        return sum(items for _, items, _ in self._finished) / span

    def seconds_per_item(self) -> float:
        """Busy seconds per item: over the last minute, else over the meter's life, else the prior."""
        self._expire(self.clock())
        items = sum(items for _, items, _ in self._finished)
        if items:
            busy = self._finished[-1][2] - self._busy_before_window
            if busy > 0:
                return busy / items
        if self._items_total and self._busy_at_last_finish > 0:
            return self._busy_at_last_finish / self._items_total
        return self.prior_seconds_per_item
