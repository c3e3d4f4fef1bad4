"""Procedural templates of `proof-identities`: an identity or inequality with its coefficients and variable drawn
per seed, and a reference derivation in which every step is one small rewrite (the checker's rule set:
arithmetic, expand/factor, common denominators, dropping a non-negative term).

No goal is provable by arithmetic alone (sympy's automatic evaluation never turns one side into the other),
so a derivation needs real steps.
"""

from __future__ import annotations

import random
from collections.abc import Callable

Spec = tuple[str, dict[str, str], str]  # goal, assumptions, reference derivation
VARIABLES = ("x", "y", "t", "u", "z")


def term(coefficient: int, variable: str, power: int) -> str:
    """`coefficient * variable^power` as written by hand: 1x -> x, -1x^2 -> -x^2, x^0 -> the number."""
    if power == 0:
        return str(coefficient)
    base = variable if power == 1 else f"{variable}^{power}"
    if coefficient == 1:
        return base
    if coefficient == -1:
        return f"-{base}"
    return f"{coefficient}{base}"


def poly(*terms: tuple[int, str, int]) -> str:
    """A sum of terms with signs written as `a - b`, zero terms left out."""
    text = ""
    for coefficient, variable, power in terms:
        if coefficient == 0:
            continue
        piece = term(coefficient, variable, power)
        if not text:
            text = piece
        elif piece.startswith("-"):
            text += f" - {piece[1:]}"
        else:
            text += f" + {piece}"
    return text or "0"


def shift(variable: str, k: int) -> str:
    """`(v + k)` or `(v - |k|)`."""
    return f"({variable} + {k})" if k >= 0 else f"({variable} - {-k})"


def _nonzero(rng: random.Random, bound: int) -> int:
    return rng.choice([n for n in range(-bound, bound + 1) if n])


# ---------------------------------------------------------------- train


def square_difference(rng: random.Random, v: str) -> Spec:
    k = rng.randint(1, 40)
    left = f"{shift(v, k)}^2 - {shift(v, -k)}^2"
    goal = f"{left} = {term(4 * k, v, 1)}"
    middle = f"({poly((1, v, 2), (2 * k, v, 1), (k * k, v, 0))}) - ({poly((1, v, 2), (-2 * k, v, 1), (k * k, v, 0))})"
    return goal, {}, f"{left}\n= {middle}  # expand both squares\n= {term(4 * k, v, 1)}  # collect like terms"


def product_expand(rng: random.Random, v: str) -> Spec:
    p, q = _nonzero(rng, 12), _nonzero(rng, 12)
    left = f"{shift(v, p)}{shift(v, q)}"
    right = poly((1, v, 2), (p + q, v, 1), (p * q, v, 0))
    distributed = poly((1, v, 2), (q, v, 1), (p, v, 1), (p * q, v, 0))
    return f"{left} = {right}", {}, f"{left}\n= {distributed}  # distribute\n= {right}  # collect like terms"


def square_sum(rng: random.Random, v: str) -> Spec:
    p, q = _nonzero(rng, 9), _nonzero(rng, 9)
    left = f"{shift(v, p)}^2 + {shift(v, q)}^2"
    right = poly((2, v, 2), (2 * (p + q), v, 1), (p * p + q * q, v, 0))
    middle = f"({poly((1, v, 2), (2 * p, v, 1), (p * p, v, 0))}) + ({poly((1, v, 2), (2 * q, v, 1), (q * q, v, 0))})"
    return f"{left} = {right}", {}, f"{left}\n= {middle}  # expand both squares\n= {right}  # collect"


def cube_expansion(rng: random.Random, v: str) -> Spec:
    k = _nonzero(rng, 9)
    left = f"{shift(v, k)}^3"
    right = poly((1, v, 3), (3 * k, v, 2), (3 * k * k, v, 1), (k**3, v, 0))
    square = poly((1, v, 2), (2 * k, v, 1), (k * k, v, 0))
    distributed = poly((1, v, 3), (2 * k, v, 2), (k * k, v, 1), (k, v, 2), (2 * k * k, v, 1), (k**3, v, 0))
    reference = (
        f"{left}\n= {shift(v, k)}{shift(v, k)}^2\n= {shift(v, k)}({square})  # expand the square\n"
        f"= {distributed}  # distribute\n= {right}  # collect like terms"
    )
    return f"{left} = {right}", {}, reference


def two_squares(rng: random.Random, v: str) -> Spec:
    p, q = rng.randint(1, 9), rng.randint(1, 9)
    a, b = ("a", "b") if v in ("x", "t") else (v, "w")
    left = f"{term(p * p, a, 2)} + {term(q * q, b, 2)}"
    cross = f"{2 * p * q}{a}{b}"
    reference = (
        f"{left}\n= {term(p * p, a, 2)} - {cross} + {term(q * q, b, 2)} + {cross}  # add and subtract\n"
        f"= ({term(p, a, 1)} - {term(q, b, 1)})^2 + {cross}  # a square\n>= {cross}"
    )
    return f"{left} >= {cross}", {}, reference


