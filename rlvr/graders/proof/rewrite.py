"""How big a derivation step is: a step must be one small rewrite of the previous line, as the checker measures.

Each line is read twice: evaluated (sympy's automatic arithmetic: like terms collected, numbers multiplied,
powers merged) and unevaluated (as written). An equality step `A = B` is small when one rule turns one side
into the other:
- `arithmetic`: A and B evaluate to the same expression (collect like terms, cancel, reorder);
- `expand` / `factor`: expanding product or power-of-a-sum nodes of A (or, read backwards, of B) gives B as
  written (the outermost such nodes all at once, or one of them; or one product distributed over the terms of
  one of its sum factors, `(x - 12)(x + 5)` -> `x(x + 5) - 12(x + 5)`), with no collecting across the
  expansions except adding numbers (`(x + 5)^2 + 2` is one rewrite of `x^2 + 10x + 27`);
- `fractions`: putting one sum of fractions over a common denominator (numerator not collected) gives B, or
  the reverse; fractions over one same denominator are combined over it (`a/d - b/d` -> `(a - b)/d`).
"As written" reads `x·x` as `x^2`, `7^2` as 49 and `-(a - b)` as `-a + b`. A step that needs its numbers added
to match is a restatement when its sides are the goal's sides with numbers added (so padding `L = L + 1 - 1`
does not let `L + 1 - 1 = R` through).
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
MAX_NUMBER_POWER = 16  # `7^2` is read as 49 up to this exponent
MAX_NUMBER_BASE = 10**6
Key = tuple[Any, ...]


def _scaled(coefficient: Any, term: Key) -> Key:
    """The key of `coefficient * term` (a numeric coefficient times the key of one term)."""
    if term[0] == "n":
        return ("n", coefficient * term[1])
    if term[0] == "*":
        coefficient, factors = coefficient * term[1], term[2]
    else:
        factors = (term,)
    if coefficient == 0:
        return ("n", sympy.Integer(0))
    return factors[0] if coefficient == 1 and len(factors) == 1 else ("*", coefficient, factors)


def _number_power(base: Key, exponent: Key) -> Key | None:
    """`7^2` as the number 49 (small integer exponents of rationals only)."""
    if base[0] != "n" or exponent[0] != "n" or not exponent[1].is_Integer or not base[1].is_Rational:
        return None
    if abs(int(exponent[1])) > MAX_NUMBER_POWER or (base[1] == 0 and exponent[1] < 0):
        return None
    number: Any = base[1]
    if max(abs(number.p), abs(number.q)) > MAX_NUMBER_BASE:
        return None
    return ("n", number ** exponent[1])


def key(expr: Any, collected: bool = False) -> Key:
    """A comparison key for an expression as written: nested sums and products flattened and unordered,
    numeric factors multiplied (also into a sum they multiply: `-(a - 2)` is `-a + 2`), powers of numbers
    computed, equal factors merged into a power (`x·x` is `x^2`), zero terms and unit factors dropped; nothing
    else evaluated. With `collected`, the numbers of a sum are added too (`x^2 + 25 + 2` is `x^2 + 27`)."""
    if isinstance(expr, sympy.Add):
        parts: list[Key] = []
        for arg in expr.args:
            inner = key(arg, collected)
            if inner[0] == "+":
                parts.extend(inner[1])
            elif inner != ("n", sympy.Integer(0)):
                parts.append(inner)
        if collected:
            total = sum((p[1] for p in parts if p[0] == "n"), sympy.Integer(0))
            parts = [p for p in parts if p[0] != "n"] + ([("n", total)] if total != 0 else [])
        if not parts:
            return ("n", sympy.Integer(0))
        return parts[0] if len(parts) == 1 else ("+", tuple(sorted(parts, key=repr)))
    if isinstance(expr, sympy.Mul):
        coefficient: Any = sympy.Integer(1)
        factors: list[Key] = []
        for arg in expr.args:
            inner = key(arg, collected)
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
        merged: dict[Key, int] = {}
        for factor in factors:
            merged[factor] = merged.get(factor, 0) + 1
        factors = [f if n == 1 else ("^", f, ("n", sympy.Integer(n))) for f, n in merged.items()]
        if len(factors) == 1 and factors[0][0] == "+" and coefficient != 1:
            terms = [_scaled(coefficient, term) for term in factors[0][1]]
            return ("+", tuple(sorted(terms, key=repr)))
        if coefficient == 1 and len(factors) == 1:
            return factors[0]
        return ("*", coefficient, tuple(sorted(factors, key=repr)))
    if isinstance(expr, sympy.Pow):
        base, exponent = key(expr.base, collected), key(expr.exp, collected)
        if exponent == ("n", sympy.Integer(1)):
            return base
        return _number_power(base, exponent) or ("^", base, exponent)
    if expr.is_Number:
        return ("n", sympy.nsimplify(expr) if expr.is_Float else expr)
    if isinstance(expr, sympy.Symbol):
        return ("s", expr.name)
    return ("f", type(expr).__name__, tuple(key(arg, collected) for arg in expr.args))


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
        out += [_replace(expr, node, option) for option in _expansions_of(node) + _distributions_of(node)]
    return out


def _distributions_of(node: Any) -> list[Any]:
    """A product distributed over the terms of one of its sum factors, the other factors kept as written:
    `(x - 12)(x + 5)` -> `x(x + 5) - 12(x + 5)` (and, reading a step backwards, factoring out `(x + 5)`)."""
    if not isinstance(node, sympy.Mul):
        return []
    out = []
    for index, factor in enumerate(node.args):
        if not isinstance(factor, sympy.Add) or len(factor.args) > MAX_EXPANDED_TERMS:
            continue
        others = node.args[:index] + node.args[index + 1 :]
        out.append(
            sympy.Add(*[sympy.Mul(term, *others, evaluate=False) for term in factor.args], evaluate=False)
        )
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
        same = [i for i, (_n, d) in enumerate(parts) if d is not None and key(d) == key(denominators[0])]
        if len(same) > 1:  # fractions over one denominator: one fraction, numerators added as written
            numerator = sympy.Add(*[parts[i][0] for i in same], evaluate=False)
            combined = sympy.Mul(numerator, sympy.Pow(denominators[0], -1, evaluate=False), evaluate=False)
            rest = [t for i, t in enumerate(node.args) if i not in same]
            out.append(_replace(expr, node, sympy.Add(combined, *rest, evaluate=False) if rest else combined))
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


def equality_rule(
    left: Any, right: Any, left_value: Any, right_value: Any, collected: bool = False
) -> str | None:
    """The one rule that turns `left` into `right` (both as written; `*_value` evaluated), or None. With
    `collected`, the rule's result may differ from the line by adding numbers (`(x+5)^2 + 2` expands to
    `x^2 + 10x + 25 + 2`, which is `x^2 + 10x + 27`); the caller then checks restating with collected keys."""
    if left_value == right_value:
        return "arithmetic"
    target, source = key(right, collected), key(left, collected)
    if any(key(form, collected) == target for form in expansions(left)):
        return "expand"
    if any(key(form, collected) == source for form in expansions(right)):
        return "factor"
    if any(key(form, collected) == target for form in common_denominators(left)):
        return "fractions"
    if any(key(form, collected) == source for form in common_denominators(right)):
        return "fractions"
    return None


def obvious_bound(difference: Any, strict: bool) -> bool:
    """The difference (already evaluated, not simplified) is non-negative / positive by assumptions alone."""
    verdict = difference.is_positive if strict else difference.is_nonnegative
    return bool(verdict)
