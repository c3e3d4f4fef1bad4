"""A decimal that rounds a number no finite decimal can write (`0.3333` for 1/3, `4.1231` for √17).

Numbers compare exactly unless the task gives a numeric setting; this is the one exception, and it has three
conditions, each there to keep it from being a tolerance an answer can choose for itself:

- the *other* side has no finite decimal form at all: an irrational (`\\sqrt{17}`, `\\pi/4`) or a fraction
  whose denominator has a prime factor other than 2 and 5 (1/3, 8/3, 1/12). Where an exact decimal exists
  (1/8 = 0.125, 25), only that decimal is equal: `0.13` is not 1/8 and `25.0001` is not 25;
- the decimal is that number *correctly rounded* at the places the decimal itself states (`0.3333`, not the
  truncation `2.6666` of 8/3, not `0.3334`): writing more digits only narrows the match, so a long run of
  digits cannot reach a wider window (`0.33333333334` is not 1/3);
- an answer's decimal states at least ANSWER_DIGITS significant digits: `0.33` (1/3) or `3.1` (π) is an
  estimate, a window of 1-2 %, not an answer; `0.3333` pins the value to 1 part in 10^4.

The decimal may be the reference: a reference stated as a float printout (`4.123105625617661`) equals the
exact `\\sqrt{17}` under the same conditions, but only from REFERENCE_DIGITS significant digits on, because a
short reference decimal is more likely an exact value the author meant (`2.500` is 5/2, and
`2.5 + \\frac{1}{3 \\cdot 10^9}` must not pass for it). A decimal is recognised by the literal written in the
answer or the reference text (`stated_decimals`), so `\\frac{3333}{10000}` is a fraction, not a rounded decimal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation, localcontext
from fractions import Fraction
from typing import Any

import sympy

ANSWER_DIGITS = 4
REFERENCE_DIGITS = 10
MAX_STATED_PLACES = 200  # answers are at most 1,000 characters; beyond this, no rounding is worth checking

_DECIMAL_LITERAL = re.compile(r"(?<![\d.])(\d+\.\d+)(?![\d.])")


@dataclass(frozen=True)
class StatedDecimal:
    written: Decimal  # as written: `0.3330` keeps its four places
    min_digits: int  # significant digits it needs to stand for a number with no finite decimal

    @property
    def places(self) -> int:
        return -int(self.written.as_tuple().exponent)


def stated_decimals(candidate: str, reference: str) -> dict[Fraction, StatedDecimal]:
    """Every decimal literal written in the answer and the reference, by its exact value (absolute). When one
    value is written more than once, the most places and the larger digit minimum count (stricter)."""
    found: dict[Fraction, StatedDecimal] = {}
    for text, min_digits in ((candidate, ANSWER_DIGITS), (reference, REFERENCE_DIGITS)):
        for literal in _DECIMAL_LITERAL.findall(text):
            stated = StatedDecimal(Decimal(literal), min_digits)
            earlier = found.get(Fraction(stated.written))
            if earlier is not None:
                stated = StatedDecimal(
                    max(stated.written, earlier.written, key=lambda d: -int(d.as_tuple().exponent)),
                    max(stated.min_digits, earlier.min_digits),
                )
            found[Fraction(stated.written)] = stated
    return found


def _no_finite_decimal(value: Any) -> bool:
    """An exact real number with no terminating decimal expansion (decided by sympy; unknown counts as no)."""
    if not isinstance(value, sympy.Expr) or value.free_symbols or value.has(sympy.Float):
        return False
    if isinstance(value, sympy.Rational):
        denominator = int(value.q)
        for prime in (2, 5):
            while denominator % prime == 0:
                denominator //= prime
        return denominator != 1
    return bool(value.is_real and value.is_finite and value.is_rational is False)


def _significant_digits(written: Decimal) -> int:
    digits = written.as_tuple().digits
    return len(digits) - next((i for i, d in enumerate(digits) if d != 0), len(digits))


def rounds_to(decimal_side: Any, exact_side: Any, decimals: Mapping[Fraction, StatedDecimal]) -> bool:
    """Whether `decimal_side` (an exact rational, as `exact()` makes of a decimal) is a decimal the texts
    state and is `exact_side` correctly rounded at its stated places (see the module docstring)."""
    if not decimals or not isinstance(decimal_side, sympy.Rational):
        return False
    value = Fraction(int(decimal_side.p), int(decimal_side.q))
    stated = decimals.get(abs(value))
    if stated is None or _significant_digits(stated.written) < stated.min_digits:
        return False
    if not _no_finite_decimal(exact_side):
        return False
    places = stated.places
    if not 0 < places <= MAX_STATED_PLACES:
        return False
    try:
        approximation = sympy.N(exact_side, places + 30)
        if not approximation.is_Float:
            return False
        with localcontext() as context:
            context.prec = places + 60
            rounded = Decimal(str(approximation)).quantize(
                Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN
            )
    except (InvalidOperation, TypeError, ValueError, ArithmeticError):
        return False
    return Fraction(rounded) == value
