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
import re
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


# ------------------------------------------------------------------------------------ HumanEval domains
# What each docstring promises about its inputs (issue: correct programs must never be judged on
# inputs the task did not promise to handle; where the promise is unclear, the input is dropped).
def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += 1 if ch == "(" else -1
        if depth < 0:
            return False
    return depth == 0


def _paren_groups(text: Any) -> bool:
    """HumanEval/1: balanced, non-nested groups of '(' and ')' (spaces anywhere)."""
    return type(text) is str and set(text) <= set("() ") and _balanced(text.replace(" ", ""))


def _spaced_groups(text: Any) -> bool:
    """HumanEval/6: balanced groups separated by single spaces."""
    if type(text) is not str or not set(text) <= set("() "):
        return False
    return text == "" or all(group and _balanced(group) for group in text.split(" "))


def _tokens_from(allowed: set[str]) -> Callable[[Any], bool]:
    """A string of allowed tokens separated by single spaces (or empty)."""

    def check(text: Any) -> bool:
        return type(text) is str and (text == "" or all(t in allowed for t in text.split(" ")))

    return check


def _only_chars(chars: str, *, nonempty: bool = False) -> Callable[..., bool]:
    def check(text: Any, *rest: Any) -> bool:
        return type(text) is str and set(text) <= set(chars) and (bool(text) or not nonempty)

    return check


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_DIGITS = "0123456789"


def _int_at_least(low: int, high: int | None = None) -> Callable[..., bool]:
    def check(n: Any, *rest: Any) -> bool:
        return type(n) is int and n >= low and (high is None or n <= high)

    return check


def _ints(values: Any, low: int | None = None) -> bool:
    return type(values) is list and all(type(v) is int and (low is None or v >= low) for v in values)


def _nonempty_list(values: Any, *rest: Any) -> bool:
    return type(values) is list and len(values) >= 1


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, math.isqrt(n) + 1))


def _fruit_text(text: Any, total: Any) -> bool:
    """HumanEval/67: "<a> apples and <o> oranges" and a total that holds them."""
    match = re.fullmatch(r"(\d+) apples and (\d+) oranges", text) if type(text) is str else None
    return match is not None and type(total) is int and total >= int(match[1]) + int(match[2])


def _prime_in_list(values: Any) -> bool:
    """HumanEval/94: non-negative integers, at least one of them prime ("the largest prime")."""
    return _ints(values, 0) and any(_is_prime(v) for v in values)


def _dict_keys(mapping: Any) -> bool:
    """HumanEval/95: string keys are words (letters only): the case of "a1" or "" is not defined."""
    return type(mapping) is dict and all(type(k) is not str or k.isalpha() for k in mapping)


def _two_paren_strings(pair: Any) -> bool:
    """HumanEval/119: "a list of two strings" of '(' and ')'."""
    return type(pair) is list and len(pair) == 2 and all(type(s) is str and set(s) <= set("()") for s in pair)


def _date_text(text: Any) -> bool:
    """HumanEval/124: mm-dd-yyyy. Digit groups of other widths ('4-12-5') and characters int()
    accepts silently (spaces, '+', '_') make the promise unclear; such inputs are dropped."""
    if type(text) is not str or not set(text) <= set(_DIGITS + "-/."):
        return False
    if re.fullmatch(r"\d+-\d+-\d+", text):
        return re.fullmatch(r"\d{2}-\d{2}-\d{4}", text) is not None
    return True


def _split_text(text: Any) -> bool:
    """HumanEval/125: words separated by single spaces, or by commas with no empty piece."""
    if type(text) is not str or any(c.isspace() and c != " " for c in text):
        return False
    if " " in text:
        return all(text.split(" "))
    if "," in text:
        return all(text.split(","))
    return True


def _algebra_operators(operators: Any, operands: Any) -> bool:
    return all(o in ("+", "-", "*", "//", "**") for o in operators) and _algebra_input(operators, operands)


def _intervals(first: Any, second: Any) -> bool:
    for interval in (first, second):
        if type(interval) is not tuple or len(interval) != 2:
            return False
        start: Any = interval[0]
        if not start <= interval[1]:
            return False
    return True


def _fraction_text(text: Any) -> bool:
    return type(text) is str and re.fullmatch(r"[1-9]\d*/[1-9]\d*", text) is not None


def _sentence(text: Any) -> bool:
    """HumanEval/91: words (letters) and spaces, sentences ended by '.', '?' or '!'."""
    return type(text) is str and set(text) <= set(_LETTERS + " .?!")


