"""Check a step-by-step derivation with sympy. Runs inside the math worker (rlvr/graders/sympy_worker.py).

A derivation is a chain, one step a line: the first line is an expression, every later line starts with a
relation (`=`, `<=`, `<`, `>=`, `>`, or `≤ ≥`) followed by an expression. Text after `#` is a comment.
Expressions are plain or LaTeX math (`(a+b)^2`, `2ab`, `\\frac{a}{b}`, `sqrt(x)`), parsed by latex2sympy (no
`eval` of untrusted text). Each step is checked on its own:
- `=`: the difference simplifies to 0 (sympy `simplify`, then `equals`);
- `<=`/`<`/`>=`/`>`: the difference (right minus left, or the reverse) is provably non-negative / positive
  under the task's assumptions (sympy's assumption system on the simplified, factored and expanded forms).
The chain proves the goal `L REL R` when it starts at L, ends at R, every step holds, and the composed
relation implies REL (all `=` for an equation; same direction, and a strict step for `<`/`>`).
"""

from __future__ import annotations

import re
from typing import Any

import sympy
from latex2sympy2_extended import latex2sympy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig

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
_RELATION_AT_START = re.compile(r"^\s*(\\leq|\\geq|\\le|\\ge|<=|>=|≤|≥|=|<|>)\s*(.*)$")
_GOAL_SPLIT = re.compile(r"(\\leq|\\geq|\\le|\\ge|<=|>=|≤|≥|=|<|>)")
_FUNCTIONS = re.compile(r"(?<![\\A-Za-z])(sin|cos|tan|log|ln|exp)(?=\s*[({])")
_SQRT = re.compile(r"(?<!\\)\bsqrt\s*\(([^()]*)\)")
_CONVERSION = ConversionConfig(lowercase_symbols=False)
ASSUMPTIONS = {"real": {"real": True}, "positive": {"positive": True}, "nonnegative": {"nonnegative": True}}


class ProofSyntaxError(ValueError):
    pass


def parse_math(text: str, assumptions: dict[str, dict[str, bool]]) -> Any:
    source = text.strip().strip("$").strip()
    if not source or len(source) > MAX_LINE_CHARS:
        raise ProofSyntaxError("empty or too long expression")
    source = source.replace("**", "^").replace("·", "\\cdot ").replace("−", "-")
    source = _SQRT.sub(r"\\sqrt{\1}", source)
    source = _FUNCTIONS.sub(r"\\\1", source)
    try:
        expr = latex2sympy(source, conversion_config=_CONVERSION)
    except Exception as exc:
        raise ProofSyntaxError(f"cannot parse {text.strip()[:80]!r}") from exc
    if not isinstance(expr, sympy.Expr):
        raise ProofSyntaxError(f"not an expression: {text.strip()[:80]!r}")
    default = assumptions.get("*", {"real": True})
    symbols: list[Any] = list(expr.free_symbols)
    return expr.xreplace({s: sympy.Symbol(s.name, **assumptions.get(s.name, default)) for s in symbols})


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


def parse_goal(goal: str, assumptions: dict[str, dict[str, bool]]) -> tuple[Any, str, Any]:
    parts = _GOAL_SPLIT.split(goal)
    if len(parts) != 3:
        raise ProofSyntaxError("the goal must be `left RELATION right` with one relation")
    return parse_math(parts[0], assumptions), RELATIONS[parts[1]], parse_math(parts[2], assumptions)


def split_lines(text: str) -> list[str]:
    lines = [line.split("#", 1)[0].rstrip() for line in text.splitlines()]
    return [line for line in lines if line.strip()]


def check_proof(goal: str, text: str, assumption_spec: dict[str, str] | None = None) -> dict[str, Any]:
    """Per-step validity and whether the whole chain proves the goal (plain data, JSON-ready)."""
    assumptions = {name: ASSUMPTIONS[kind] for name, kind in (assumption_spec or {}).items()}
    goal_left, goal_relation, goal_right = parse_goal(goal, assumptions)
    lines = split_lines(text)
    report: dict[str, Any] = {"steps": [], "proved": False, "problem": ""}
    if not lines:
        report["problem"] = "no derivation lines"
        return report
    if len(lines) > MAX_LINES:
        report["problem"] = f"more than {MAX_LINES} lines"
        return report
    previous: Any = None
    relations: list[str] = []
    for number, line in enumerate(lines, start=1):
        match = _RELATION_AT_START.match(line)
        relation, body = (RELATIONS[match.group(1)], match.group(2)) if match else ("start", line)
        if (number == 1) != (relation == "start"):
            why = (
                "the first line is the starting expression"
                if number == 1
                else "a later line must start with a relation"
            )
            report["steps"].append({"line": number, "relation": relation, "valid": False, "why": why})
            previous = None
            continue
        try:
            current = parse_math(body, assumptions)
        except ProofSyntaxError as exc:
            report["steps"].append({"line": number, "relation": relation, "valid": False, "why": str(exc)})
            previous = None
            continue
        if relation == "start":
            valid, why = step_holds(current, "=", goal_left)
            why = "starts at the goal's left side" if valid else "does not start at the goal's left side"
        elif previous is None:
            valid, why = False, "follows an invalid line"
        else:
            valid, why = step_holds(previous, relation, current)
            relations.append(relation)
        report["steps"].append({"line": number, "relation": relation, "valid": valid, "why": why})
        previous = current
    all_valid = all(step["valid"] for step in report["steps"])
    ends = previous is not None and step_holds(previous, "=", goal_right)[0]
    chain = compose(relations)
    proved = all_valid and ends and implies(chain, goal_relation)
    report["proved"] = proved
    if not proved:
        if not all_valid:
            report["problem"] = "some steps do not hold"
        elif not ends:
            report["problem"] = "the chain does not end at the goal's right side"
        else:
            report["problem"] = (
                f"the chain proves {chain or 'nothing (mixed directions)'}, the goal needs {goal_relation}"
            )
    return report


def check_proof_request(request: dict[str, Any]) -> dict[str, Any]:
    return check_proof(str(request["goal"]), str(request["text"]), request.get("assumptions"))
