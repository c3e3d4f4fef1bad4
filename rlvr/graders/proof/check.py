"""Check a step-by-step derivation with sympy. Runs inside the math worker (rlvr/graders/math/worker.py).

A derivation is a chain, one step a line: the first line is an expression, every later line starts with a
relation (`=`, `<=`, `<`, `>=`, `>`, or `≤ ≥`) followed by an expression. Text after `#` is a comment.
Expressions are plain or LaTeX math (`(a+b)^2`, `2ab`, `\\frac{a}{b}`, `sqrt(x)`), parsed by latex2sympy (no
`eval` of untrusted text). Each step is checked on its own:
- `=`: the difference simplifies to 0 (sympy `simplify`, then `equals`);
- `<=`/`<`/`>=`/`>`: the difference (right minus left, or the reverse) is provably non-negative / positive
  under the task's assumptions (sympy's assumption system on the simplified, factored and expanded forms).
The chain proves the goal `L REL R` when it starts at L and ends at R (as written, up to arithmetic), every
step holds, and the composed relation implies REL (all `=` for an equation; same direction, and a strict step
for `<`/`>`). Each step is also measured (rlvr/graders/proof/rewrite.py): a step that is not one small rewrite
of the previous line, or that restates the whole goal, is reported `small: false` and fails the process gate.
"""

from __future__ import annotations

import re
from typing import Any

import sympy
from latex2sympy2_extended import latex2sympy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig

from rlvr.graders.proof.rewrite import equality_rule, key, obvious_bound

MAX_LINES = 60
MAX_LINE_CHARS = 500
RELATIONS = {
    "<=": "<=",
    "≤": "<=",
    "\\le": "<=",
    "\\leq": "<=",
    ">=": ">=",
    "≥": ">=",
    "\\ge": ">=",
    "\\geq": ">=",
}
RELATIONS |= {"=": "=", "<": "<", ">": ">"}
# `\le`/`\ge` only as whole commands: `\left(` opens a bracket, it is not `\le` followed by `ft(`
_RELATION = r"(\\leq|\\geq|\\le(?![A-Za-z])|\\ge(?![A-Za-z])|<=|>=|≤|≥|=|<|>)"
_RELATION_AT_START = re.compile(r"^\s*" + _RELATION + r"\s*(.*)$")
_GOAL_SPLIT = re.compile(_RELATION)
_FUNCTIONS = re.compile(r"(?<![\\A-Za-z])(sin|cos|tan|log|ln|exp)(?=\s*[({])")
_SQRT_CALL = re.compile(r"(?<!\\)\bsqrt\s*\(")
_CONVERSION = ConversionConfig(lowercase_symbols=False)
ASSUMPTIONS = {"real": {"real": True}, "positive": {"positive": True}, "nonnegative": {"nonnegative": True}}


class ProofSyntaxError(ValueError):
    pass


def _closing(source: str, opening: int) -> int:
    """The index of the `)` that closes the `(` at `opening`, or -1."""
    depth = 0
    for index in range(opening, len(source)):
        depth += {"(": 1, ")": -1}.get(source[index], 0)
        if depth == 0:
            return index
    return -1


def _braced(source: str) -> str:
    """Plain `x^(1/3)` and `sqrt((x-1)^2)` as LaTeX `x^{(1/3)}` and `\\sqrt{(x-1)^2}`: LaTeX reads a bare `^(` as
    the exponent `(` alone, and `sqrt(` with nested brackets as the product s·q·r·t."""
    out, index = [], 0
    while True:
        power = source.find("^(", index)
        root = _SQRT_CALL.search(source, index)
        starts = [p for p in (power, root.start() if root else -1) if p >= 0]
        if not starts:
            return "".join(out) + source[index:]
        found = min(starts)
        opening = found + 1 if found == power else source.index("(", found)
        closing = _closing(source, opening)
        if closing < 0:  # unbalanced: left to the parser to reject
            return "".join(out) + source[index:]
        inner = _braced(source[opening + 1 : closing])
        if found == power:
            out.append(source[index:found] + "^{(" + inner + ")}")
        else:
            out.append(source[index:found] + "\\sqrt{" + inner + "}")
        index = closing + 1


