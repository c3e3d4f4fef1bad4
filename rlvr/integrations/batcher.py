"""Merge concurrent grading requests into `grade_many` batches, first come first served.

Background grading threads own the grader. Requests queue their items in arrival order; whenever
a thread is free it takes the oldest waiting items — across requests, and splitting a large
request over several batches — up to `max_batch`, and grades them as one batch. An idle batcher
adds no latency, and a busy one turns many small concurrent requests (server calls, verl threads)
into large batches, which is where the sandbox pool and the type checker are efficient. With
`threads=2` (only for graders whose `grade_many` may run concurrently) a second batch starts while
the first is still in its serial part, so a loaded server keeps every core busy.

Optional, for a server in front of many clients:
- `capacity_items` bounds the items waiting; beyond it `submit` raises `QueueFull`, which carries
  the queue's estimated drain time (from the rate measured over the last minute, see
  `rlvr.integrations.throughput`).
- `cache_items` keeps that many verdicts in the verdict cache (`rlvr.core.verdict_cache`, keyed by
  the grader's `verdict_key`): repeated items are answered from it, a request whose items are all
  cached resolves at once without queueing, and identical items within one batch are graded once.
  Verdicts with `error` set or a timeout flag are never cached (they depend on the machine, not only
  on the completion).
- Cancelling a request's future (`future.cancel()`) frees its items that have not started.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field

from rlvr.core.types import Verdict
from rlvr.core.verdict_cache import VerdictCache, VerdictKey, grade_once_each
from rlvr.graders.base import Grader, grade_or_fault
from rlvr.integrations.throughput import ThroughputMeter


class BatcherClosedError(RuntimeError):
    """Work submitted to a batcher that has been closed."""


class QueueFull(RuntimeError):
    """The waiting items would exceed the batcher's capacity; retry after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RequestTooLarge(ValueError):
    """A request with more items than the whole queue holds: it can never be admitted."""


@dataclass(frozen=True)
class QueueStats:
    """A snapshot of the batcher's queue and throughput."""

    queued_items: int
    queued_requests: int
    grading_items: int  # in the batches being graded
    capacity_items: int | None
    items_graded: int
    batches_graded: int
    cache_hits: int
    items_per_second: float  # items graded over the last minute, per wall-clock second
    drain_seconds: float  # estimated time to grade what is queued and in progress


@dataclass(eq=False)
class _Request:
    task_ids: list[str]
    completions: list[str]
    verdicts: list[Verdict | None]
    waiting: deque[int]  # positions not yet taken into a batch
    unresolved: int  # positions without a verdict yet
    keys: list[VerdictKey | None]  # the verdict cache's key of each position (None: no cache)
    future: Future[list[Verdict]] = field(default_factory=Future)


