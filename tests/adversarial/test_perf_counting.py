"""Counted operations cannot be dodged by running the work somewhere the tracer does not look: the
same quadratic code run plainly, through exec/eval/compile under its own globals, in lambdas,
generators, comprehensions, class bodies or nested functions gets the same counts (within a small
factor), and the counts of honest code are deterministic."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from adversarial.isolation import namespaced_sandbox

from rlvr.sandbox import Job, LocalSandbox

SIZES = [(20,), (40,), (80,)]

PLAIN = """
def pairs(n):
    total = 0
    for i in range(n):
        for j in range(n):
            total += i * j
    return total
"""

BODY = "total = 0\nfor i in range(n):\n    for j in range(n):\n        total += i * j\n"

EVASIONS = {
    "exec_own_dict": f"""
SOURCE = {PLAIN!r}
def pairs(n):
    scope = {{}}
    exec(SOURCE, scope)
    return scope["pairs"](n)
""",
    "exec_body_per_call": f"""
def pairs(n):
    scope = {{"n": n}}
    exec({BODY!r}, scope)
    return scope["total"]
""",
    "compile_once_foreign_globals": f"""
CODE = compile({PLAIN!r}, "/usr/lib/python3/functools.py", "exec")
SCOPE = {{"__builtins__": __builtins__}}
exec(CODE, SCOPE)
def pairs(n):
    return SCOPE["pairs"](n)
""",
    "eval_lambda": """
inner = eval("lambda n: sum(i * j for i in range(n) for j in range(n))", {})
def pairs(n):
    return inner(n)
""",
    "generator": """
def cells(n):
    for i in range(n):
        for j in range(n):
            yield i * j
def pairs(n):
    total = 0
    for value in cells(n):
        total += value
    return total
""",
    "class_body": """
def pairs(n):
    class Work:
        total = 0
        for i in range(n):
            for j in range(n):
                total += i * j
    return Work.total
""",
    "stdlib_module_globals": f"""
import heapq
exec({PLAIN!r}, heapq.__dict__)
pairs = heapq.pairs
""",
    "same_text_as_the_sandbox": """
def wire(value, depth):
    total = 0
    for i in range(value):
        for j in range(value):
            total += i * j
    return total
def pairs(n):
    return wire(n, 0)
""",
}


@pytest.fixture(scope="module")
def pool() -> Iterator[LocalSandbox]:
    sandbox = namespaced_sandbox(1)
    yield sandbox
    sandbox.close()


def counts(pool: LocalSandbox, source: str) -> list[int]:
    result = pool.run(Job(source, "pairs", list(SIZES), timeout=20, trace=True))
    assert result.status == "ok", result
    assert [o.value for o in result.outcomes if o is not None] == [
        sum(i * j for i in range(n) for j in range(n)) for (n,) in SIZES
    ]
    assert all(isinstance(c, int) for c in result.counts), result.counts
    return [int(c or 0) for c in result.counts]


def test_plain_counts_are_quadratic_and_deterministic(pool: LocalSandbox) -> None:
    plain = counts(pool, PLAIN)
    assert plain == counts(pool, PLAIN)
    assert 3.5 < plain[2] / plain[1] < 4.5  # doubling n quadruples the work


@pytest.mark.parametrize("name", sorted(EVASIONS))
def test_dynamic_code_is_counted_like_plain_code(pool: LocalSandbox, name: str) -> None:
    plain = counts(pool, PLAIN)
    evasive = counts(pool, EVASIONS[name])
    for size, p, e in zip(SIZES, plain, evasive, strict=True):
        assert p / 3 <= e <= p * 3, f"{name} at n={size[0]}: {e} ops vs {p} for the plain code"


def test_a_builtin_call_still_costs_one_event(pool: LocalSandbox) -> None:
    """The documented limit stands: work inside a C builtin is one event, so a sum over a generator
    expression counts its generator frames but not the additions."""
    source = "def pairs(n):\n    return sum(i * j for i in range(n) for j in range(n))\n"
    quadratic = counts(pool, source)
    assert quadratic[2] > 3 * quadratic[1]


BRUTE_FORCE = """
def max_subarray(values: list[int]) -> int:
    best = 0
    for i in range(len(values)):
        total = 0
        for j in range(i, len(values)):
            total += values[j]
            if total > best:
                best = total
    return best
"""

BRUTE_FORCE_THROUGH_EXEC = f"""
def max_subarray(values: list[int]) -> int:
    scope: dict = {{}}
    exec({BRUTE_FORCE!r}, scope)
    return scope["max_subarray"](values)
"""


def test_exec_wrapped_quadratic_code_loses_perf_credit_through_the_grader() -> None:
    """End to end on a task with a growth plan: O(n^2) code scores the same perf (≤ the asymptotic
    cap) whether it is written plainly or run through exec under its own globals."""
    from rlvr.graders.base import make_grader
    from rlvr.graders.code.perf import ASYMPTOTIC_PENALTY_CAP
    from rlvr.task_packs.kata import KataPack

    task_id = "kata/max_subarray/3/0"
    pack = KataPack()
    grader = make_grader(pack, types=False, jobs=1)
    try:
        reference = pack.get(task_id).hidden["reference"]
        honest, plain, wrapped = grader.grade_many(
            [task_id] * 3, [reference, BRUTE_FORCE, BRUTE_FORCE_THROUGH_EXEC]
        )
    finally:
        grader.close()
    assert honest.passed and plain.passed and wrapped.passed
    assert honest.components["perf"].score == 1.0
    assert plain.components["perf"].score <= ASYMPTOTIC_PENALTY_CAP
    assert wrapped.components["perf"].score <= ASYMPTOTIC_PENALTY_CAP, wrapped.components["perf"].detail
    assert "asymptotically worse" in wrapped.components["perf"].detail
