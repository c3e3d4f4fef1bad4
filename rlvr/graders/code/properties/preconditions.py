"""Preconditions and relations for generated hidden tests.

`RELATIONS`: named comparators `(args, expected, actual) -> bool` for tasks with several correct
answers (a task names one in `hidden["properties"]["relation"]`).

`HUMANEVAL_PRECONDITIONS`: what a HumanEval docstring promises about its inputs, where the seeds'
inferred domain does not already say it (e.g. "two strings of equal length"). Generated inputs
violating a task's precondition are never used, so a program that is correct on the promised
inputs is never judged on others.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Comparator = Callable[[tuple[Any, ...], Any, Any], bool]


# ------------------------------------------------------------------------------------ relations
def _poly(xs: list[float], x: float) -> float:
    return sum(coeff * math.pow(x, i) for i, coeff in enumerate(xs))


def polynomial_root(args: tuple[Any, ...], expected: Any, actual: Any) -> bool:
    """HumanEval/32: any x with poly(xs, x) ~ 0 is a correct answer."""
    if type(actual) is not float or not math.isfinite(actual):
        return False
    try:
        return math.fabs(_poly(args[0], actual)) < 1e-4
    except (OverflowError, ValueError):
        return False


def same_multiset(args: tuple[Any, ...], expected: Any, actual: Any) -> bool:
    """Any order of the expected elements."""
    if type(actual) is not type(expected) or not isinstance(expected, list | tuple):
        return False
    try:
        return sorted(map(repr, expected)) == sorted(map(repr, actual))
    except TypeError:
        return False


def topological_order(args: tuple[Any, ...], expected: Any, actual: Any) -> bool:
    """args = (n, edges): `actual` lists 0..n-1 once each with every edge u->v ordered u before v,
    or is None exactly when the expected answer says there is no order (a cycle)."""
    n, edges = args[0], args[1]
    if expected is None or actual is None:
        return expected is None and actual is None
    if (
        type(actual) is not list
        or sorted(actual) != list(range(n))
        or any(type(v) is not int for v in actual)
    ):
        return False
    position = {v: i for i, v in enumerate(actual)}
    return all(position[u] < position[v] for u, v in edges)


def pair_summing_to_target(args: tuple[Any, ...], expected: Any, actual: Any) -> bool:
    """args = (values, target): a pair of distinct indices i < j with values[i] + values[j] ==
    target, or None exactly when no such pair exists."""
    values, target = args[0], args[1]
    if expected is None or actual is None:
        return expected is None and actual is None
    if type(actual) is not tuple or len(actual) != 2 or any(type(i) is not int for i in actual):
        return False
    i, j = actual
    return 0 <= i < j < len(values) and values[i] + values[j] == target


def peak_index(args: tuple[Any, ...], expected: Any, actual: Any) -> bool:
    """args = (values,): an index whose value is not smaller than its neighbours."""
    values = args[0]
    if type(actual) is not int or not 0 <= actual < len(values):
        return False
    left = values[actual - 1] if actual > 0 else None
    right = values[actual + 1] if actual + 1 < len(values) else None
    return (left is None or values[actual] >= left) and (right is None or values[actual] >= right)


RELATIONS: dict[str, Comparator] = {
    "polynomial_root": polynomial_root,
    "same_multiset": same_multiset,
    "topological_order": topological_order,
    "pair_summing_to_target": pair_summing_to_target,
    "peak_index": peak_index,
}

HUMANEVAL_RELATIONS: dict[str, Comparator] = {
    "HumanEval/32": polynomial_root,
}


# ------------------------------------------------------------------------------------ HumanEval
def _equal_length(a: Any, b: Any) -> bool:
    return len(a) == len(b)


def _find_zero_input(xs: Any) -> bool:
    return type(xs) is list and len(xs) >= 2 and len(xs) % 2 == 0 and all(c != 0 for c in xs)


HUMANEVAL_PRECONDITIONS: dict[str, Callable[..., bool]] = {
    "HumanEval/11": _equal_length,  # "two strings a and b consisting only of 1s and 0s" (zipped)
    "HumanEval/32": _find_zero_input,  # even number of coefficients; the check uses nonzero ones
}


def _algebra_input(operators: Any, operands: Any) -> bool:
    """HumanEval/160: one operator between each pair of operands, non-negative operands; and
    exponents kept small (no `a ** b ** c` chains), so the reference's eval stays cheap."""
    if len(operators) != len(operands) - 1 or not operators or any(o < 0 for o in operands):
        return False
    for index, operator in enumerate(operators):
        if operator == "**":
            if operands[index + 1] > 16 or (index + 1 < len(operators) and operators[index + 1] == "**"):
                return False
    return all(o <= 10_000 for o in operands)


HUMANEVAL_PRECONDITIONS["HumanEval/160"] = _algebra_input


def _at_least_two(values: Any) -> bool:
    return len(values) >= 2


def _square_permutation_grid(grid: Any, k: Any) -> bool:
    """HumanEval/129: an N x N grid (N >= 2) holding each of 1..N*N once, and k >= 1."""
    n = len(grid)
    if n < 2 or any(type(row) is not list or len(row) != n for row in grid) or type(k) is not int or k < 1:
        return False
    return sorted(v for row in grid for v in row) == list(range(1, n * n + 1))


def _well_grid(grid: Any, capacity: Any) -> bool:
    """HumanEval/115: a rectangular grid of 0/1 wells and 1 <= capacity <= 10."""
    if not grid or any(len(row) != len(grid[0]) for row in grid):
        return False
    return all(v in (0, 1) for row in grid for v in row) and 1 <= capacity <= 10


HUMANEVAL_PRECONDITIONS.update(
    {
        "HumanEval/20": _at_least_two,  # "a supplied list of numbers (of length at least two)"
        "HumanEval/21": _at_least_two,  # "Given list of numbers (of at least two elements)"
        "HumanEval/115": _well_grid,
        "HumanEval/129": _square_permutation_grid,
    }
)
