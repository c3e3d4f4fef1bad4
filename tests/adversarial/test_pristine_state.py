"""Every candidate starts from a pristine sandbox: whatever any hostile candidate of the corpus did,
the candidate that runs next on the same warm worker gets exactly the verdict it gets alone — the
same results and operation counts, and the same view of its process state (scratch directory,
scheduling, CPU affinity, resource limits, descriptors, ...), which it inherits from the zygote.

One worker per pool, so the hostile candidate and the observer share one zygote. The baseline is
each observer's first run in a fresh pool."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from adversarial.corpus import TASKS, Case, HostProbe, job_for, load_cases
from adversarial.docker_support import require_docker
from adversarial.isolation import namespaced_sandbox, without_audit_hook

from rlvr.sandbox import Job, LocalSandbox, make_sandbox
from rlvr.sandbox.pool import WorkerPool

CASES = load_cases()

# Everything a candidate inherits from its zygote and could observe. No pids and no times: those
# differ between two honest runs too.
STATE_PROBE = """
import os
import re
import resource
import sys


def state():
    limits = {}
    for name in ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_CORE"):
        limits[name] = list(resource.getrlimit(getattr(resource, name)))
    fds = []
    for fd in range(64):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            pass
    old_umask = os.umask(0o22)
    os.umask(old_umask)
    return {
        # the scratch directory: the sandbox's /tmp, or the degraded mode's private working directory
        "scratch": sorted(os.listdir("/tmp" if os.getcwd() == "/" else ".")),
        "tmp_inodes": os.statvfs("/tmp").f_files,
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "affinity": sorted(os.sched_getaffinity(0)),
        "policy": os.sched_getscheduler(0),
        "limits": limits,
        "fds": fds,
        "umask": old_umask,
        "cwd": re.sub(r"rlvr-sandbox-\\w+", "rlvr-sandbox-*", os.getcwd()),
        "environ": dict(os.environ),
        "recursion": sys.getrecursionlimit(),
        "modules": sorted(sys.modules),
        "own_group": os.getpgrp() == os.getpid(),
    }
"""


def observers() -> dict[str, Job]:
    """Jobs whose whole outcome (results and counted operations) must not depend on what ran before."""
    jobs = {"state": Job(STATE_PROBE, "state", [()], timeout=10, trace=True)}
    for name, task in TASKS.items():
        jobs[name] = Job(task.honest, task.entry, list(task.calls), timeout=10, trace=True)
    return jobs


def observed(result: Any) -> dict[str, Any]:
    return {
        "status": result.status,
        "values": [(o.ok, o.value, o.exception) if o is not None else None for o in result.outcomes],
        "counts": result.counts,
        "flags": result.flags,
    }


def baseline(make_pool: Any) -> dict[str, dict[str, Any]]:
    alone = {}
    for name, job in observers().items():
        with make_pool() as pool:
            alone[name] = observed(pool.run(job))
            assert alone[name]["status"] == "ok", (name, alone[name])
    return alone


def check_after(pool: WorkerPool, probe: HostProbe, case: Case, alone: dict[str, dict[str, Any]]) -> None:
    task = TASKS[case.task]
    pool.run(job_for(task, probe.render(case.template)))
    for name, job in observers().items():
        after = observed(pool.run(job))
        assert after == alone[name], f"after {case.name} ({case.attack}), {name} differs from its run alone"


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProbe]:
    host = HostProbe(tmp_path_factory.mktemp("pristine"))
    yield host
    host.close()


@pytest.fixture(scope="module")
def local_alone() -> dict[str, dict[str, Any]]:
    return baseline(lambda: namespaced_sandbox(1))


@pytest.fixture(scope="module")
def local_worker() -> Iterator[LocalSandbox]:
    pool = namespaced_sandbox(1)
    yield pool
    pool.close()


def test_the_observer_sees_inherited_state() -> None:
    """The comparison can fail: state a zygote passes on (here its nice value, set from outside the
    sandbox the way a hostile candidate would from inside) shows up in the observer's verdict."""
    import os

    from rlvr.sandbox.pool import ProcessWorker

    alone = baseline(lambda: namespaced_sandbox(1))
    with namespaced_sandbox(1) as pool:
        worker = pool.workers[0]
        assert isinstance(worker, ProcessWorker) and worker.process is not None
        zygote = next(pid for pid in _children(worker.process.pid))
        os.setpriority(os.PRIO_PROCESS, zygote, 7)
        after = observed(pool.run(observers()["state"]))
    assert after != alone["state"] and after["values"][0][1]["nice"] == 7


def _children(pid: int) -> list[int]:
    from adversarial.corpus import process_table

    return [child for child, parent in process_table().items() if parent == pid]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_next_candidate_is_unaffected_local(
    local_worker: LocalSandbox, local_alone: dict[str, dict[str, Any]], probe: HostProbe, case: Case
) -> None:
    check_after(local_worker, probe, case, local_alone)


@pytest.mark.slow  # the namespaced and docker runs stay in the default set
def test_next_candidate_is_unaffected_degraded(probe: HostProbe) -> None:
    """The same property in the degraded (no namespaces) mode, over the whole corpus."""
    alone = baseline(lambda: LocalSandbox(1, isolation="none"))
    with LocalSandbox(1, isolation="none") as pool:
        for case in CASES:
            check_after(pool, probe, case, alone)


@pytest.mark.docker
def test_next_candidate_is_unaffected_docker(probe: HostProbe) -> None:
    require_docker("runc")
    alone = baseline(lambda: make_sandbox("docker", 1))
    with make_sandbox("docker", 1) as pool:
        for case in CASES:
            check_after(pool, probe, case, alone)


def test_a_dirty_scratch_ends_the_zygote(monkeypatch: pytest.MonkeyPatch) -> None:
    """The backstop behind the syscall filter: with the filter and the audit hook both switched off,
    a candidate can leave a file in /tmp — and the zygote then exits after answering, so the pool
    starts a fresh one and the next candidate still finds /tmp empty."""
    import rlvr.sandbox.pool as pool_module

    weakened = without_audit_hook(pool_module.ZYGOTE_SOURCE)
    assert "note = install_audit_hook(" not in weakened
    monkeypatch.setattr(pool_module, "ZYGOTE_SOURCE", weakened)
    monkeypatch.setattr(pool_module, "syscall_filter_hex", lambda: None)
    litter = "def f():\n    open('/tmp/left-behind', 'w').close()\n    return 1\n"
    look = "import os\ndef f():\n    return sorted(os.listdir('/tmp'))\n"
    with namespaced_sandbox(1) as pool:
        assert pool.flags == ["no-syscall-filter"]
        first = pool.run(Job(litter, "f", [()], timeout=10))
        assert first.status == "ok" and first.outcomes[0] is not None and first.outcomes[0].value == 1
        after = pool.run(Job(look, "f", [()], timeout=10))
        assert after.outcomes[0] is not None and after.outcomes[0].value == []
        assert pool.workers[0].restarts == 1
