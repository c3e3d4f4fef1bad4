# task: mean
# attack: a numeric type that is not plain data (Fraction/Decimal) with the right value
from fractions import Fraction


def mean(xs):
    return Fraction(sum(xs), len(xs))
