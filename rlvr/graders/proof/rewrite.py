"""How big a derivation step is: a step must be one small rewrite of the previous line, as the checker measures.

Each line is read twice: evaluated (sympy's automatic arithmetic: like terms collected, numbers multiplied,
powers merged) and unevaluated (as written). An equality step `A = B` is small when one rule turns one side
into the other:
- `arithmetic`: A and B evaluate to the same expression (collect like terms, cancel, reorder);
- `expand` / `factor`: expanding product or power-of-a-sum nodes of A (or, read backwards, of B) gives B as
  written (the outermost such nodes all at once, or one of them), with no collecting across the expansions;
- `fractions`: putting one sum of fractions over a common denominator (numerator not collected) gives B, or
  the reverse.
An inequality step is small when the difference of its sides is non-negative (positive, for a strict step)
by sympy's assumptions alone, without simplifying: e.g. `(a - b)^2 + 2ab >= 2ab`.

Whatever the rule, a step whose two sides are the goal's two sides (up to arithmetic) restates the goal and
is not a step. Every rule is bounded: expansions have at most `MAX_EXPANDED_TERMS` terms.
"""

from __future__ import annotations

from typing import Any

import sympy

MAX_EXPANDED_TERMS = 64
MAX_POWER = 4
MAX_NODES = 12  # expandable nodes tried one at a time
Key = tuple[Any, ...]


def key(expr: Any) -> Key:
    """A comparison key for an expression as written: nested sums and products flattened and unordered,
    numeric factors multiplied, zero terms and unit factors dropped; nothing else evaluated."""
    if isinstance(expr, sympy.Add):
        parts: list[Key] = []
        for arg in expr.args:
            inner = key(arg)
            if inner[0] == "+":
                parts.extend(inner[1])
            elif inner != ("n", sympy.Integer(0)):
                parts.append(inner)
        if not parts:
            return ("n", sympy.Integer(0))
        return parts[0] if len(parts) == 1 else ("+", tuple(sorted(parts, key=repr)))
    if isinstance(expr, sympy.Mul):
        coefficient: Any = sympy.Integer(1)
        factors: list[Key] = []
        for arg in expr.args:
            inner = key(arg)
            if inner[0] == "n":
                coefficient *= inner[1]
            elif inner[0] == "*":
                coefficient *= inner[1]
                factors.extend(inner[2])
            else:
                factors.append(inner)
        if coefficient == 0:
            return ("n", sympy.Integer(0))
        if not factors:
            return ("n", coefficient)
        if coefficient == 1 and len(factors) == 1:
            return factors[0]
        return ("*", coefficient, tuple(sorted(factors, key=repr)))
    if isinstance(expr, sympy.Pow):
        base, exponent = key(expr.base), key(expr.exp)
        if exponent == ("n", sympy.Integer(1)):
            return base
        return ("^", base, exponent)
    if expr.is_Number:
        return ("n", sympy.nsimplify(expr) if expr.is_Float else expr)
    if isinstance(expr, sympy.Symbol):
        return ("s", expr.name)
    return ("f", type(expr).__name__, tuple(key(arg) for arg in expr.args))


def _terms(expr: Any) -> list[Any]:
    return list(expr.args) if isinstance(expr, sympy.Add) else [expr]


def _expandable(expr: Any) -> bool:
    if isinstance(expr, sympy.Mul):
        return any(isinstance(arg, sympy.Add) for arg in expr.args) and len(expr.args) > 1
    if isinstance(expr, sympy.Pow):
        exponent = expr.exp
        return isinstance(expr.base, sympy.Add) and exponent.is_Integer and 2 <= int(exponent) <= MAX_POWER
    return False


def _expansions_of(node: Any) -> list[Any]:
    """A node's expansions: the plain distribution (each product of terms evaluated, nothing collected) and,
    for a small enough one, sympy's expansion (collected within the node)."""
    if isinstance(node, sympy.Pow):
        factors = [node.base] * int(node.exp)
    else:
        factors = list(node.args)
    products: list[list[Any]] = [[]]
    for factor in factors:
        products = [p + [t] for p in products for t in _terms(factor)]
        if len(products) > MAX_EXPANDED_TERMS:
            return []
    distributed = sympy.Add(*[sympy.Mul(*p) for p in products], evaluate=False)
    with sympy.evaluate(True):
        collected = sympy.expand(sympy.sympify(node))
    return [distributed, collected]


