"""A job's `timeout` is the candidate's CPU budget, not wall time: on a machine whose cores are busy,
an honest candidate that needs less CPU than its budget still passes, even when it takes longer than
the budget in wall time; a candidate that burns its budget, or sleeps past the wall limit, is stopped
with status `timeout` (a scored failure)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from adversarial.corpus import descendants

from rlvr.sandbox.pool import WALL_LIMIT_FACTOR, Job, LocalSandbox, ProcessWorker

BURN = """
def burn(seconds):
    import time
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
    return "done"
"""
HOGS = 3
HOG = "import os, sys\nos.sched_setaffinity(0, {0})\nprint('busy', flush=True)\nwhile True:\n    pass\n"
SLEEP = """
def burn(seconds):
    import time
    time.sleep(seconds)
    return "done"
"""


@pytest.fixture
def sandbox_sharing_one_core() -> Iterator[LocalSandbox]:
    """A one-worker sandbox whose zygote (and so every child it forks) shares CPU 0 with busy loops
    of ours: the candidate gets about a quarter of one core."""
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("needs os.sched_setaffinity (Linux)")
    sandbox = LocalSandbox(1)
    hogs: list[subprocess.Popen[bytes]] = []
    try:
        assert sandbox.run(Job(source=BURN, entry="burn", calls=[(0.0,)], timeout=5.0)).status == "ok"
        worker = sandbox.workers[0]
        assert isinstance(worker, ProcessWorker) and worker.process is not None
        for pid in {worker.process.pid, *descendants(worker.process.pid)}:
            os.sched_setaffinity(pid, {0})
        # three busy loops, each in its own session (the kernel's autogroup scheduling shares a core
        # between sessions, and the candidate runs in a session of its own): about a quarter each
        hogs = [
            subprocess.Popen(
                [sys.executable, "-c", HOG],
                stdout=subprocess.PIPE,
                start_new_session=True,
            )
            for _ in range(HOGS)
        ]
        for hog in hogs:
            assert hog.stdout is not None and hog.stdout.readline() == b"busy\n"
        yield sandbox
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        sandbox.close()


def test_an_honest_candidate_slowed_by_a_busy_core_is_not_timed_out(sandbox_sharing_one_core) -> None:
    result = sandbox_sharing_one_core.run(Job(source=BURN, entry="burn", calls=[(0.5,)], timeout=1.0))
    assert result.status == "ok", result
    # all its work done: it ran to the end (about 2 s of wall time at a quarter of a core, twice its
    # budget: measured in benchmarks/bench_guards.py, where a wall-clock limit shows as a ratio below 1)
    assert result.outcomes[0] is not None and result.outcomes[0].value == "done"


def test_a_candidate_that_burns_its_budget_is_stopped_as_a_timeout(sandbox_sharing_one_core) -> None:
    result = sandbox_sharing_one_core.run(Job(source=BURN, entry="burn", calls=[(30.0,)], timeout=1.0))
    # killed by the limit: 30 CPU seconds of work would have come back "done"
    assert result.status == "timeout", result
    assert result.outcomes == [] or result.outcomes[0] is None or result.outcomes[0].value != "done"


def test_a_sleeping_candidate_is_stopped_at_the_wall_limit_not_at_its_cpu_budget() -> None:
    """A sleeper uses no CPU, so only the wall limit (WALL_LIMIT_FACTOR x the budget) stops it; one
    that sleeps past its budget but well inside the wall limit finishes. (How close to the wall
    limit the kill lands: benchmarks/bench_guards.py.)"""
    sandbox = LocalSandbox(1)
    try:
        forever = sandbox.run(Job(source=SLEEP, entry="burn", calls=[(60.0,)], timeout=0.5))
        past_budget = sandbox.run(Job(source=SLEEP, entry="burn", calls=[(0.6,)], timeout=0.5))
    finally:
        sandbox.close()
    assert forever.status == "timeout", forever
    assert past_budget.status == "ok", past_budget  # 0.6 s asleep: past the budget, inside the 1.5 s limit
    assert past_budget.outcomes[0] is not None and past_budget.outcomes[0].value == "done"
    assert WALL_LIMIT_FACTOR * 0.5 > 0.6 + 0.5  # the margin the second job relies on