def shifted_square(rng: random.Random, v: str) -> Spec:
    k, m = _nonzero(rng, 15), rng.randint(1, 40)
    left = poly((1, v, 2), (-2 * k, v, 1), (k * k + m, v, 0))
    split = poly((1, v, 2), (-2 * k, v, 1), (k * k, v, 0), (m, v, 0))
    reference = f"{left}\n= {split}\n= {shift(v, -k)}^2 + {m}  # a square\n>= {m}"
    return f"{left} >= {m}", {}, reference


def partial_fractions(rng: random.Random, v: str) -> Spec:
    k = rng.randint(1, 40)
    goal = f"1/{v} - 1/({v} + {k}) = {k}/({v}({v} + {k}))"
    reference = (
        f"1/{v} - 1/({v} + {k})\n= (({v} + {k}) - {v})/({v}({v} + {k}))  # common denominator\n"
        f"= {k}/({v}({v} + {k}))"
    )
    return goal, {v: "positive"}, reference


def fraction_sum(rng: random.Random, v: str) -> Spec:
    p, q = rng.sample(range(1, 20), 2)
    denominator = f"({v} + {p})({v} + {q})"
    goal = f"1/({v} + {p}) + 1/({v} + {q}) = ({term(2, v, 1)} + {p + q})/({denominator})"
    reference = (
        f"1/({v} + {p}) + 1/({v} + {q})\n= (({v} + {q}) + ({v} + {p}))/({denominator})  # common denominator\n"
        f"= ({term(2, v, 1)} + {p + q})/({denominator})"
    )
    return goal, {v: "positive"}, reference


# ---------------------------------------------------------------- held-out


def difference_of_squares(rng: random.Random, v: str) -> Spec:
    k = rng.randint(2, 30)
    left = poly((1, v, 2), (-k * k, v, 0))
    padded = poly((1, v, 2), (k, v, 1), (-k, v, 1), (-k * k, v, 0))
    return (
        f"{left} = {shift(v, -k)}{shift(v, k)}",
        {},
        f"{left}\n= {padded}  # add and subtract {k}{v}\n= {shift(v, -k)}{shift(v, k)}  # factor",
    )


def conjugate_product(rng: random.Random, v: str) -> Spec:
    k = rng.randint(1, 30)
    left = f"{shift(v, k)}{shift(v, -k)} + {k * k}"
    distributed = poly((1, v, 2), (-k, v, 1), (k, v, 1), (-k * k, v, 0), (k * k, v, 0))
    return f"{left} = {v}^2", {}, f"{left}\n= {distributed}  # distribute\n= {v}^2"


def strictly_positive(rng: random.Random, v: str) -> Spec:
    k, m = _nonzero(rng, 12), rng.randint(1, 30)
    left = poly((1, v, 2), (2 * k, v, 1), (k * k + m, v, 0))
    split = poly((1, v, 2), (2 * k, v, 1), (k * k, v, 0), (m, v, 0))
    reference = f"{left}\n= {split}\n= {shift(v, k)}^2 + {m}\n>= {m}\n> 0"
    return f"{left} > 0", {}, reference


def reciprocal_sum(rng: random.Random, v: str) -> Spec:
    k = rng.randint(1, 20)
    left = f"{v} + {k * k}/{v}"
    reference = (
        f"{left}\n= {v} - {2 * k} + {k * k}/{v} + {2 * k}  # add and subtract\n"
        f"= (sqrt({v}) - {k}/sqrt({v}))^2 + {2 * k}  # a square\n>= {2 * k}"
    )
    return f"{left} >= {2 * k}", {v: "positive"}, reference


Template = Callable[[random.Random, str], Spec]

TRAIN_TEMPLATES: dict[str, tuple[int, Template]] = {
    "square_difference": (1, square_difference),
    "product_expand": (1, product_expand),
    "square_sum": (2, square_sum),
    "cube_expansion": (2, cube_expansion),
    "shifted_square": (2, shifted_square),
    "two_squares": (3, two_squares),
    "partial_fractions": (3, partial_fractions),
    "fraction_sum": (3, fraction_sum),
}
HELD_OUT_TEMPLATES: dict[str, tuple[int, Template]] = {
    "difference_of_squares": (1, difference_of_squares),
    "conjugate_product": (2, conjugate_product),
    "strictly_positive": (3, strictly_positive),
    "reciprocal_sum": (4, reciprocal_sum),
}


def draw_spec(template: str, index: int) -> tuple[int, Spec]:
    """(difficulty, spec) of one procedural task; the same arguments give the same task everywhere."""
    difficulty, function = TRAIN_TEMPLATES.get(template) or HELD_OUT_TEMPLATES[template]
    rng = random.Random(f"proof-identities/{template}/{index}")
    return difficulty, function(rng, rng.choice(VARIABLES))
