"""`math-procedural`: generated math tasks, difficulty 1-5, with held-out templates.

Each template draws its numbers from a seeded RNG (seed = template, difficulty, index), so the pack is the
same on every machine. Templates in `HELD_OUT` form the `test` split; the rest are `train`: evaluating on the
test split measures transfer to problem shapes never trained on, not only to new numbers.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable
from fractions import Fraction

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task

INSTRUCTION = "Give your final answer as \\boxed{...}."
TASKS_PER_CELL = 4  # per template and difficulty

Generated = tuple[str, str]  # (question, answer)
Template = Callable[[random.Random, int], Generated]


def _frac(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def _scale(difficulty: int) -> int:
    return 10 ** min(difficulty, 4)


def _nonzero(rng: random.Random, bound: int) -> int:
    value = 0
    while value == 0:
        value = rng.randint(-bound, bound)
    return value


def _coef(value: int) -> str:
    """A coefficient in front of a variable: 1 -> "", -1 -> "-"."""
    return {1: "", -1: "-"}.get(value, str(value))


def _signed(value: int, first: bool = False) -> str:
    if first:
        return str(value)
    return f"+ {value}" if value >= 0 else f"- {-value}"


# ---------------------------------------------------------------- train templates


def _evaluate(terms: list[int], operators: list[str]) -> int:
    """Value of `t0 op1 t1 op2 t2 ...` with `*` binding tighter than `+`/`-`."""
    sums: list[int] = [terms[0]]
    signs: list[int] = [1]
    for op, term in zip(operators, terms[1:], strict=True):
        if op == "*":
            sums[-1] *= term
        else:
            sums.append(term)
            signs.append(1 if op == "+" else -1)
    return sum(sign * value for sign, value in zip(signs, sums, strict=True))


def arithmetic(rng: random.Random, difficulty: int) -> Generated:
    terms = [rng.randint(1, _scale(difficulty)) for _ in range(difficulty + 1)]
    operators = [rng.choice("+-*") for _ in terms[1:]]
    expression = str(terms[0]) + "".join(
        f" {op} {term}" for op, term in zip(operators, terms[1:], strict=True)
    )
    value = _evaluate(terms, operators)
    if difficulty >= 3:
        factor = rng.randint(2, 9)
        expression, value = f"({expression}) * {factor}", value * factor
    latex = expression.replace("*", "\\times")
    return f"Compute ${latex}$.", str(value)


def fraction_sum(rng: random.Random, difficulty: int) -> Generated:
    bound = 3 + 3 * difficulty
    while True:  # redraw when the result would just repeat an operand (e.g. 1 x 1/7)
        a = Fraction(rng.randint(1, bound), rng.randint(2, bound))
        b = Fraction(rng.randint(1, bound), rng.randint(2, bound))
        op = rng.choice(["+", "-"] if difficulty < 3 else ["+", "-", "\\times"])
        value = a + b if op == "+" else a - b if op == "-" else a * b
        if value not in (a, b):
            return f"Compute ${_frac(a)} {op} {_frac(b)}$ and give the result as a reduced fraction.", _frac(
                value
            )


def linear_equation(rng: random.Random, difficulty: int) -> Generated:
    bound = 5 * difficulty
    a, c = _nonzero(rng, bound), _nonzero(rng, bound)
    while a == c:
        c = _nonzero(rng, bound)
    b, d = rng.randint(-bound * 3, bound * 3), rng.randint(-bound * 3, bound * 3)
    x = Fraction(d - b, a - c)
    return f"Solve for $x$: ${_coef(a)}x {_signed(b)} = {_coef(c)}x {_signed(d)}$.", _frac(x)


def quadratic_roots(rng: random.Random, difficulty: int) -> Generated:
    bound = 3 * difficulty + 2
    r1, r2 = rng.randint(-bound, bound), rng.randint(-bound, bound)
    leading = rng.randint(1, difficulty)
    b, c = -leading * (r1 + r2), leading * r1 * r2
    roots = sorted({r1, r2})
    answer = ", ".join(str(r) for r in roots)
    return (
        f"Find all real solutions of ${_coef(leading)}x^2 {_signed(b)}x {_signed(c)} = 0$. "
        "List every distinct solution, separated by commas.",
        answer,
    )


def expand_product(rng: random.Random, difficulty: int) -> Generated:
    bound = 2 + 2 * difficulty
    a, b = _nonzero(rng, bound), _nonzero(rng, bound)
    k = rng.randint(1, difficulty)
    question = f"Expand and simplify ${_coef(k)}(x {_signed(a)})(x {_signed(b)})$."
    answer = f"{_coef(k)}x^2 {_signed(k * (a + b))}x {_signed(k * a * b)}"
    return question, answer


def gcd_lcm(rng: random.Random, difficulty: int) -> Generated:
    common = rng.randint(2, 4 * difficulty + 4)
    a = common * rng.randint(2, 3 * _scale(difficulty - 1) + 5)
    b = common * rng.randint(2, 3 * _scale(difficulty - 1) + 5)
    if rng.random() < 0.5:
        return f"What is the greatest common divisor of {a} and {b}?", str(math.gcd(a, b))
    return f"What is the least common multiple of {a} and {b}?", str(a * b // math.gcd(a, b))


def modular_power(rng: random.Random, difficulty: int) -> Generated:
    base, exponent = rng.randint(2, 9 + difficulty * 5), rng.randint(5, 20 * difficulty)
    modulus = rng.randint(5, 10 + 20 * difficulty)
    return (
        f"What is the remainder when ${base}^{{{exponent}}}$ is divided by {modulus}?",
        str(pow(base, exponent, modulus)),
    )


def shopping(rng: random.Random, difficulty: int) -> Generated:
    count, price = rng.randint(2, 4 * difficulty + 2), rng.randint(2, 5 * difficulty + 5)
    discount = rng.choice([0, 10, 20, 25, 50]) if difficulty >= 2 else 0
    total = Fraction(count * price) * Fraction(100 - discount, 100)
    clause = f" The shop takes {discount}% off the whole purchase." if discount else ""
    return (
        f"Maya buys {count} notebooks that cost ${price} each.{clause} How many dollars does she pay?",
        _frac(total),
    )


# ---------------------------------------------------------------- held-out templates


def percent_change(rng: random.Random, difficulty: int) -> Generated:
    old = rng.choice([20, 40, 50, 80, 100, 200, 250, 400]) * max(1, difficulty - 2)
    change = rng.choice([5, 10, 12, 15, 20, 25, 30, 40, 50, 75]) * rng.choice([1, -1])
    new = Fraction(old * (100 + change), 100)
    return (
        f"A price changes from ${old} to ${_frac(new)}. By what percent did it change? "
        "(Use a negative number for a decrease.)",
        f"{change}\\%",
    )


def linear_system(rng: random.Random, difficulty: int) -> Generated:
    bound = 2 + 2 * difficulty
    x, y = rng.randint(-bound, bound), rng.randint(-bound, bound)
    while True:
        a, b, c, d = (_nonzero(rng, bound) for _ in range(4))
        if a * d - b * c != 0:
            break
    return (
        f"Solve the system ${_coef(a)}x {_signed(b)}y = {a * x + b * y}$ and ${_coef(c)}x {_signed(d)}y = {c * x + d * y}$. "
        "Give the answer as an ordered pair $(x, y)$.",
        f"({x}, {y})",
    )


def divisor_count(rng: random.Random, difficulty: int) -> Generated:
    primes = rng.sample([2, 3, 5, 7, 11, 13], k=min(1 + difficulty // 2, 4))
    exponents = [rng.randint(1, difficulty) for _ in primes]
    n = math.prod(p**e for p, e in zip(primes, exponents, strict=True))
    return f"How many positive divisors does {n} have?", str(math.prod(e + 1 for e in exponents))


def linear_inequality(rng: random.Random, difficulty: int) -> Generated:
    bound = 3 * difficulty
    a, b, c = _nonzero(rng, bound), rng.randint(-bound * 3, bound * 3), rng.randint(-bound * 3, bound * 3)
    strict = rng.random() < 0.5
    relation = "<" if strict else "\\le"
    boundary = _frac(Fraction(c - b, a))
    if a > 0:  # x < boundary
        answer = f"(-\\infty, {boundary})" if strict else f"(-\\infty, {boundary}]"
    else:
        answer = f"({boundary}, \\infty)" if strict else f"[{boundary}, \\infty)"
    return (
        f"Solve ${_coef(a)}x {_signed(b)} {relation} {c}$ over the real numbers. Give the answer in interval notation.",
        answer,
    )


TRAIN_TEMPLATES: dict[str, Template] = {
    "arithmetic": arithmetic,
    "fraction_sum": fraction_sum,
    "linear_equation": linear_equation,
    "quadratic_roots": quadratic_roots,
    "expand_product": expand_product,
    "gcd_lcm": gcd_lcm,
    "modular_power": modular_power,
    "shopping": shopping,
}
HELD_OUT: dict[str, Template] = {
    "percent_change": percent_change,
    "linear_system": linear_system,
    "divisor_count": divisor_count,
    "linear_inequality": linear_inequality,
}


def generate(template: str, difficulty: int, index: int) -> Task:
    function = TRAIN_TEMPLATES.get(template) or HELD_OUT[template]
    rng = random.Random(f"{template}/{difficulty}/{index}")
    question, answer = function(rng, difficulty)
    return Task(
        id=f"math/{template}/d{difficulty}/{index}",
        prompt=f"{question}\n{INSTRUCTION}",
        family="math",
        difficulty=difficulty,
        split="test" if template in HELD_OUT else "train",
        hidden={"answer": answer},
        meta={"template": template},
    )


class MathProceduralPack(TaskPack):
    name = "math-procedural"
    family = "math"
    version = "1"
    description = (
        "Generated arithmetic, fractions, linear/quadratic equations, expansion, number theory and word problems; "
        "difficulty 1-5; test split = held-out templates (percent change, 2x2 systems, divisor counts, inequalities)."
    )

    def _load(self) -> Iterable[Task]:
        for template in [*TRAIN_TEMPLATES, *HELD_OUT]:
            for difficulty in range(1, 6):
                for index in range(TASKS_PER_CELL):
                    yield generate(template, difficulty, index)
