"""Merge concurrent grading requests into `grade_many` batches.

One background thread owns the grader. Requests wait in a queue; whenever the thread is free it
takes everything queued (up to `max_batch` items) and grades it as one batch. An idle batcher adds
no latency, and a busy one turns many small concurrent requests (server calls, verl threads) into
large batches, which is where the sandbox pool and the type checker are efficient.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from rlvr.core.types import Verdict
from rlvr.graders.base import Grader, grade_or_fault


class BatcherClosedError(RuntimeError):
    """Work submitted to a batcher that has been closed."""


@dataclass
class _Request:
    task_ids: list[str]
    completions: list[str]
    future: Future[list[Verdict]] = field(default_factory=Future)


class MicroBatcher:
    """Thread-safe front of one grader. `grade` blocks; `submit` returns a Future."""

    def __init__(self, grader: Grader, *, max_batch: int = 256) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self.grader = grader
        self.max_batch = max_batch
        self.batches_graded = 0
        self.items_graded = 0
        self._queue: queue.Queue[_Request | None] = queue.Queue()
        self._closed = False
        self._close_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="rlvr-batcher", daemon=True)
        self._thread.start()

    def submit(self, task_ids: Sequence[str], completions: Sequence[str]) -> Future[list[Verdict]]:
        if len(task_ids) != len(completions):
            raise ValueError(f"{len(task_ids)} task ids but {len(completions)} completions")
        request = _Request(list(task_ids), list(completions))
        with self._close_lock:
            if self._closed:
                raise BatcherClosedError("the grading batcher is closed")
            self._queue.put(request)
        return request.future

    def grade(self, task_ids: Sequence[str], completions: Sequence[str]) -> list[Verdict]:
        return self.submit(task_ids, completions).result()

    def pending(self) -> int:
        """Requests waiting for the grading thread (not counting the batch being graded)."""
        return self._queue.qsize()

    def _take_batch(self, first: _Request) -> tuple[list[_Request], bool]:
        batch, size, stop = [first], len(first.task_ids), False
        while size < self.max_batch:
            try:
                request = self._queue.get_nowait()
            except queue.Empty:
                break
            if request is None:
                stop = True
                break
            batch.append(request)
            size += len(request.task_ids)
        return batch, stop

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch, stop = self._take_batch(first)
            self._grade_batch(batch)
            if stop:
                return

    def _grade_batch(self, batch: list[_Request]) -> None:
        task_ids = [t for request in batch for t in request.task_ids]
        completions = [c for request in batch for c in request.completions]
        verdicts = grade_or_fault(self.grader, task_ids, completions)
        self.batches_graded += 1
        self.items_graded += len(task_ids)
        start = 0
        for request in batch:
            end = start + len(request.task_ids)
            request.future.set_result(verdicts[start:end])
            start = end

    def close(self, *, close_grader: bool = True) -> None:
        """Finish queued work, stop the thread and (by default) close the grader."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(None)
        self._thread.join()
        if close_grader:
            self.grader.close()
