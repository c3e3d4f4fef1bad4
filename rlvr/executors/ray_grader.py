"""Grade on a Ray cluster: one actor per worker, each holding its own grader and warm sandbox.

Each task has a home actor (a stable hash of its id), so the per-task caches of the graders
(oracles, property-test inputs, the reference's perf counts) stay warm from step to step; an idle
actor steals from the longest queue, so affinity does not cost balance. The driver splits a
batch into chunks and keeps at most `max_inflight_per_worker` chunks queued on each actor
(backpressure: the driver never floods the object store, and a lost actor loses little work).

When an actor dies mid-batch (node failure, OOM kill, chunk over its deadline) its chunks are
retried once, item by item so that one poisonous item cannot sink its neighbours, on
the surviving or replacement actors; an item that fails a second time gets a verdict with
`error` set and the `worker_lost` flag — never a silent 0.

Trusted-oracle rule: actors are trusted grading processes (they hold the pack's hidden data);
untrusted code still runs only inside each actor's sandbox.
"""

from __future__ import annotations

import math
import os
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task, Verdict, grader_fault
from rlvr.executors.ray_cluster import connect
from rlvr.graders.base import Grader, check_options, grade_or_fault, make_grader, pack_grader_class
from rlvr.sandbox.pool import REQUIRE_ISOLATION_ENV, isolation_required
from rlvr.task_packs.registry import resolve_pack

GraderFactory = Callable[..., Grader]

DEFAULT_CHUNK_TIMEOUT_SECONDS = 900.0
MAX_CHUNK_SIZE = 32
WORKER_LOST_FLAG = "worker_lost"


class GradingWorker:
    """The body of one Ray actor: builds its grader (and so its sandbox) once, then grades chunks."""

    def __init__(self, pack: TaskPack | str, factory: GraderFactory | None, options: dict[str, Any]) -> None:
        resolved = resolve_pack(pack)
        self.grader = (factory or make_grader)(resolved, **options)

    def describe(self) -> dict[str, Any]:
        """The actor's process id, its grader's reward weights and whether it refuses degraded sandboxes."""
        weights = getattr(self.grader, "weights", None)
        return {
            "pid": os.getpid(),
            "weights": dict(weights) if isinstance(weights, dict) else None,
            "require_isolation": isolation_required(),
        }

    def grade(self, task_ids: list[str], completions: list[str]) -> list[Verdict]:
        return grade_or_fault(self.grader, task_ids, completions)

    def close(self) -> None:
        self.grader.close()


@dataclass
class _Chunk:
    positions: list[int]
    attempt: int = 0


@dataclass
class _Slot:
    """One worker position; `actor` is replaced when the actor dies."""

    index: int
    actor: Any
    inflight: int = 0
    alive: bool = True
    isolated: bool = False  # running a retry, alone, so that its loss cannot take others down
    starting: Any = None  # a replacement's readiness probe; no work (or deadline) until it answers
    starting_since: float = 0.0


@dataclass
class _InFlight:
    slot: _Slot
    actor: Any
    chunk: _Chunk
    started: float


def _first_line(exc: BaseException) -> str:
    exc = getattr(exc, "cause", None) or exc  # a RayTaskError wraps the remote exception
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"[:300]


