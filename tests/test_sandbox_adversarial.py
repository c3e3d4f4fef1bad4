"""The adversarial corpus (tests/adversarial) against the sandbox backends, at the sandbox level:
every hostile candidate earns no test credit, leaves no process, file or connection behind, and the
pool keeps serving the honest control that runs beside it."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pytest
from adversarial.corpus import (
    TASKS,
    Case,
    HostProbe,
    credited,
    descendants,
    job_for,
    load_cases,
    stray_processes,
)
from adversarial.docker_support import require_docker
from adversarial.isolation import namespaced_sandbox
from adversarial.poisoning import AFTER_POISON, POISONS

from rlvr.sandbox import LocalSandbox, make_sandbox
from rlvr.sandbox.pool import ProcessWorker, WorkerPool

CASES = load_cases()


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProbe]:
    host = HostProbe(tmp_path_factory.mktemp("adversarial"))
    yield host
    host.close()


@pytest.fixture(scope="module")
def local_pool() -> Iterator[LocalSandbox]:
    pool = namespaced_sandbox(2)
    yield pool
    pool.close()


def worker_pids(pool: WorkerPool) -> list[int]:
    return [w.pid for w in pool.workers if isinstance(w, ProcessWorker) and w.pid is not None]


def assert_no_host_effect(probe: HostProbe, pool: WorkerPool) -> None:
    assert probe.written_files() == []
    assert probe.accepted_connections() == 0
    assert stray_processes(worker_pids(pool)) == []


def test_probes_see_host_effects(probe: HostProbe) -> None:
    """The checks above can fail: an unsandboxed write, connection and child are all detected."""
    import socket
    import subprocess
    import sys

    canary = probe.canary_dir / "pwned"
    canary.write_text("x")
    assert probe.written_files() == [str(canary)]
    canary.unlink()
    socket.create_connection(("127.0.0.1", probe.port), timeout=5).close()
    time.sleep(0.05)
    assert probe.accepted_connections() == 1
    sleeper = "import time; time.sleep(30)"
    spawner = (
        f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {sleeper!r}]); time.sleep(30)"
    )
    # worker -> "zygote" -> stray: the pattern a candidate that escaped the reaper would leave
    parent = subprocess.Popen(
        [sys.executable, "-c", f"import subprocess, sys; subprocess.run([sys.executable, '-c', {spawner!r}])"]
    )
    try:
        deadline = time.monotonic() + 10
        while not stray_processes([parent.pid]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(stray_processes([parent.pid])) == 1  # the grandchild; the child plays the zygote
    finally:
        for pid in descendants(parent.pid):
            os.kill(pid, signal.SIGKILL)
        parent.kill()
        parent.wait()


def test_corpus_is_broad() -> None:
    assert len(CASES) >= 50
    assert {case.task for case in CASES} == set(TASKS)


@pytest.mark.parametrize("task_name", sorted(TASKS))
def test_honest_controls_pass(local_pool: LocalSandbox, task_name: str) -> None:
    task = TASKS[task_name]
    assert credited(local_pool.run(job_for(task, task.honest)), task)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_hostile_case_local(local_pool: LocalSandbox, probe: HostProbe, case: Case) -> None:
    task = TASKS[case.task]
    hostile, honest = local_pool.run_many(
        [job_for(task, probe.render(case.template)), job_for(task, task.honest)]
    )
    assert not credited(hostile, task), f"{case.name} earned credit: {case.attack}"
    if case.statuses:
        assert hostile.status in case.statuses, (hostile.status, hostile.detail)
    assert credited(honest, task), f"honest control failed beside {case.name}: {honest}"
    assert hostile.flags == [] and honest.flags == []  # full isolation, nothing degraded
    assert_no_host_effect(probe, local_pool)


@pytest.mark.parametrize("poison", sorted(POISONS))
def test_warm_worker_poisoning_does_not_carry_over(poison: str) -> None:
    task = TASKS["add"]
    with namespaced_sandbox(1) as pool:
        poisoned = pool.run(job_for(task, POISONS[poison]))
        after = pool.run(job_for(task, AFTER_POISON))
    assert not credited(poisoned, task)
    assert credited(after, task), after
    assert after.denied == [], after.denied


def test_corpus_through_docker(probe: HostProbe, docker_backend: str | None) -> None:
    runtime = None if docker_backend == "runc" else docker_backend
    pool = make_sandbox("docker", 2, runtime=runtime)
    try:
        jobs = []
        for case in CASES:
            task = TASKS[case.task]
            jobs += [job_for(task, probe.render(case.template)), job_for(task, task.honest)]
        results = pool.run_many(jobs)
        for case, hostile, honest in zip(CASES, results[::2], results[1::2], strict=True):
            task = TASKS[case.task]
            assert not credited(hostile, task), f"{case.name} earned credit under docker/{docker_backend}"
            assert credited(honest, task), f"honest control failed beside {case.name}: {honest}"
        assert probe.written_files() == []
        assert probe.accepted_connections() == 0
        for worker in pool.workers:
            container = getattr(worker, "container", None)
            assert container is not None
            assert len(container.top()["Processes"]) == 1, "stray processes left in a sandbox container"
    finally:
        pool.close()


@pytest.fixture(params=["runc", "runsc"])
def docker_backend(request: pytest.FixtureRequest) -> str:
    require_docker(str(request.param))
    return str(request.param)
