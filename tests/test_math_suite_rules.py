"""Issue 33 class 9: the rules that let rlvr agree with math-verify's suite without loosening trust, end to end
through `rlvr.verify` (the real grader and sympy worker). Each rule is tested on the spellings it accepts and on
the near misses it must still reject:

- a decimal correctly rounding a number with no finite decimal, from 4 significant digits
  (rlvr/graders/math/rounding.py);
- `x \\approx v` read as `x = v`, and `x = A \\approx B` read as `x = A` (the gloss never counts);
- a reference `1,22` (a decimal comma in the reference's own notation);
- `${1,3}$`: a TeX group is a bare list, not a set;
- a tuple solution written twice in a list of distinct tuple solutions;
- a reference whose boxes each carry a unit or label, joined by `and` or a comma;
- an equation between values whose every side is the reference (`\\frac{20}{18} = \\frac{10}{9}`);
- and one tightening: a unit the answer states must be the reference's unit.
"""

from __future__ import annotations

import pytest

import rlvr

ACCEPTED = [
    # rounded decimals: a number no finite decimal can write, correctly rounded, >= 4 significant digits
    ("\\frac{1}{3}", "0.3333"),
    ("\\frac{1}{3}", "0.333333"),
    ("-\\frac{1}{3}", "-0.3333"),
    ("\\frac{8}{3}", "2.6667"),
    ("\\frac{1}{12}", "0.0833333333333333"),
    ("\\frac{1}{12}", "0.08333"),
    ("\\pi", "3.1416"),
    ("\\frac{\\pi}{4}", "0.7854"),
    ("\\sqrt{17}", "4.1231"),
    ("4.123105625617661", "\\sqrt{17}"),  # a float printout as the reference
    ("(\\frac{3}{5}, \\frac{8}{3}]", "(0.6, 2.6667]"),
    ("\\{\\frac{1}{3}, \\frac{2}{3}\\}", "\\{0.6667, 0.3333\\}"),
    # x \approx v, and an exact value with a gloss
    ("11", "x \\approx 11"),
    ("11", "x ≈ 11"),
    ("\\frac{1}{3}", "x \\approx 0.3333"),
    ("\\frac{1}{3}", "x = \\frac{1}{3} \\approx 0.33"),
    ("\\frac{1}{3}", "x = \\frac{1}{3} \\approx 1.3"),  # a slip in the gloss does not fail the exact answer
    # an equation between values, every side the value
    ("10/9", "\\frac{20}{18} = \\frac{10}{9}"),
    ("25", "5^2 = 25"),
    ("\\frac{1}{3}", "\\frac{1}{3} = 0.3333"),
    # a decimal comma in the reference
    ("1,22", "1.22"),
    ("0,111", "0.111"),
    ("1,22", "1, 22"),  # the list reading stays
    # a TeX group is a bare list
    ("(1,3)", "${1,3}$"),
    ("\\{1, 3\\}", "${3, 1}$"),
    # a repeated tuple solution
    ("(1, 2), (3, 4)", "(1, 2), (3, 4), (1,2)"),
    ("\\{(1, 2), (3, 4)\\}", "\\boxed{(3, 4), (1, 2), (3, 4)}"),
    # reference boxes with units or labels
    ("\\boxed{1} papers and \\boxed{2} bins", "\\boxed{1, 2}"),
    ("\\boxed{3} apples, \\boxed{5} pears", "3, 5"),
    # units: the same unit, or a unit on one side only
    ("5 \\text{ cm}", "5 \\text{cm}"),
    ("10 \\text{ dollars}", "10 \\text{ Dollars}"),
    ("15 \\mbox{ cm}^2", "15"),
    ("15", "15 \\text{ cm}^2"),
    ("5 \\text{ cm}", "5 \\text{ centimeters}"),
    ("3 \\text{ hours}", "3 \\text{ hr}"),
    ("2 \\text{ inches}", "2 \\text{ in}"),
    ("15 \\text{ cm}^2", "15 \\text{ square centimeters}"),
]