class RayGrader(Grader):
    """A `Grader` whose `grade_many` fans out to Ray actors.

    `workers` defaults to the cluster's CPUs divided by `cpus_per_worker`. `address` is None
    (start a private loopback cluster), "auto", "HOST:PORT" or "ray://HOST:PORT". Remaining
    options go to each actor's `make_grader` (e.g. `jobs`, `timeout`, `types`); `jobs` defaults
    to `cpus_per_worker` so each actor's sandbox matches the CPUs Ray reserved for it.
    """

    def __init__(
        self,
        pack: TaskPack | str,
        workers: int | None = None,
        address: str | None = None,
        *,
        cpus_per_worker: float = 1.0,
        chunk_size: int | None = None,
        max_inflight_per_worker: int = 2,
        chunk_timeout: float = DEFAULT_CHUNK_TIMEOUT_SECONDS,
        max_worker_replacements: int | None = None,
        affinity: bool = True,
        grader_factory: GraderFactory | None = None,
        num_cpus: int | None = None,
        start_timeout: float = 180.0,
        **options: Any,
    ) -> None:
        resolved = resolve_pack(pack)
        super().__init__(resolved)
        if grader_factory is None:  # the actors' graders take these options: check them here, once
            self.options = check_options(resolved, **options)
        if workers is not None and workers < 1:
            raise ValueError("workers must be at least 1")
        if max_inflight_per_worker < 1:
            raise ValueError("max_inflight_per_worker must be at least 1")
        self.family = resolved.family
        self.ray, self._owns_cluster = connect(address, num_cpus=num_cpus)
        self.cpus_per_worker = cpus_per_worker
        if workers is None:
            cluster_cpus = float(self.ray.cluster_resources().get("CPU", 1))
            workers = max(1, int(cluster_cpus // cpus_per_worker))
        self.workers = workers
        self.chunk_size = chunk_size
        self.max_inflight_per_worker = max_inflight_per_worker
        self.chunk_timeout = chunk_timeout
        self.affinity = affinity
        self.start_timeout = start_timeout
        self.replacements_left = workers * 2 if max_worker_replacements is None else max_worker_replacements
        self.replacements = 0
        actor_options = dict(options)
        takes_jobs = "jobs" not in pack_grader_class(resolved).options_class.not_honoured
        if takes_jobs and actor_options.get("jobs") is None:  # absent or None (a CLI's "default")
            actor_options["jobs"] = max(1, int(cpus_per_worker))
        # A pack given by name is loaded on each actor; a pack object is put in the object store
        # once and every actor (including replacements) reads it from there.
        pack_spec: Any = self.ray.put(pack) if not isinstance(pack, str) else pack
        if isinstance(pack, str) and Path(pack).is_dir():  # actors may run in another directory
            pack_spec = str(Path(pack).resolve())
        self._actor_args = (pack_spec, grader_factory, actor_options)
        remote_options: dict[str, Any] = {"num_cpus": cpus_per_worker, "max_restarts": 0}
        if isolation_required():  # `--require-isolation` holds on every node, not just where it was given
            remote_options["runtime_env"] = {"env_vars": {REQUIRE_ISOLATION_ENV: "1"}}
        self._actor_class = self.ray.remote(**remote_options)(GradingWorker)
        self._lock = threading.Lock()
        self._closed = False
        self.slots: list[_Slot] = []
        try:
            self.slots = [_Slot(i, self._new_actor()) for i in range(workers)]
            # Fail fast if the actors cannot start or build their graders (e.g. rlvr missing on a
            # node, or more workers than the cluster has CPUs for).
            descriptions = self.ray.get(
                [slot.actor.describe.remote() for slot in self.slots], timeout=start_timeout
            )
        except Exception as exc:
            self.close()
            raise RuntimeError(f"could not start {workers} Ray grading workers: {_first_line(exc)}") from exc
        self.weights: dict[str, float] | None = descriptions[0]["weights"]

    # ------------------------------------------------------------------ actors
    def _new_actor(self) -> Any:
        return self._actor_class.remote(*self._actor_args)

    def _replace(self, slot: _Slot) -> None:
        slot.alive = False
        slot.inflight = 0
        slot.isolated = False
        slot.starting = None
        try:
            self.ray.kill(slot.actor)
        except Exception:
            pass  # already gone
        if self.replacements_left <= 0:
            return
        self.replacements_left -= 1
        self.replacements += 1
        slot.actor = self._new_actor()
        slot.alive = True
        slot.starting = slot.actor.describe.remote()
        slot.starting_since = time.monotonic()

    def _usable(self, slot: _Slot) -> bool:
        """Alive and started. A replacement gets work only once it has answered, so the time it
        takes to start never counts against a chunk's deadline."""
        if not slot.alive:
            return False
        if slot.starting is None:
            return True
        ready, _ = self.ray.wait([slot.starting], timeout=0)
        if not ready:
            if time.monotonic() - slot.starting_since > self.start_timeout:
                self._replace(slot)  # never came up (e.g. no room on the cluster)
            return False
        try:
            self.ray.get(slot.starting)
        except Exception:
            self._replace(slot)  # died while starting
            return False
        slot.starting = None
        return True

    def worker_pids(self) -> list[int]:
        """Process ids of the live actors (for tests and diagnostics)."""
        refs = [slot.actor.describe.remote() for slot in self.slots if slot.alive]
        return [description["pid"] for description in self.ray.get(refs)]

    # ------------------------------------------------------------------ batches
    def _home(self, task_id: str) -> int:
        """The worker that grades this task when it can: a stable hash, the same in every process."""
        return zlib.crc32(task_id.encode("utf-8", "surrogatepass")) % self.workers

    def _queues(self, tasks: list[Task]) -> list[deque[_Chunk]]:
        """One queue of chunks per worker, each holding the items of the tasks that worker is home to.

        Graders cache per task (oracles, property inputs, the reference's perf counts, type-check
        results), so sending a task to the same actor every time keeps those caches warm; an actor
        whose own queue runs dry steals from the longest other queue, so balance is kept."""
        chunk = self.chunk_size or max(1, min(MAX_CHUNK_SIZE, math.ceil(len(tasks) / (self.workers * 4))))
        by_home: list[list[int]] = [[] for _ in range(self.workers)]
        for position, task in enumerate(tasks):
            by_home[self._home(task.id) if self.affinity else position % self.workers].append(position)
        return [
            deque(_Chunk(items[start : start + chunk]) for start in range(0, len(items), chunk))
            for items in by_home
        ]

    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        if not tasks:
            return []
        with self._lock:
            if self._closed:
                return [grader_fault(task.id, "the Ray grader is closed") for task in tasks]
            return self._grade_locked(tasks, completions)

    def _grade_locked(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        ray = self.ray
        lost_errors = (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError)
        results: list[Verdict | None] = [None] * len(tasks)
        queues = self._queues(tasks)
        retries: deque[_Chunk] = deque()
        inflight: dict[Any, _InFlight] = {}

        def fail(chunk: _Chunk, message: str) -> None:
            for position in chunk.positions:
                verdict = grader_fault(tasks[position].id, message)
                verdict.flags.append(WORKER_LOST_FLAG)
                results[position] = verdict

        def retry_or_fail(chunk: _Chunk, reason: str) -> None:
            if chunk.attempt == 0:
                retries.extend(_Chunk([position], attempt=1) for position in chunk.positions)
            else:
                fail(chunk, f"grading worker lost twice; last: {reason}")

        while any(queues) or retries or inflight:
            self._dispatch(queues, retries, inflight, tasks, completions)
            if not inflight:
                starting = [slot.starting for slot in self.slots if slot.alive and slot.starting is not None]
                if starting:  # only replacements left, still starting: wait for one
                    ray.wait(starting, num_returns=1, timeout=1.0)
                    continue
                for queue in [*queues, retries]:  # every actor is gone and none may be replaced
                    while queue:
                        fail(queue.popleft(), "no grading workers left on the Ray cluster")
                break
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=1.0)
            for ref in ready:
                job = inflight.pop(ref)
                current = job.slot.actor is job.actor
                if current:
                    job.slot.inflight = max(0, job.slot.inflight - 1)
                    job.slot.isolated = False if job.chunk.attempt > 0 else job.slot.isolated
                try:
                    verdicts = ray.get(ref)
                except lost_errors as exc:
                    if current and job.slot.alive:
                        self._replace(job.slot)
                    retry_or_fail(job.chunk, _first_line(exc))
                    continue
                except Exception as exc:  # the actor's grader raised: a grader bug, not a lost worker
                    for position in job.chunk.positions:
                        results[position] = grader_fault(
                            tasks[position].id, f"grader fault on Ray worker: {_first_line(exc)}"
                        )
                    continue
                if not isinstance(verdicts, list) or len(verdicts) != len(job.chunk.positions):
                    fail(job.chunk, "worker returned a malformed result")
                    continue
                for position, verdict in zip(job.chunk.positions, verdicts, strict=True):
                    results[position] = verdict
            self._replace_overdue(inflight)
        return [
            v if v is not None else grader_fault(tasks[i].id, "internal: ungraded")
            for i, v in enumerate(results)
        ]

    def _dispatch(
        self,
        queues: list[deque[_Chunk]],
        retries: deque[_Chunk],
        inflight: dict[Any, _InFlight],
        tasks: list[Task],
        completions: list[str],
    ) -> None:
        """Hand out chunks while live actors have room (the backpressure bound).

        An actor takes from its own queue, else steals the last chunk of the longest queue. A retry
        goes only to an idle actor and then occupies it alone: if the item kills that actor too,
        no other item is lost with it."""
        progress = True
        while (any(queues) or retries) and progress:
            progress = False
            for slot in self.slots:
                if slot.isolated or not self._usable(slot):
                    continue
                if retries and slot.inflight == 0:
                    chunk = retries.popleft()
                    slot.isolated = True
                elif slot.inflight < self.max_inflight_per_worker and any(queues):
                    own = queues[slot.index]
                    chunk = own.popleft() if own else max(queues, key=len).pop()
                else:
                    continue
                ids = [tasks[p].id for p in chunk.positions]
                texts = [completions[p] for p in chunk.positions]
                ref = slot.actor.grade.remote(ids, texts)
                inflight[ref] = _InFlight(slot, slot.actor, chunk, time.monotonic())
                slot.inflight += 1
                progress = True

    def _replace_overdue(self, inflight: dict[Any, _InFlight]) -> None:
        """A chunk past its deadline means a hung worker: replace it; its chunks then come back as lost."""
        now = time.monotonic()
        for job in list(inflight.values()):
            if job.slot.actor is job.actor and job.slot.alive and now - job.started > self.chunk_timeout:
                self._replace(job.slot)

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        alive = [slot.actor for slot in self.slots if slot.alive]
        try:
            self.ray.get([actor.close.remote() for actor in alive], timeout=30)
        except Exception:
            pass  # an actor that cannot close cleanly is killed below
        for actor in alive:
            try:
                self.ray.kill(actor)
            except Exception:
                pass
        if self._owns_cluster:
            self.ray.shutdown()
