"""Red team 5: whole programs (stdin/stdout and call-based tasks).

Attacks written against `rlvr/graders/code/programs/` as it stood (issue 33, classes 1-4):

  1. the stdout limit was `2 * len(repr(expected)) + 4096` bytes per test, enforced inside the
     candidate's process: a program that probes how many bytes it may write (or reads the limit out
     of the stream object's closure) knows the expected output's length, enough to answer a YES/NO
     problem without reading its input;
  2. a call-based answer compared with a float tolerance went through `float()` in the trusted
     process: a huge int raised OverflowError there and took the whole batch down;
  3. the time limit was pooled over a chunk of tests (`time_limit * len(tests) + 1`) and the tests
     of a chunk shared one interpreter, so one slow test passed and later tests saw earlier inputs;
  4. honest programs failed: stderr was counted against the stdout limit, and output written before
     `os._exit(0)` was reported as a crash.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlvr.core import StaticPack, Task
from rlvr.graders.base import Grader, make_grader


def _task(task_id: str, program: dict) -> Task:
    return Task(id=task_id, prompt="Solve it.", hidden={"program": program})


YES_NO = _task(
    "rt5/yes-no",
    {
        "tests": [
            {"input": f"{n}\n", "output": "YES\n" if n % 2 == 0 else "NO\n"}
            for n in (4, 7, 10, 13, 22, 35, 8, 9)
        ],
        "compare": "exact",
    },
)
SLOW_ONE = _task(
    "rt5/slow-one",
    {
        "tests": [{"input": f"{n}\n", "output": f"{n * 2}\n"} for n in (1, 2, 3, 99)],
        "time_limit": 0.5,
    },
)
FRESH = _task(
    "rt5/fresh",
    {"tests": [{"input": f"{n}\n", "output": f"{n}\n"} for n in (1, 2, 3)]},
)
ECHO = _task("rt5/echo", {"tests": [{"input": f"{n}\n", "output": f"{n + 1}\n"} for n in (5, 6, 7)]})
TOLERANT = _task(
    "rt5/tolerant",
    {"call": "half", "compare": {"float": 1e-6}, "tests": [{"args": [n], "output": n / 2} for n in (1, 3)]},
)
BIG = _task(
    "rt5/big-output",
    {"tests": [{"input": "\n", "output": "x" * 200 + "\n"}], "compare": "exact"},
)


@pytest.fixture(scope="module")
def grader() -> Iterator[Grader]:
    pack = StaticPack("rt5-programs", [YES_NO, SLOW_ONE, FRESH, ECHO, TOLERANT, BIG])
    with make_grader(pack, types=False, jobs=2) as made:
        yield made


# -- class 1: nothing observable is derived from the expected output
PROBE_LIMIT = """
import sys
accepted = 0
try:
    while True:
        sys.stdout.write("x")
        accepted += 1
except BaseException:
    pass
sys.stdout.buffer.seek(0)
sys.stdout.buffer.truncate(0)
# the limit was 2 * len(repr(expected)) + 4096: 4110 bytes for 'YES\\n', 4108 for 'NO\\n'
print("YES" if accepted >= 4110 else "NO")
"""

READ_CLOSURE = """
import sys
write = type(sys.stdout.buffer).write
limit = next(c.cell_contents for c in write.__closure__ if isinstance(c.cell_contents, int))
print("YES" if limit >= 4110 else "NO")
"""


@pytest.mark.parametrize("attack", [PROBE_LIMIT, READ_CLOSURE], ids=["probe-writes", "read-closure"])
def test_the_output_limit_tells_nothing_about_the_expected_output(grader: Grader, attack: str) -> None:
    verdict = grader.grade("rt5/yes-no", attack)
    assert not verdict.passed and verdict.error is None


def test_the_honest_yes_no_program_passes(grader: Grader) -> None:
    verdict = grader.grade("rt5/yes-no", "print('YES' if int(input()) % 2 == 0 else 'NO')\n")
    assert verdict.passed, verdict.feedback


def test_an_output_longer_than_the_expected_one_is_a_wrong_answer_not_a_leak(grader: Grader) -> None:
    # 10 kB where 201 bytes are expected: under the old limit (4498 bytes) this was `output_limit`,
    # which told the program the expected output was short
    verdict = grader.grade("rt5/big-output", "print('x' * 10000)\n")
    assert not verdict.passed and "output_limit" not in verdict.flags
    honest = grader.grade("rt5/big-output", "print('x' * 200)\n")
    assert honest.passed, honest.feedback


# -- class 2: a huge int against a float tolerance fails that item only
def test_a_huge_int_against_a_float_tolerance_fails_only_its_own_item(grader: Grader) -> None:
    attacker, honest = grader.grade_many(
        ["rt5/tolerant", "rt5/tolerant"],
        ["def half(n):\n    return 10 ** 400\n", "def half(n):\n    return n / 2\n"],
    )
    assert honest.passed and honest.error is None
    assert not attacker.passed and attacker.error is None and attacker.fault is None


# -- class 3: per-test limits, nothing kept from one test to the next
SLOW_ON_ONE_TEST = """
import time
n = int(input())
if n == 99:
    end = time.process_time() + 1.6
    while time.process_time() < end:
        pass
print(n * 2)
"""


def test_the_time_limit_is_per_test_not_pooled(grader: Grader) -> None:
    verdict = grader.grade("rt5/slow-one", SLOW_ON_ONE_TEST)
    assert not verdict.passed and "timeout:tests" in verdict.flags and verdict.error is None
    honest = grader.grade("rt5/slow-one", "print(int(input()) * 2)\n")
    assert honest.passed, honest.feedback


STATE_PROBES = {
    "builtins": "import builtins\nseen = builtins.__dict__.setdefault('_rt5_seen', [])\n",
    "sys.modules": "import sys, types\nseen = sys.modules.setdefault('_rt5', types.SimpleNamespace(s=[])).s\n",
    "module attribute": "import string\nseen = string.__dict__.setdefault('_rt5_seen', [])\n",
}


@pytest.mark.parametrize("where", sorted(STATE_PROBES))
def test_no_state_survives_from_one_test_to_the_next(grader: Grader, where: str) -> None:
    # prints its input when it runs in a fresh interpreter; an earlier test's input otherwise
    program = STATE_PROBES[where] + "seen.append(input())\nprint(seen[0])\n"
    verdict = grader.grade("rt5/fresh", program)
    assert verdict.passed, verdict.feedback


# -- class 4: honest programs
def test_stderr_does_not_count_against_the_stdout_limit(grader: Grader) -> None:
    program = "import sys\nn = int(input())\nsys.stderr.write('debug ' * 20000)\nprint(n + 1)\n"
    verdict = grader.grade("rt5/echo", program)
    assert verdict.passed, verdict.feedback


def test_output_flushed_before_os_exit_is_the_answer(grader: Grader) -> None:
    program = "import os, sys\nprint(int(input()) + 1)\nsys.stdout.flush()\nos._exit(0)\n"
    verdict = grader.grade("rt5/echo", program)
    assert verdict.passed, verdict.feedback
    failing = grader.grade("rt5/echo", "import os\nprint(int(input()) + 1)\nos._exit(3)\n")
    assert not failing.passed and failing.error is None
