"""A return value the sandbox cannot send back (nested too deeply, an enormous integer, an object) is
a scored failure that says why — never a grading error, never a silent crash — and the size limits
carry the `oversized:result` flag."""

from __future__ import annotations

import pytest

from rlvr.core.flags import flag_name

HEADER = "def has_close_elements(numbers, threshold):\n"
CASES = {
    "deep_list": (HEADER + "    x = []\n    for _ in range(5000):\n        x = [x]\n    return x\n", True),
    "huge_int": (HEADER + "    return 10 ** 20000\n", True),
    "object": (HEADER + "    return object()\n", False),
    "low_recursion_limit": (
        HEADER
        + "    import sys\n    sys.setrecursionlimit(30)\n    return [[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]\n",
        False,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_unreportable_result_is_a_scored_failure_that_says_why(humaneval_grader, name: str) -> None:
    source, oversized = CASES[name]
    verdict = humaneval_grader.grade("HumanEval/0", source)
    assert not verdict.passed and verdict.error is None and verdict.fault is None, verdict
    assert "tests" in verdict.gates
    assert ("oversized:result" in verdict.flags) is oversized, verdict.flags
    assert verdict.feedback.startswith("a result ") and "wrong type" not in verdict.feedback, verdict.feedback
    assert all(flag_name(f) != "crash" for f in verdict.flags)


def test_a_large_but_reportable_int_is_compared_normally(humaneval_grader) -> None:
    verdict = humaneval_grader.grade("HumanEval/0", HEADER + "    return 10 ** 4000\n")
    assert not verdict.passed and "oversized:result" not in verdict.flags
    assert verdict.feedback.startswith("a result has the wrong type (")  # judged: an int where a bool belongs