class MicroBatcher:
    """Thread-safe front of one grader. `grade` blocks; `submit` returns a Future."""

    def __init__(
        self,
        grader: Grader,
        *,
        max_batch: int = 256,
        capacity_items: int | None = None,
        cache_items: int = 0,
        threads: int = 1,
        meter: ThroughputMeter | None = None,
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        if threads < 1:
            raise ValueError("threads must be at least 1")
        if capacity_items is not None and capacity_items < 1:
            raise ValueError("capacity_items must be at least 1 (or None for no bound)")
        if cache_items < 0:
            raise ValueError("cache_items must be 0 (no cache) or more")
        self.grader = grader
        self.max_batch = max_batch
        self.capacity_items = capacity_items
        self.batches_graded = 0
        self.items_graded = 0
        self.cache_hits = 0
        self._cache = VerdictCache(cache_items) if cache_items else None
        self._queue: deque[_Request] = deque()
        self._queued_items = 0
        self._grading: dict[int, tuple[int, float]] = {}  # thread -> (items, started at)
        self._meter = meter or ThroughputMeter()
        self._closed = False
        self._lock = threading.RLock()
        self._work = threading.Condition(self._lock)
        self.threads = [
            threading.Thread(target=self._run, args=(index,), name=f"rlvr-batcher-{index}", daemon=True)
            for index in range(threads)
        ]
        for thread in self.threads:
            thread.start()

    # ------------------------------------------------------------------ submitting
    def submit(self, task_ids: Sequence[str], completions: Sequence[str]) -> Future[list[Verdict]]:
        """Queue the items; the future resolves to their verdicts in order. Raises `QueueFull` when
        the queue cannot take the uncached items now, `RequestTooLarge` when it never could."""
        if len(task_ids) != len(completions):
            raise ValueError(f"{len(task_ids)} task ids but {len(completions)} completions")
        keys = [
            self.grader.verdict_key(task_id, completion) if self._cache is not None else None
            for task_id, completion in zip(task_ids, completions, strict=True)
        ]
        request = _Request(
            list(task_ids), list(completions), [None] * len(task_ids), deque(), len(task_ids), keys
        )
        with self._lock:
            if self._closed:
                raise BatcherClosedError("the grading batcher is closed")
            for position in range(len(task_ids)):
                cached = self._cache.get(keys[position]) if self._cache is not None else None
                if cached is None:
                    request.waiting.append(position)
                else:
                    request.verdicts[position] = cached
            needed = len(request.waiting)
            if needed and self.capacity_items is not None:
                if needed > self.capacity_items:
                    raise RequestTooLarge(
                        f"{needed} items to grade exceed the queue's capacity of {self.capacity_items} items"
                    )
                if self._queued_items + needed > self.capacity_items:
                    drain = self._drain_seconds_locked()
                    raise QueueFull(
                        f"grading queue full: {self._queued_items} of {self.capacity_items} items waiting, "
                        f"{needed} more asked; estimated drain time {drain:.0f} s",
                        retry_after=drain,
                    )
            self.cache_hits += len(task_ids) - needed
            request.unresolved = needed
            if needed:
                self._queue.append(request)
                self._queued_items += needed
                request.future.add_done_callback(self._forget_if_cancelled(request))
                self._work.notify()
        if not needed:
            request.future.set_result([v for v in request.verdicts if v is not None])
        return request.future

    def grade(self, task_ids: Sequence[str], completions: Sequence[str]) -> list[Verdict]:
        return self.submit(task_ids, completions).result()

    def _forget_if_cancelled(self, request: _Request) -> Callable[[Future[list[Verdict]]], None]:
        def forget(future: Future[list[Verdict]]) -> None:
            if not future.cancelled():
                return
            with self._lock:
                if request.waiting:
                    self._queued_items -= len(request.waiting)
                    request.waiting.clear()
                    try:
                        self._queue.remove(request)
                    except ValueError:
                        pass  # its last items were being taken into a batch

        return forget

    # ------------------------------------------------------------------ observing
    def pending(self) -> int:
        """Requests waiting for a grading thread (not counting items in batches being graded)."""
        with self._lock:
            return len(self._queue)

    def stats(self) -> QueueStats:
        with self._lock:
            return QueueStats(
                queued_items=self._queued_items,
                queued_requests=len(self._queue),
                grading_items=sum(items for items, _ in self._grading.values()),
                capacity_items=self.capacity_items,
                items_graded=self.items_graded,
                batches_graded=self.batches_graded,
                cache_hits=self.cache_hits,
                items_per_second=self._meter.items_per_second(),
                drain_seconds=self._drain_seconds_locked(),
            )

    def drain_seconds(self) -> float:
        """Estimated seconds to grade everything queued and in progress."""
        with self._lock:
            return self._drain_seconds_locked()

    def _drain_seconds_locked(self) -> float:
        """Queued items at the measured rate, plus what remains of the batches being graded."""
        per_item = self._meter.seconds_per_item()
        remaining = 0.0
        if self._grading:
            grading = sum(items for items, _ in self._grading.values())
            oldest = min(started for _, started in self._grading.values())
            remaining = max(0.0, grading * per_item - (time.monotonic() - oldest))
        return self._queued_items * per_item + remaining

    # ------------------------------------------------------------------ grading threads
    def _take_batch_locked(self) -> list[tuple[_Request, int]]:
        batch: list[tuple[_Request, int]] = []
        while self._queue and len(batch) < self.max_batch:
            request = self._queue[0]
            while request.waiting and len(batch) < self.max_batch:
                batch.append((request, request.waiting.popleft()))
            if not request.waiting:
                self._queue.popleft()
        self._queued_items -= len(batch)
        return batch

    def _run(self, index: int) -> None:
        while True:
            with self._work:
                while not self._queue and not self._closed:
                    self._work.wait()
                if not self._queue:
                    return  # closed and drained
                batch = self._take_batch_locked()
                if self._queue:
                    self._work.notify()  # more waiting than one batch: wake another thread
                self._grading[index] = (len(batch), time.monotonic())
                self._meter.batch_started()
            try:
                self._grade_batch(batch)
            finally:
                with self._lock:
                    del self._grading[index]

    def _grade_batch(self, batch: list[tuple[_Request, int]]) -> None:
        items = [(request.task_ids[position], request.completions[position]) for request, position in batch]
        graded_items = 0

        def grade(todo: list[tuple[str, str]]) -> list[Verdict]:
            nonlocal graded_items
            graded_items = len(todo)
            return grade_or_fault(self.grader, [item[0] for item in todo], [item[1] for item in todo])

        # with a cache, identical items earn identical verdicts: grade each distinct item once
        verdicts = grade_once_each(items, grade) if self._cache is not None else grade(items)
        done: list[_Request] = []
        with self._lock:
            self.batches_graded += 1
            self.items_graded += graded_items
            self._meter.batch_finished(graded_items)
            for (request, position), verdict in zip(batch, verdicts, strict=True):
                if self._cache is not None:
                    self._cache.put(request.keys[position], verdict)  # keeps only what `cacheable` allows
                request.verdicts[position] = verdict
                request.unresolved -= 1
                if request.unresolved == 0:
                    done.append(request)
        for request in done:  # outside the lock: a future's callbacks may take it
            try:
                request.future.set_result([v for v in request.verdicts if v is not None])
            except InvalidStateError:
                pass  # cancelled by its client (disconnected or past its deadline)

    def close(self, *, close_grader: bool = True) -> None:
        """Finish queued work, stop the threads and (by default) close the grader."""
        with self._work:
            if self._closed:
                return
            self._closed = True
            self._work.notify_all()
        for thread in self.threads:
            thread.join()
        if close_grader:
            self.grader.close()
