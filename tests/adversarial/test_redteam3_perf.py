"""Red team 3: perf counting vs work done while the program loads.

The sandbox resets the op counter before each call, so everything the candidate's module does at
load time (module-level loops, class bodies, imports) is counted in no call. A candidate that
tabulates every answer of a small input domain at load time, by the slow method, then answers each
call with one lookup, scores full perf against a reference that does the work per call.

NOT FIXED (see the red-team report): charging load-time work naively would charge honest programs
for importing standard-library modules that the zygote has not warmed (thousands of traced events for
e.g. `import textwrap`); a fix needs to tell the candidate's own load-time work from import machinery.
The test is a strict xfail, so it turns red as soon as the hole is closed (then drop the marker).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

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


@pytest.mark.xfail(strict=True, reason="load-time work is not counted (red team 3, not fixed)")
def test_answers_tabulated_at_load_time_do_not_earn_full_perf() -> None:
    with make_grader(_DivisorsPack(), types=False, properties=False, jobs=1) as grader:
        (tabulated,) = grader.grade_many(["rt3/divisors"], [TABULATED])
    assert tabulated.passed  # a correct answer...
    # ...that did ~2 million counted-kind operations (load) against the reference's ~5,200 (calls)
    assert tabulated.components["perf"].score < 1.0, tabulated.components["perf"]
