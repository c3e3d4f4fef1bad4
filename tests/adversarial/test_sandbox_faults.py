"""Penalty escapes through the sandbox: whatever a candidate does — run out of time, memory or
output, crash, forge or withhold its results, exit early, attack the zygote that forks it — the run
ends in a candidate-attributable status (timeout, output_limit, crash, protocol, load_error, or ok
with failing calls), which the grader scores as a flagged failure. `sandbox_error` is left for faults
of the machinery itself, and no candidate can produce one: the zygote survives every case of the
corpus, unrestarted and with its scheduling, affinity and limits untouched."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from adversarial.corpus import TASKS, HostProbe, job_for, load_cases, process_table
from adversarial.docker_support import require_docker
from adversarial.isolation import namespaced_sandbox

from rlvr.core.types import Verdict
from rlvr.graders.base import Grader
from rlvr.sandbox import Job, LocalSandbox, make_sandbox
from rlvr.sandbox.pool import ProcessWorker, WorkerPool

CASES = load_cases()
CANDIDATE_STATUSES = {"ok", "timeout", "output_limit", "crash", "protocol", "load_error"}

# One source per limit a candidate can hit, with the status it must end in.
LIMITS: dict[str, tuple[Job, set[str]]] = {
    "timeout": (Job("def f():\n    while True:\n        pass\n", "f", [()], timeout=1.0), {"timeout"}),
    "memory_in_call": (
        Job("def f():\n    return len(bytearray(1 << 31))\n", "f", [()], timeout=5, mem_mb=256),
        {"ok"},  # the call raised MemoryError: a failed call, not a sandbox fault
    ),
    "memory_at_load": (
        Job("BLOB = bytearray(1 << 31)\ndef f():\n    return 1\n", "f", [()], timeout=5, mem_mb=256),
        {"load_error"},
    ),
    "output_limit": (
        Job("def f():\n    return 'x' * (8 << 20)\n", "f", [()], timeout=5, max_output=1 << 16),
        {"output_limit"},
    ),
    "exit_before_results": (Job("import os\ndef f():\n    os._exit(0)\n", "f", [()], timeout=5), {"crash"}),
    "stack_overflow": (
        Job(
            "import sys\nsys.setrecursionlimit(10**9)\ndef f(n=0):\n    return f(n + 1)\n",
            "f",
            [()],
            timeout=3,
        ),
        {"crash", "ok", "timeout"},  # the C stack overflows, memory runs out, or time does
    ),
    "self_sigkill": (
        Job("import signal\ndef f():\n    signal.raise_signal(signal.SIGKILL)\n", "f", [()], timeout=5),
        {"crash"},
    ),
}


def zygote_pid(worker: Any) -> int:
    """The zygote: the launcher's child (namespaces) or the launcher itself after its exec (bare)."""
    assert isinstance(worker, ProcessWorker) and worker.process is not None
    if worker.isolation == "none":
        return worker.process.pid
    (child,) = [pid for pid, parent in process_table().items() if parent == worker.process.pid]
    return child


def scheduling(pid: int) -> dict[str, Any]:
    return {
        "nice": os.getpriority(os.PRIO_PROCESS, pid),
        "affinity": sorted(os.sched_getaffinity(pid)),
        "policy": os.sched_getscheduler(pid),
        "limits": Path(f"/proc/{pid}/limits").read_text(),
    }


POOLS: dict[str, Callable[[], LocalSandbox]] = {
    "namespaces": lambda: namespaced_sandbox(1),
    "degraded": lambda: LocalSandbox(1, isolation="none"),
}


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProbe]:
    host = HostProbe(tmp_path_factory.mktemp("faults"))
    yield host
    host.close()


@pytest.mark.parametrize("mode", sorted(POOLS))
@pytest.mark.parametrize("limit", sorted(LIMITS))
def test_each_limit_ends_in_a_candidate_status(mode: str, limit: str) -> None:
    job, statuses = LIMITS[limit]
    with POOLS[mode]() as pool:
        result = pool.run(job)
        assert result.status in statuses, (result.status, result.detail)
        assert not result.sandbox_error
        if limit == "memory_in_call":
            assert result.outcomes[0] is not None and result.outcomes[0].exception == "MemoryError"
        after = pool.run(Job("def f():\n    return 7\n", "f", [()], timeout=5))
        assert after.status == "ok" and after.outcomes[0] is not None and after.outcomes[0].value == 7
        assert pool.workers[0].restarts == 0


def check_zygote_survives_corpus(pool: WorkerPool, probe: HostProbe, zygote: int | None) -> None:
    before = scheduling(zygote) if zygote is not None else None
    for case in CASES:
        result = pool.run(job_for(TASKS[case.task], probe.render(case.template)))
        assert result.status in CANDIDATE_STATUSES, f"{case.name}: {result.status} {result.detail}"
        if zygote is not None:
            assert scheduling(zygote) == before, f"{case.name} changed the zygote's scheduling or limits"
    assert [worker.restarts for worker in pool.workers] == [0], "a candidate made the zygote fail"
    assert probe.written_files() == []  # and no case left a file on the host, in any mode


@pytest.mark.parametrize(
    "mode", [pytest.param(m, marks=pytest.mark.slow) if m == "degraded" else m for m in sorted(POOLS)]
)
def test_no_case_makes_the_zygote_fail(probe: HostProbe, mode: str) -> None:
    with POOLS[mode]() as pool:
        check_zygote_survives_corpus(pool, probe, zygote_pid(pool.workers[0]))


@pytest.mark.docker
def test_no_case_makes_the_zygote_fail_docker(probe: HostProbe) -> None:
    require_docker("runc")
    with make_sandbox("docker", 1) as pool:
        check_zygote_survives_corpus(pool, probe, None)


def test_scheduling_probe_can_fail() -> None:
    """`scheduling` sees a renice done from outside the sandbox."""
    with namespaced_sandbox(1) as pool:
        zygote = zygote_pid(pool.workers[0])
        before = scheduling(zygote)
        os.setpriority(os.PRIO_PROCESS, zygote, before["nice"] + 3)
        assert scheduling(zygote) != before


ADD_CASES = [case for case in CASES if case.task == "add"]
FAULT_FLAGS = {"timeout", "crash", "output_limit", "forged_output", "load_error"}


def test_candidate_faults_are_scored_failures_through_the_grader(
    corpus_grader: Grader, probe: HostProbe
) -> None:
    """Through the real code grader: no hostile case of the corpus ends with `error` set, none passes,
    and one that broke its run carries a flag naming what it hit."""
    sources = [probe.render(case.template) for case in ADD_CASES]
    verdicts = corpus_grader.grade_many(["HumanEval/53"] * len(sources), sources)
    for case, verdict in zip(ADD_CASES, verdicts, strict=True):
        assert isinstance(verdict, Verdict)
        assert verdict.error is None and verdict.fault is None, f"{case.name}: {verdict.to_json()}"
        assert not verdict.passed, case.name
        if case.statuses and "ok" not in case.statuses:
            assert FAULT_FLAGS.intersection(verdict.flags), f"{case.name}: {verdict.flags}"