def parse_math(text: str, assumptions: dict[str, dict[str, bool]], *, evaluate: bool = True) -> Any:
    source = text.strip().strip("$").strip()
    if not source or len(source) > MAX_LINE_CHARS:
        raise ProofSyntaxError("empty or too long expression")
    source = source.replace("**", "^").replace("·", "\\cdot ").replace("−", "-")
    source = _braced(source)
    source = _FUNCTIONS.sub(r"\\\1", source)
    with sympy.evaluate(evaluate):
        try:
            expr = latex2sympy(source, conversion_config=_CONVERSION)
        except Exception as exc:
            raise ProofSyntaxError(f"cannot parse {text.strip()[:80]!r}") from exc
        if not isinstance(expr, sympy.Expr):
            raise ProofSyntaxError(f"not an expression: {text.strip()[:80]!r}")
        default = assumptions.get("*", {"real": True})
        symbols: list[Any] = list(expr.free_symbols)
        return expr.xreplace({s: sympy.Symbol(s.name, **assumptions.get(s.name, default)) for s in symbols})


class Line:
    """One expression of a derivation, as written and evaluated."""

    def __init__(self, text: str, assumptions: dict[str, dict[str, bool]]) -> None:
        self.written = parse_math(text, assumptions, evaluate=False)
        self.value = evaluated(self.written)


MAX_NUMBER_BITS = 10_000  # ~3,000 digits: a number as written beyond that is not checked
MAX_FACTORIAL = 1_000


def _affordable(func: Any, args: list[Any]) -> None:
    """Refuse, before sympy computes it, a number a line writes that is too large to check quickly
    (`9^(9^9)`, `100000!`): a scored failure at once, not a check that runs until the time limit."""
    if func is sympy.Pow and len(args) == 2 and args[0].is_Rational and args[1].is_Number:
        base, exponent = args
        size = max(int(abs(base.p)).bit_length(), int(base.q).bit_length())
        if size > 1 and abs(exponent) * size > MAX_NUMBER_BITS:
            raise ProofSyntaxError("a power too large to check")
    if func is sympy.factorial and args and args[0].is_Number and args[0] > MAX_FACTORIAL:
        raise ProofSyntaxError("a factorial too large to check")


def evaluated(expr: Any) -> Any:
    """An expression parsed as written, rebuilt with sympy's automatic evaluation (parsing once is cheaper)."""
    if not expr.args:
        return expr
    args = [evaluated(arg) for arg in expr.args]
    _affordable(expr.func, args)
    return expr.func(*args)


def step_size(previous: Line, relation: str, current: Line, goal: tuple[Line, Line]) -> tuple[bool, str]:
    """Whether the step is one small rewrite (and which rule), measured on the lines as written."""
    sides = {key(previous.written), key(current.written)}
    if sides == {key(goal[0].written), key(goal[1].written)} and len(sides) == 2:
        return False, "restates the goal in one step"
    if relation == "=":
        rule = equality_rule(previous.written, current.written, previous.value, current.value)
        if rule:
            return True, rule
        rule = equality_rule(previous.written, current.written, previous.value, current.value, collected=True)
        if not rule:
            return False, "not one rewrite of the previous line"
        # numbers added too: restating is judged with numbers added, so `L = L + 1 - 1` then `= R` is caught
        loose = {key(previous.written, True), key(current.written, True)}
        if loose == {key(goal[0].written, True), key(goal[1].written, True)} and len(loose) == 2:
            return False, "restates the goal in one step"
        return True, f"{rule}, numbers added"
    difference = current.value - previous.value if relation in ("<=", "<") else previous.value - current.value
    if obvious_bound(difference, relation in ("<", ">")):
        return True, "drops a non-negative term"
    return False, "the bound is not evident from the previous line (rewrite it first)"


def _forms(expr: Any) -> list[Any]:
    forms = [expr]
    for transform in (sympy.simplify, sympy.factor, sympy.expand):
        try:
            forms.append(transform(expr))
        except Exception:  # a transform that cannot handle the form just does not help
            continue
    return forms


def _sign_holds(difference: Any, strict: bool) -> bool:
    for form in _forms(difference):
        verdict = form.is_positive if strict else form.is_nonnegative
        if verdict:
            return True
    return False


def step_holds(left: Any, relation: str, right: Any) -> tuple[bool, str]:
    if relation == "=":
        difference = sympy.simplify(left - right)
        if difference == 0:
            return True, "equal (simplify)"
        return (True, "equal (equals)") if difference.equals(0) else (False, "not equal")
    if relation in ("<=", "<"):
        difference = right - left
    else:
        difference = left - right
    strict = relation in ("<", ">")
    if _sign_holds(difference, strict):
        return True, "sign proved"
    return False, "sympy cannot prove this inequality step"


