"""One request per round of program tests (`run_each`): the sandbox's child loads the driver once and
forks one child per test from it. Each test keeps its own limits and its own fresh state: what one
test leaves behind (in builtins, `sys.modules`, a module attribute, /tmp) is not seen by the next
test of the same round, one test spending 4x its time limit fails alone, a crash in test 3 is test 3's
verdict only, and a round whose outputs do not fit one response still reports every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlvr.core import StaticPack, Task
from rlvr.graders.base import Grader, make_grader
from rlvr.graders.code.programs.driver import RUN_ENTRY, driver_source
from rlvr.sandbox import Job, LocalSandbox, WorkerPool
from rlvr.sandbox.pool import ExecResult

LIMIT = 2 << 20


@pytest.fixture(scope="module")
def sandbox() -> Iterator[WorkerPool]:
    with LocalSandbox(1) as made:
        yield made


def _round(
    program: str, inputs: list[str], timeout: float = 1.0, max_output: int = 1 << 20, stop: bool = False
) -> Job:
    return Job(
        source=driver_source(program),
        entry=RUN_ENTRY,
        calls=[(text, LIMIT) for text in inputs],
        timeout=timeout,
        trace=True,
        max_output=max_output,
        stop_on_failure=stop,
    )


def _stdout(result: ExecResult | None) -> str | None:
    if result is None or result.status != "ok" or not result.outcomes or result.outcomes[0] is None:
        return None
    return result.outcomes[0].value[0]


# each program remembers every input it saw where the state would survive, and prints the first one:
# in a fresh child that is its own input
STATE = {
    "builtins": "import builtins\nseen = builtins.__dict__.setdefault('_kept', [])\n",
    "sys.modules": "import sys, types\nseen = sys.modules.setdefault('_kept', types.SimpleNamespace(s=[])).s\n",
    "module attribute": "import string\nseen = string.__dict__.setdefault('_kept', [])\n",
}


@pytest.mark.parametrize("where", sorted(STATE))
def test_state_left_by_one_test_is_not_seen_by_the_next_of_the_round(sandbox: WorkerPool, where: str) -> None:
    program = STATE[where] + "seen.append(input())\nprint(seen[0])\n"
    results = sandbox.run_each(_round(program, ["a\n", "b\n", "c\n", "d\n"]))
    assert [_stdout(r) for r in results] == ["a\n", "b\n", "c\n", "d\n"]


def test_a_file_written_to_tmp_by_one_test_is_not_seen_by_the_next(sandbox: WorkerPool) -> None:
    program = (
        "import os\nname = input().strip()\n"
        "try:\n    open('/tmp/kept', 'w').write(name)\nexcept OSError:\n    pass\n"
        "print(os.listdir('/tmp'))\n"
    )
    results = sandbox.run_each(_round(program, ["a\n", "b\n", "c\n"]))
    assert [_stdout(r) for r in results] == ["[]\n"] * 3
    assert all(r is not None and "file_write" in r.denied for r in results)


def test_the_module_loads_once_and_each_call_starts_from_its_loaded_state(sandbox: WorkerPool) -> None:
    # a plain (non-driver) job: what the module body set up is there for every call, as loaded
    job = Job(
        source="calls = []\ndef f(x):\n    calls.append(x)\n    return len(calls)\n",
        entry="f",
        calls=[(i,) for i in range(5)],
        trace=True,
    )
    results = sandbox.run_each(job)
    assert [r.outcomes[0].value for r in results if r and r.outcomes and r.outcomes[0]] == [1] * 5
    assert len({r.load_count for r in results if r}) == 1


def test_one_test_spending_four_times_its_limit_fails_alone(sandbox: WorkerPool) -> None:
    program = (
        "import time\nn = int(input())\n"
        "if n == 2:\n    end = time.process_time() + 2.0\n    while time.process_time() < end:\n        pass\n"
        "print(n)\n"
    )
    results = sandbox.run_each(_round(program, ["0\n", "1\n", "2\n", "3\n", "4\n"], timeout=0.5))
    assert [r.status if r else None for r in results] == ["ok", "ok", "timeout", "ok", "ok"]
    assert [_stdout(r) for r in results] == ["0\n", "1\n", None, "3\n", "4\n"]


def test_a_crash_in_test_three_is_test_three_s_result_only(sandbox: WorkerPool) -> None:
    program = "import os\nn = int(input())\nif n == 3:\n    os.abort()\nprint(n)\n"
    inputs = [f"{n}\n" for n in range(1, 7)]
    results = sandbox.run_each(_round(program, inputs))
    assert [r.status if r else None for r in results] == ["ok", "ok", "crash", "ok", "ok", "ok"]
    stopped = sandbox.run_each(_round(program, inputs, stop=True))
    assert [r.status if r else None for r in stopped] == ["ok", "ok", "crash", None, None, None]


def test_the_output_limit_is_per_test_and_counted_outside_the_child(sandbox: WorkerPool) -> None:
    program = "n = int(input())\nprint('x' * (300_000 if n == 1 else 10))\n"
    results = sandbox.run_each(_round(program, ["0\n", "1\n", "2\n"], max_output=100_000))
    assert [r.status if r else None for r in results] == ["ok", "output_limit", "ok"]


def test_a_round_whose_outputs_exceed_one_response_reports_every_test(sandbox: WorkerPool) -> None:
    # six 1.9 MB outputs: more than the 8 MB one response may hold, so the round continues in
    # further requests; every test is reported once, in order
    program = "n = int(input())\nprint(str(n) * 1_900_000)\n"
    inputs = [f"{n}\n" for n in range(1, 7)]
    results = sandbox.run_each(_round(program, inputs, max_output=3 << 20))
    assert [len(out or "") for out in map(_stdout, results)] == [1_900_001] * 6
    assert [(out or " ")[0] for out in map(_stdout, results)] == ["1", "2", "3", "4", "5", "6"]


# -- through the grader
PARTIAL = Task(
    id="rounds/partial",
    prompt="Print n.",
    hidden={
        "program": {
            "tests": [{"input": f"{n}\n", "output": f"{n}\n"} for n in range(1, 7)],
            "partial_credit": True,
        }
    },
)
SLOW = Task(
    id="rounds/slow",
    prompt="Print n.",
    hidden={
        "program": {
            "tests": [{"input": f"{n}\n", "output": f"{n}\n"} for n in range(1, 9)],
            "time_limit": 0.4,
        }
    },
)


@pytest.fixture(scope="module")
def grader() -> Iterator[Grader]:
    with make_grader(StaticPack("rounds", [PARTIAL, SLOW]), types=False, jobs=2) as made:
        yield made


def test_a_crash_in_test_three_costs_test_three_only(grader: Grader) -> None:
    verdict = grader.grade(
        "rounds/partial", "import os\nn = int(input())\nif n == 3:\n    os.abort()\nprint(n)\n"
    )
    assert verdict.components["tests"].score == pytest.approx(5 / 6)
    assert "crash" in verdict.flags and verdict.error is None


def test_four_times_the_limit_on_one_test_fails_among_fast_ones(grader: Grader) -> None:
    program = (
        "import time\nn = int(input())\n"
        "if n == 2:\n    end = time.process_time() + 1.6\n    while time.process_time() < end:\n        pass\n"
        "print(n)\n"
    )
    verdict = grader.grade("rounds/slow", program)
    assert not verdict.passed and "timeout:tests" in verdict.flags and verdict.error is None
    assert "test 2 of 8" in verdict.feedback
    honest = grader.grade("rounds/slow", "print(int(input()))\n")
    assert honest.passed, honest.feedback
