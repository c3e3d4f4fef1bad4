"""What `rlvr serve` knows about its grader: the workers and sandbox state /health reports, and
how many batches it may grade at once.

A Ray grader reports its actors (how many, how many alive, how many were replaced); a grader with
a sandbox pool reports the pool's backend, its warm workers and how many are alive, their restarts,
the isolation in force and the pool's flags (e.g. `degraded:no-namespaces`). `state` sums it up:
"ok", "degraded" (some workers down, or running without isolation), "down" (closed or none alive),
"unreported" for graders that keep no worker pool of their own.
"""

from __future__ import annotations

from typing import Any

from rlvr.executors.ray_grader import RayGrader
from rlvr.graders.base import Grader
from rlvr.sandbox.pool import WorkerPool


def _state(alive: int, total: int, degraded: bool) -> str:
    if total == 0 or alive == 0:
        return "down"
    return "degraded" if degraded or alive < total else "ok"


def describe_workers(grader: Grader) -> dict[str, Any]:
    """The grader's workers and sandbox state (cheap: no call reaches a worker)."""
    if isinstance(grader, RayGrader):
        alive = sum(1 for slot in grader.slots if slot.alive)
        return {
            "backend": "ray",
            "workers": len(grader.slots),
            "alive": alive,
            "replacements": grader.replacements,
            "state": _state(alive, len(grader.slots), degraded=False),
        }
    sandbox = getattr(grader, "sandbox", None)
    if isinstance(sandbox, WorkerPool):
        if sandbox.closed:
            return {"backend": sandbox.name, "workers": sandbox.size, "alive": 0, "state": "down"}
        alive = sum(1 for worker in sandbox.workers if worker.alive())
        flags = sandbox.flags
        isolation = getattr(sandbox, "isolation", None)
        degraded = isolation == "none" or any(flag.startswith("degraded") for flag in flags)
        return {
            "backend": sandbox.name,
            "workers": sandbox.size,
            "alive": alive,
            "restarts": sum(worker.restarts for worker in sandbox.workers),
            "isolation": isolation,
            "flags": flags,
            "state": _state(alive, sandbox.size, degraded),
        }
    # graders without a worker pool of their own (math, SQL, ...) do not expose their helpers' state
    return {"backend": type(grader).__name__, "workers": None, "alive": None, "state": "unreported"}


def concurrent_batches(grader: Grader) -> int:
    """Batches to grade at once by default. Two for a local code grader: its `grade_many` is
    thread-safe (locked caches, a thread-safe sandbox pool, one type-checking thread) and a batch
    spends part of its time in single-threaded preparation, which a second batch fills; one for
    every other grader (a Ray grader already spreads each batch over its actors; the other
    families' graders are not made to be called concurrently)."""
    if isinstance(grader, RayGrader):
        return 1
    return 2 if grader.family == "code" and isinstance(getattr(grader, "sandbox", None), WorkerPool) else 1