REJECTED = [
    # rounded decimals: too few digits, not rounded, not that number, or a number with a finite decimal
    ("\\frac{1}{3}", "0.333"),
    ("\\frac{1}{3}", "0.33"),
    ("\\pi", "3.14"),
    ("\\pi", "3.1415"),  # truncated, not rounded
    ("\\frac{8}{3}", "2.6666"),
    ("\\frac{1}{3}", "0.3334"),
    ("\\frac{1}{3}", "0.33333333334"),  # more digits narrow the match
    ("\\frac{1}{3}", "0.3330"),
    ("\\frac{1}{3}", "\\frac{3333}{10000}"),  # a fraction is not a rounded decimal
    ("\\frac{1}{8}", "0.1250001"),
    ("\\frac{1}{8}", "0.1300"),
    ("25", "25.0001"),
    ("25", "24.99999"),
    ("0.3333", "\\frac{1}{3}"),  # a short reference decimal is an exact value
    ("2.500", "2.5 + \\frac{1}{3 \\cdot 10^{9}}"),
    ("(\\frac{3}{5}, \\frac{8}{3}]", "[0.6, 2.6667]"),
    ("\\{\\frac{1}{3}, \\frac{2}{3}\\}", "\\{0.3333, 0.3333\\}"),
    # approximations
    ("11", "x \\approx 10"),
    ("11", "x \\approx 11.2"),
    ("11", "11 \\approx x"),
    ("11", "x \\approx 11 \\approx 12"),
    ("11", "x \\approx 11 = 12"),
    ("11", "x \\sim 11"),
    ("25", "x = 26 \\approx 25"),  # the gloss never counts
    ("\\frac{1}{3}", "x = \\frac{1}{4} \\approx 0.3333"),
    ("\\frac{1}{3}", "x \\approx 0.33"),
    ("x > 11", "x \\approx 12"),  # the reference is a relation, not a bare value
    # equations between values: never read as the last side alone
    ("10/9", "\\frac{1}{2} = \\frac{10}{9}"),
    ("25", "25 = 24"),
    ("25", "5 \\cdot 5 = 25 = 26"),
    ("\\frac{1}{3}", "\\frac{1}{3} = 0.33"),
    # decimal commas
    ("1,22", "1.23"),
    ("1,22", "122"),
    ("1, 22", "1.22"),
    ("1,222", "1.222"),
    ("0,111", "111"),  # `0,111` is no thousands number
    # TeX groups
    ("(1,3)", "${3,1}$"),
    ("(1,3]", "${1,3}$"),
    ("(1, 3)", "{1, 3}"),  # outside math delimiters, braces are a set
    # repeated solutions
    ("1, 2", "1, 2, 2"),  # a scalar list keeps every item
    ("(1, 2), (3, 4)", "(1, 2), (1, 2)"),
    ("(1, 2), (3, 4)", "(1, 2), (3, 4), (5, 6)"),
    ("(1, 2), (3, 4)", "(1, 2), (3, 4), (1, 2.5)"),
    ("(1, 2), (1,2), (3, 4)", "(1, 2), (3, 4)"),
    # reference boxes separated by prose
    ("\\boxed{1} no no no no no \\boxed{2}", "\\boxed{1, 2}"),
    # units
    ("5 \\text{ cm}", "5 \\text{ m}"),
    ("5 cm", "5 m"),
    ("15 \\mbox{ cm}^2", "15 \\text{ cm}"),
    ("10 \\text{ dollars}", "10 \\text{ cents}"),
    ("5 \\text{ cm}", "5 \\text{ millimeters}"),
    ("15 \\text{ cm}^2", "15 \\text{ cubic centimeters}"),
    ("2 \\text{ inches}", "2 \\text{ feet}"),
]


@pytest.mark.parametrize(("gold", "answer"), ACCEPTED)
def test_accepted_spellings(gold: str, answer: str) -> None:
    verdict = rlvr.verify(gold, answer)
    assert verdict.passed and verdict.error is None, verdict.feedback


@pytest.mark.parametrize(("gold", "answer"), REJECTED)
def test_near_misses_are_rejected(gold: str, answer: str) -> None:
    verdict = rlvr.verify(gold, answer)
    assert not verdict.passed and verdict.error is None, verdict.feedback


def test_a_task_setting_still_decides_when_given() -> None:
    assert rlvr.verify("\\frac{1}{3}", "0.33", precision=2).passed  # the task asked for 2 places
    assert not rlvr.verify("\\frac{1}{3}", "0.3333", precision=6).passed  # the task asked for 6
    assert not rlvr.verify("(1, 2), (3, 4)", "(1, 2), (3, 4), (1, 2)", relation="tuple").passed


def test_one_answer_text_passes_for_one_reference_at_most() -> None:
    """The position rules are no hedge: each text below passes for the first reference and not the second."""
    for text, right, other in [
        ("x = 25 \\approx 26", "25", "26"),
        ("x \\approx 11", "11", "11.2"),
        ("0.3333", "\\frac{1}{3}", "\\frac{3333}{10000} + \\frac{1}{10^{5}}"),
        ("1.22", "1,22", "1,23"),
    ]:
        assert rlvr.verify(right, text).passed, text
        assert not rlvr.verify(other, text).passed, text
