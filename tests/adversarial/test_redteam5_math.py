"""Red team 5, class 9: a relation with no left-hand side, or alternatives, read as the bare number.

`\\neq 25` says "not 25"; `< 25` a bound; `\\ll 25` "much less than 25"; `25|26` two answers (or "25
divides 26"). Each was graded equal to the reference 25 (through the real grader and math worker),
so a policy could hedge, or state the opposite, and collect the reward. A leading relation is not a
value; the honest spellings of 25 still pass.
"""

from __future__ import annotations

import pytest

import rlvr

NOT_THE_VALUE = [
    "\\boxed{\\neq 25}",
    "\\boxed{\\ne 25}",
    "\\boxed{\\not= 25}",
    "\\boxed{< 25}",
    "\\boxed{> 25}",
    "\\boxed{\\geq 25}",
    "\\boxed{\\le 25}",
    "\\boxed{\\ll 25}",
    "\\boxed{\\gg 25}",
    "\\boxed{≠ 25}",
    "\\boxed{≤ 25}",
    "\\boxed{\\approx 25}",
    "\\boxed{\\sim 25}",
    "\\boxed{25|26}",
    "\\boxed{25 \\mid 26}",
    "\\boxed{25 \\lor 26}",
    "The answer is $\\neq 25$.",
    "Answer: < 25",
]
STILL_THE_VALUE = [
    "\\boxed{25}",
    "\\boxed{x = 25}",
    "\\boxed{\\frac{50}{2}}",
    "\\boxed{|-25|}",
    "\\boxed{\\left|-25\\right|}",
    "The answer is $25$.",
]


@pytest.mark.parametrize("answer", NOT_THE_VALUE)
def test_a_leading_relation_or_alternatives_are_not_the_bare_number(answer: str) -> None:
    verdict = rlvr.verify("25", answer)
    assert not verdict.passed and verdict.error is None, verdict.feedback


@pytest.mark.parametrize("answer", STILL_THE_VALUE)
def test_honest_spellings_of_the_number_still_pass(answer: str) -> None:
    verdict = rlvr.verify("25", answer)
    assert verdict.passed, verdict.feedback


def test_a_relation_the_reference_states_too_still_compares() -> None:
    assert rlvr.verify("x < 25", "\\boxed{x < 25}").passed
    assert rlvr.verify("25 \\mid 100", "\\boxed{25 \\mid 100}").passed