def _outermost(expr: Any, test: Any) -> list[Any]:
    if test(expr):
        return [expr]
    return [node for arg in expr.args for node in _outermost(arg, test)]


def _replace(expr: Any, node: Any, replacement: Any) -> Any:
    if expr is node:
        return replacement
    if not expr.args:
        return expr
    new_args = [_replace(arg, node, replacement) for arg in expr.args]
    if all(a is b for a, b in zip(new_args, expr.args, strict=True)):
        return expr
    return expr.func(*new_args, evaluate=False)


def expansions(expr: Any) -> list[Any]:
    """`expr` with its outermost expandable nodes expanded all at once, or with any one expandable node expanded."""
    nodes = _outermost(expr, _expandable)
    out: list[Any] = []
    for choice in range(2):  # every node distributed, or every node expanded and collected within itself
        whole = expr
        for node in nodes:
            options = _expansions_of(node)
            if not options:
                break
            whole = _replace(whole, node, options[choice])
        out.append(whole)
    every = [node for node in sympy.preorder_traversal(expr) if _expandable(node)][:MAX_NODES]
    for node in every:
        out += [_replace(expr, node, option) for option in _expansions_of(node)]
    return out


def _fraction(term: Any) -> tuple[Any, Any]:
    numerators, denominators = [], []
    for factor in sympy.Mul.make_args(term):
        if isinstance(factor, sympy.Pow) and factor.exp.is_Number and factor.exp < 0:
            denominators.append(sympy.Pow(factor.base, -factor.exp, evaluate=False))
        else:
            numerators.append(factor)
    numerator = sympy.Mul(*numerators, evaluate=False) if len(numerators) != 1 else numerators[0]
    if not numerators:
        numerator = sympy.Integer(1)
    denominator = sympy.Mul(*denominators, evaluate=False) if len(denominators) > 1 else denominators[0]
    return numerator, denominator


def common_denominators(expr: Any) -> list[Any]:
    """`expr` with one sum of fractions put over the product of its denominators (numerator as written)."""
    out = []
    for node in sympy.preorder_traversal(expr):
        if not isinstance(node, sympy.Add):
            continue
        parts = [
            _fraction(t) if any(_is_reciprocal(f) for f in sympy.Mul.make_args(t)) else (t, None)
            for t in node.args
        ]
        denominators = [d for _n, d in parts if d is not None]
        if not denominators or len(parts) > 8:
            continue
        numerator_terms = []
        for numerator, own in parts:
            others = [d for d in denominators if d is not own]
            with sympy.evaluate(True):
                numerator_terms.append(sympy.Mul(numerator, *others))
        numerator = sympy.Add(*numerator_terms, evaluate=False)
        denominator = sympy.Mul(*denominators, evaluate=False) if len(denominators) > 1 else denominators[0]
        combined = sympy.Mul(numerator, sympy.Pow(denominator, -1, evaluate=False), evaluate=False)
        out.append(_replace(expr, node, combined))
    return out


def _is_reciprocal(factor: Any) -> bool:
    return isinstance(factor, sympy.Pow) and factor.exp.is_Number and factor.exp < 0


def equality_rule(left: Any, right: Any, left_value: Any, right_value: Any) -> str | None:
    """The one rule that turns `left` into `right` (both as written; `*_value` evaluated), or None."""
    if left_value == right_value:
        return "arithmetic"
    target, source = key(right), key(left)
    if any(key(form) == target for form in expansions(left)):
        return "expand"
    if any(key(form) == source for form in expansions(right)):
        return "factor"
    if any(key(form) == target for form in common_denominators(left)):
        return "fractions"
    if any(key(form) == source for form in common_denominators(right)):
        return "fractions"
    return None


def obvious_bound(difference: Any, strict: bool) -> bool:
    """The difference (already evaluated, not simplified) is non-negative / positive by assumptions alone."""
    verdict = difference.is_positive if strict else difference.is_nonnegative
    return bool(verdict)
