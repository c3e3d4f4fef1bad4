"""Red team 6 (issue 33 class 9): answers an attacker would try against the math rules that were relaxed to
agree with math-verify's suite — rounded decimals, `x \\approx v`, exact values with a gloss, decimal commas in
the reference, TeX groups, repeated tuple solutions, labelled reference boxes — and against units.

An attack is a text that does not commit to the reference's value (a hedge: two values, a range, a bound, a
coarse estimate) or commits to a wrong one dressed in an accepted spelling. Every attack is graded through the
real grader and sympy worker, and must fail as a scored failure (no grading error); the honest spellings of the
same answers (controls) must pass.
"""

from __future__ import annotations

import pytest

import rlvr

ATTACKS = [
    # hedging between two values
    ("11", "11 or 12"),
    ("11", "\\boxed{11 \\text{ or } 12}"),
    ("11", "x \\approx 11 \\text{ or } x \\approx 12"),
    ("11", "x \\approx 11 \\text{ or } 12"),
    ("11", "x \\approx 11, 12"),
    ("11", "x \\approx 11 \\lor x \\approx 12"),
    ("25", "25|26"),
    ("25", "x \\approx 25|26"),
    ("25", "x = 25 \\mid 26"),
    ("25", "\\pm 25"),
    ("25", "x \\approx 25 \\pm 1"),
    ("25", "x = 25 \\pm 1 \\approx 25"),
    # a leading relation, or a relation without a name on the left
    ("11", "\\approx 11"),
    ("11", "≈ 11"),
    ("11", "so we get ≈ 11."),  # outside math mode, where math-verify's extraction drops the relation
    ("11", "∼ 11"),
    ("11", "≪ 11"),
    ("11", "Hence the count is ≤ 11"),
    ("11", "\\boxed{\\approx 11}"),
    ("11", "12 \\approx 11"),
    ("11", "x \\sim 11"),
    ("11", "x \\simeq 11"),
    ("11", "x \\geq 11"),
    ("11", "x \\approx \\geq 11"),
    ("25", "x \\neq 25"),
    ("10/9", "\\frac{1}{2} = \\frac{10}{9}"),  # a false equation is not its last side
    ("25", "24 = 25"),
    ("25", "25 = 26"),
    ("25", "5 \\cdot 5 = 25 = 26"),
    ("25", "25 = 25 = 26"),
    ("\\frac{1}{3}", "\\frac{1}{3} = 0.33"),
    # `\approx` with a wide value or a wrong exact value
    ("11", "x \\approx 10"),
    ("11", "x \\approx 1 \\times 10^{1}"),
    ("\\frac{1}{3}", "x \\approx 0.3"),
    ("\\frac{1}{3}", "x \\approx 0.33"),
    ("25", "x = 26 \\approx 25"),  # the gloss never counts
    ("\\frac{1}{3}", "x = \\frac{1}{4} \\approx 0.3333"),
    ("\\frac{1}{3}", "x = 0.33 \\approx 0.3333"),
    # decimals: too coarse, truncated, or many digits that miss
    ("\\pi", "3"),
    ("\\pi", "3.1"),
    ("\\pi", "3.14"),
    ("\\pi", "3.141"),  # 4 digits, truncated
    ("\\pi", "3.1415"),
    ("\\pi", "3.1415926535897"),  # 13 places, truncated (π rounds to ...898)
    ("\\frac{1}{3}", "0.33333333333333333333334"),
    ("\\frac{1}{3}", "0.33333333333333333333333333333333333333333333333333333333333333333332"),
    ("\\frac{2}{3}", "0.6666"),
    ("\\sqrt{2}", "1.415"),
    ("\\sqrt{2}", "1.41"),
    ("25", "25.00001"),
    ("25", "24.9999999999"),
    ("\\frac{1}{8}", "0.12500000001"),
    ("\\frac{1}{8}", "0.1250000000000000000000000000000000001"),
    ("0.3333", "\\frac{1}{3}"),  # a short reference decimal is taken as exact
    ("0.5", "0.5000000000001"),
    ("\\frac{1}{3}", "3.333 \\times 10^{-1}"),  # a product, not a stated decimal
    ("\\frac{1}{3}", "\\frac{0.6667}{2}"),
    # a list, a range or an interval that contains the answer
    ("\\frac{1}{3}", "\\frac{1}{3}, 0.3333"),
    ("\\frac{1}{3}", "0.3333, 0.6667"),
    ("11", "10, 11, 12"),
    ("11", "\\{10, 11, 12\\}"),
    ("11", "[10, 12]"),
    ("11", "(10, 12)"),
    ("11", "x \\in [10, 12]"),
    ("11", "10 < x < 12"),
    ("11", "10 \\le x \\le 12"),
    ("\\frac{1}{3}", "(0.3333, 0.3334)"),
    ("\\frac{1}{3}", "[0.3333, 0.3334]"),
    # repeated boxes with different values
    ("11", "\\boxed{11} \\boxed{12}"),
    ("11", "\\boxed{11} or \\boxed{12}"),
    ("11", "\\boxed{12} so \\boxed{11}"),
    ("11", "\\boxed{11} papers and \\boxed{12} bins"),  # an answer's boxes never join across words
    ("1, 2", "\\boxed{1} papers and \\boxed{2} bins"),
    # repeated tuple solutions used to pad or to hide a wrong one
    ("(1, 2)", "(1, 2), (1, 2)"),
    ("(1, 2), (3, 4)", "(1, 2), (1, 2), (1, 2)"),
    ("(1, 2), (3, 4)", "(1, 2), (3, 4), (3, 4), (5, 6)"),
    ("(1, 2), (3, 4)", "(1, 2), (3, 4), (2, 1)"),
    ("1, 2", "1, 1, 2, 2"),
    # decimal commas
    ("1, 22", "1.22"),
    ("1,22", "1.22, 22"),
    ("1,22", "1.2"),
    ("1,22", "12.2"),
    ("1,222", "1.222"),
    ("0,111", "111"),
    ("(1,22)", "1.22"),
    # TeX groups
    ("(1,3)", "${3,1}$"),
    ("(1,3]", "${1,3}$"),
    ("[1,3]", "${1,3}$"),
    ("(1, 3)", "{1, 3}"),
    ("(1, 3)", "$\\{1, 3\\}$"),
    ("(1,3)", "${1,3,5}$"),
    # units swapped
    ("5 \\text{ cm}", "5 \\text{ m}"),
    ("5 \\text{ cm}", "\\boxed{5 \\text{ m}}"),
    ("5 cm", "5 m"),
    ("5 \\text{ cm}^2", "5 \\text{ cm}"),
    ("10 \\text{ dollars}", "10 \\text{ cents}"),
    ("3 \\text{ hours}", "3 \\text{ minutes}"),
    ("\\frac{1}{3} \\text{ m}", "0.3333 \\text{ km}"),
]

