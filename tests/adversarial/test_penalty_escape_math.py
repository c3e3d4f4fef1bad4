"""Penalty escapes in math (issue 12): a wrong answer that makes the check time out, exhaust memory or blow a
size limit must be a scored failure — passed False, the format credit at most, a flag naming the limit —
and never `Verdict.error` (trainers drop errored episodes, so an error would cancel the penalty)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlvr.core.flags import LIMIT_FLAGS, flag_name
from rlvr.core.pack import StaticPack
from rlvr.core.types import Task
from rlvr.graders.math.grader import MathGrader

HOSTILE = {
    "huge exponent": "\\boxed{1e99999999}",
    "huge power of ten": "\\boxed{10^{99999999}}",
    "power tower": "\\boxed{9^{9^{9^{9}}}}",
    "huge factorial": "\\boxed{100000!}",
    "million-term sum": "\\boxed{\\sum_{k=1}^{1000000} k}",
    "million-term product": "\\boxed{\\prod_{k=1}^{1000000} k}",
    "deep nesting": "\\boxed{" + "(" * 700 + "1" + ")" * 700 + "}",
    "deep fractions": "\\boxed{" + "\\frac{1}{" * 80 + "2" + "}" * 80 + "}",
    "very long answer": "Answer: " + "x+" * 20_000 + "1",
}


@pytest.fixture(scope="module")
def grader() -> Iterator[MathGrader]:
    pack = StaticPack("p", [Task("t", "p", "math", hidden={"answer": "25"})], family="math")
    math_grader = MathGrader(pack, timeout=3)
    yield math_grader
    math_grader.close()


@pytest.mark.parametrize("completion", list(HOSTILE.values()), ids=list(HOSTILE))
def test_resource_exhausting_answers_are_scored_failures(grader: MathGrader, completion: str) -> None:
    verdict = grader.grade("t", completion)
    assert verdict.error is None and verdict.fault is None and not verdict.disrupted
    assert verdict.passed is False and verdict.reward < 0.5
    assert any(flag_name(flag) in LIMIT_FLAGS for flag in verdict.flags), verdict.flags


def test_a_sympy_timeout_is_a_scored_failure() -> None:
    pack = StaticPack("p", [Task("t", "p", "math", hidden={"answer": "\\sqrt{2}"})], family="math")
    impatient = MathGrader(pack, timeout=0.05)
    try:
        verdict = impatient.grade("t", "\\boxed{\\frac{\\sqrt{\\sqrt{11}+\\sqrt{194}}}{15+2\\sqrt{33}}}")
        assert verdict.error is None and not verdict.passed and "timeout:answer" in verdict.flags
        impatient.timeout = 10.0
        assert impatient.grade("t", "\\boxed{\\sqrt{2}}").passed  # a fresh worker took over
    finally:
        impatient.close()


def test_the_worker_answers_after_every_hostile_answer(grader: MathGrader) -> None:
    for completion in HOSTILE.values():
        grader.grade("t", completion)
    assert grader.grade("t", "\\boxed{25}").passed
    assert grader.grade("t", "\\boxed{5^2}").passed