def compose(relations: list[str]) -> str | None:
    """The relation from the first to the last expression; None when directions are mixed."""
    directions = {r[0] for r in relations if r != "="}
    if not directions:
        return "="
    if len(directions) > 1:
        return None
    direction = directions.pop()
    strict = any(r in ("<", ">") for r in relations)
    return direction if strict else direction + "="


def implies(chain: str | None, goal: str) -> bool:
    if chain is None:
        return False
    if goal == "=":
        return chain == "="
    if goal in ("<=", ">="):
        return chain in ("=", goal, goal[0])
    return chain == goal


def split_lines(text: str) -> list[str]:
    lines = [line.split("#", 1)[0].rstrip() for line in text.splitlines()]
    return [line for line in lines if line.strip()]


def check_proof(goal: str, text: str, assumption_spec: dict[str, str] | None = None) -> dict[str, Any]:
    """Per-step validity and size, and whether the whole chain proves the goal (plain data, JSON-ready)."""
    assumptions = {name: ASSUMPTIONS[kind] for name, kind in (assumption_spec or {}).items()}
    parts = _GOAL_SPLIT.split(goal)
    if len(parts) != 3:
        raise ProofSyntaxError("the goal must be `left RELATION right` with one relation")
    goal_left, goal_right = Line(parts[0], assumptions), Line(parts[2], assumptions)
    goal_relation = RELATIONS[parts[1]]
    lines = split_lines(text)
    report: dict[str, Any] = {"steps": [], "proved": False, "problem": ""}
    if not lines:
        report["problem"] = "no derivation lines"
        return report
    if len(lines) > MAX_LINES:
        report["problem"] = f"more than {MAX_LINES} lines"
        return report
    previous: Line | None = None
    relations: list[str] = []
    for number, line in enumerate(lines, start=1):
        match = _RELATION_AT_START.match(line)
        relation, body = (RELATIONS[match.group(1)], match.group(2)) if match else ("start", line)
        step: dict[str, Any] = {"line": number, "relation": relation, "small": True}
        report["steps"].append(step)
        if (number == 1) != (relation == "start"):
            why = (
                "the first line is the starting expression"
                if number == 1
                else "a later line must start with a relation"
            )
            step |= {"valid": False, "why": why}
            previous = None
            continue
        try:
            current = Line(body, assumptions)
        except ProofSyntaxError as exc:
            step |= {"valid": False, "why": str(exc)}
            previous = None
            continue
        except Exception as exc:  # in the worker: whatever a line makes sympy raise is the line's doing
            # sympy failing on the line as written (`2^{0/0}`: NaN compared): the line's fault, not the checker's
            step |= {"valid": False, "why": f"the checker cannot read this line ({type(exc).__name__})"}
            previous = None
            continue
        if relation == "start":
            valid = current.value == goal_left.value
            why = (
                "starts at the goal's left side"
                if valid
                else "does not start at the goal's left side (as written)"
            )
        elif previous is None:
            valid, why = False, "follows an invalid line"
        else:
            try:
                valid, why = step_holds(previous.value, relation, current.value)
                small, rule = step_size(previous, relation, current, (goal_left, goal_right))
            except Exception as exc:  # PolynomialError, NotImplementedError, ...: the step's doing
                valid, why, small, rule = (
                    False,
                    f"the checker cannot handle this step ({type(exc).__name__})",
                    False,
                    "",
                )
            step |= {"small": small, "rule": rule}
            relations.append(relation)
        step |= {"valid": valid, "why": why}
        previous = current
    all_valid = all(step["valid"] for step in report["steps"])
    ends = previous is not None and previous.value == goal_right.value
    chain = compose(relations)
    proved = all_valid and ends and implies(chain, goal_relation)
    report["proved"] = proved
    report["small_steps"] = all(step["small"] for step in report["steps"])
    if not proved:
        if not all_valid:
            report["problem"] = "some steps do not hold"
        elif not ends:
            report["problem"] = "the chain does not end at the goal's right side (as written)"
        else:
            report["problem"] = (
                f"the chain proves {chain or 'nothing (mixed directions)'}, the goal needs {goal_relation}"
            )
    elif not report["small_steps"]:
        report["problem"] = "a step is not one small rewrite of the previous line"
    return report


def check_proof_request(request: dict[str, Any]) -> dict[str, Any]:
    return check_proof(str(request["goal"]), str(request["text"]), request.get("assumptions"))