CONTROLS = [
    ("11", "x \\approx 11"),
    ("11", "\\boxed{x \\approx 11}"),
    ("11", "The answer is $x \\approx 11$."),
    ("\\frac{1}{3}", "0.3333"),
    ("\\frac{1}{3}", "\\boxed{0.33333}"),
    ("\\frac{1}{3}", "x = \\frac{1}{3} \\approx 0.333"),
    ("\\pi", "3.1416"),
    ("\\pi", "3.14159265358979"),
    ("\\sqrt{2}", "1.41421356"),
    ("4.123105625617661", "\\sqrt{17}"),
    ("\\frac{1}{3} \\text{ m}", "0.3333 \\text{ m}"),
    ("1,22", "1.22"),
    ("0,111", "0.111"),
    ("(1,3)", "${1,3}$"),
    ("(1, 2), (3, 4)", "(3, 4), (1, 2), (3,4)"),
    ("\\boxed{1} papers and \\boxed{2} bins", "\\boxed{1, 2}"),
    ("5 \\text{ cm}", "5"),
    ("5 \\text{ cm}", "5 \\text{ cm}"),
    ("25", "x = 25"),
    ("10/9", "\\frac{10}{9}"),
    ("10/9", "\\frac{20}{18} = \\frac{10}{9}"),
]


@pytest.mark.parametrize(("gold", "answer"), ATTACKS)
def test_attacks_on_the_relaxed_rules_fail(gold: str, answer: str) -> None:
    verdict = rlvr.verify(gold, answer)
    assert not verdict.passed and verdict.error is None, verdict.feedback


@pytest.mark.parametrize(("gold", "answer"), CONTROLS)
def test_honest_spellings_pass(gold: str, answer: str) -> None:
    verdict = rlvr.verify(gold, answer)
    assert verdict.passed and verdict.error is None, verdict.feedback
