"""Red team 3: perf counting vs work done while the program loads.

The sandbox resets the op counter before each call, so everything the candidate's module did at load
time (module-level loops, class bodies) was counted in no call: a candidate that tabulated every
answer of a small input domain at load time, by the slow method, then answered each call with one
lookup, scored full perf ("8 ops vs reference 5307") against a reference that does the work per call.

Fixed: the sandbox child reports the module's load-time operations (its own code, not the import
machinery nor the standard-library modules it imports, so an honest `import textwrap` costs nothing),
and the code grader charges whatever exceeds the reference's load to the candidate's last call.
Library code is known by identity, not by file name: code a candidate compiles can claim "<frozen ...>"
or a path inside the standard library's directory too (red team 4: the latter earned full perf, 8 ops
against the reference's 5,307, until library code was recognised by the identity of the code objects
the zygote loaded).
"""

from __future__ import annotations

from collections.abc import Iterator

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.graders.base import make_grader

PROMPT = 'def divisors(n: int) -> int:\n    """How many positive divisors n has (1 <= n < 2000)."""\n'
REFERENCE = PROMPT + "    return sum(1 for d in range(1, n + 1) if n % d == 0)\n"
TABULATED = """
TABLE = {}
for m in range(1, 2000):
    TABLE[m] = 0
    for d in range(1, m + 1):
        if m % d == 0:
            TABLE[m] += 1


def divisors(n: int) -> int:
    return TABLE[n]
"""


class _DivisorsPack(TaskPack):
    name = "redteam3-divisors"
    family = "code"

    def _load(self) -> Iterator[Task]:
        yield Task(
            id="rt3/divisors",
            prompt=PROMPT,
            family="code",
            hidden={
                "entry_point": "divisors",
                "reference": REFERENCE,
                "check": None,
                "calls": [(1000,), (1500,), (1999,), (720,)],
            },
        )


FAKE_FROZEN = """
exec(compile(
    "TABLE = {}\\nfor m in range(1, 2000):\\n    TABLE[m] = sum(1 for d in range(1, m + 1) if m % d == 0)\\n",
    "<frozen importlib._bootstrap>",
    "exec",
))


def divisors(n: int) -> int:
    return TABLE[n]
"""
# the same through a path inside the standard library's directory (found with `os.__file__`): library
# code is known by the identity of the code objects the zygote loaded, never by file name
FAKE_LIBRARY_PATH = """
import os
exec(compile(
    "TABLE = {}\\nfor m in range(1, 2000):\\n    TABLE[m] = sum(1 for d in range(1, m + 1) if m % d == 0)\\n",
    os.path.join(os.path.dirname(os.__file__), "textwrap.py"),
    "exec",
))


def divisors(n: int) -> int:
    return TABLE[n]
"""
HONEST = """
import calendar, datetime, decimal, difflib, statistics, textwrap
from typing import List


def divisors(n: int) -> int:
    count = 0
    for d in range(1, n + 1):
        if n % d == 0:
            count += 1
    return count
"""


def test_answers_tabulated_at_load_time_do_not_earn_full_perf() -> None:
    with make_grader(_DivisorsPack(), types=False, properties=False, jobs=2) as grader:
        tabulated, fake_frozen, fake_library_path, honest = grader.grade_many(
            ["rt3/divisors"] * 4, [TABULATED, FAKE_FROZEN, FAKE_LIBRARY_PATH, HONEST]
        )
    for verdict in (tabulated, fake_frozen, fake_library_path):
        assert verdict.passed  # a correct answer...
        # ...that did ~2 million operations at load against the reference's ~5,300 over its calls
        assert verdict.components["perf"].score < 0.05, verdict.components["perf"]
    # imports of standard-library modules the zygote has not warmed are not the candidate's work
    assert honest.passed and honest.components["perf"].score == 1.0, honest.components["perf"]