HUMANEVAL_PRECONDITIONS.update(
    {
        "HumanEval/1": _paren_groups,
        "HumanEval/2": lambda x: x > 0,  # "a positive floating point number"
        "HumanEval/4": _nonempty_list,
        "HumanEval/6": _spaced_groups,
        "HumanEval/13": lambda a, b: type(a) is int and type(b) is int and a >= 0 and b >= 0 and a + b > 0,
        "HumanEval/15": _int_at_least(0),
        "HumanEval/17": _tokens_from({"o", "o|", ".|"}),
        "HumanEval/19": _tokens_from(
            {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
        ),
        "HumanEval/24": _int_at_least(2),
        "HumanEval/25": _int_at_least(1),
        "HumanEval/35": _nonempty_list,
        "HumanEval/39": _int_at_least(1),
        "HumanEval/41": _int_at_least(0),
        "HumanEval/44": lambda x, base: type(x) is int and x >= 0 and type(base) is int and 2 <= base <= 9,
        "HumanEval/46": _int_at_least(0),
        "HumanEval/47": _nonempty_list,
        "HumanEval/49": lambda n, p: type(n) is int and n >= 0 and type(p) is int and p >= 1,
        "HumanEval/50": _only_chars("abcdefghijklmnopqrstuvwxyz"),  # output of encode_shift
        "HumanEval/55": _int_at_least(0),
        "HumanEval/56": _only_chars("<>"),
        "HumanEval/59": lambda n: type(n) is int and n > 1 and not _is_prime(n),
        "HumanEval/61": _only_chars("()"),
        "HumanEval/63": _int_at_least(0),
        "HumanEval/64": _only_chars(_LETTERS),  # "a word"
        "HumanEval/65": lambda x, shift: type(x) is int and x >= 0 and type(shift) is int and shift >= 0,
        "HumanEval/67": _fruit_text,
        "HumanEval/68": lambda arr: _ints(arr, 0),
        "HumanEval/69": lambda lst: _ints(lst, 1) and len(lst) >= 1,
        "HumanEval/75": lambda a: type(a) is int and 1 <= a < 100,
        "HumanEval/76": lambda x, n: type(x) is int and type(n) is int and x >= 1 and n >= 1,
        "HumanEval/78": _only_chars("0123456789ABCDEF"),
        "HumanEval/79": _int_at_least(0),
        "HumanEval/81": lambda grades: all(type(g) in (int, float) and 0 <= g <= 4 for g in grades),
        "HumanEval/83": _int_at_least(1),
        "HumanEval/84": _int_at_least(0, 10_000),
        "HumanEval/85": _nonempty_list,
        "HumanEval/89": _only_chars("abcdefghijklmnopqrstuvwxyz"),
        "HumanEval/91": _sentence,
        "HumanEval/93": _only_chars(_LETTERS + " "),  # "assume only letters"
        "HumanEval/94": _prime_in_list,
        "HumanEval/95": _dict_keys,
        "HumanEval/96": _int_at_least(0),
        "HumanEval/100": _int_at_least(1),
        "HumanEval/101": _only_chars(_LETTERS + ", "),
        "HumanEval/102": lambda x, y: type(x) is int and type(y) is int and x >= 1 and y >= 1,
        "HumanEval/103": lambda n, m: type(n) is int and type(m) is int and n >= 1 and m >= 1,
        "HumanEval/104": lambda x: _ints(x, 1),
        "HumanEval/106": _int_at_least(0),
        "HumanEval/107": _int_at_least(1, 1000),
        "HumanEval/109": lambda arr: type(arr) is list and len({repr(v) for v in arr}) == len(arr),
        "HumanEval/110": lambda a, b: _ints(a) and _ints(b) and bool(a) and bool(b),
        "HumanEval/111": _tokens_from(set("abcdefghijklmnopqrstuvwxyz")),
        "HumanEval/113": lambda lst: all(type(s) is str and s.isdigit() for s in lst),
        "HumanEval/114": _nonempty_list,
        "HumanEval/116": lambda arr: _ints(arr, 0),  # "an array of non-negative integers"
        "HumanEval/117": lambda s, n: _only_chars(_LETTERS + " ")(s) and type(n) is int and n >= 0,
        "HumanEval/118": _only_chars(_LETTERS),
        "HumanEval/119": _two_paren_strings,
        "HumanEval/120": lambda arr, k: _nonempty_list(arr) and type(k) is int and 0 <= k <= len(arr),
        "HumanEval/121": _nonempty_list,
        "HumanEval/122": lambda arr, k: _nonempty_list(arr) and type(k) is int and 1 <= k <= len(arr),
        "HumanEval/123": _int_at_least(1),
        "HumanEval/124": _date_text,
        "HumanEval/125": _split_text,
        "HumanEval/126": lambda lst: _ints(lst, 0),
        "HumanEval/127": _intervals,
        "HumanEval/130": _int_at_least(0),
        "HumanEval/131": _int_at_least(1),
        "HumanEval/132": _only_chars("[]"),
        "HumanEval/135": lambda arr: type(arr) is list and len({repr(v) for v in arr}) == len(arr),
        "HumanEval/139": _int_at_least(1),
        "HumanEval/143": lambda s: _only_chars(_LETTERS + " ", nonempty=True)(s) and "  " not in s,
        "HumanEval/144": lambda x, n: _fraction_text(x) and _fraction_text(n),
        "HumanEval/147": _int_at_least(1),
        "HumanEval/156": _int_at_least(1, 1000),
        "HumanEval/157": lambda a, b, c: all(type(v) in (int, float) and v > 0 for v in (a, b, c)),
        "HumanEval/158": lambda words: _nonempty_list(words) and len(set(words)) == len(words),
        "HumanEval/159": lambda *counts: all(type(v) is int and 0 <= v <= 1000 for v in counts),
        "HumanEval/160": _algebra_operators,
    }
)


def closest_pair(args: tuple[Any, ...], expected: Any, actual: Any) -> bool:
    """HumanEval/20: any two elements (of distinct positions) at the smallest distance, in order."""
    values = args[0]
    if type(actual) is not tuple or len(actual) != 2 or type(expected) is not tuple:
        return False
    low, high = actual
    if type(low) is not type(expected[0]) or type(high) is not type(expected[1]) or low > high:
        return False
    if low == high:
        if values.count(low) < 2:
            return False
    elif low not in values or high not in values:
        return False
    return high - low == expected[1] - expected[0]


HUMANEVAL_RELATIONS["HumanEval/20"] = closest_pair
