"""Unreachable code that holds nothing to check: the one rule both type layers use (a single function's
`report.diagnostics_report` and a whole repository's `repo.type_rules.charged_report`).

pyright reports code it finds unreachable (`reportUnreachable`) and checks none of it, so unreachable
code costs an error, except a block whose statements could not hide a type error:

- `pass`, `break`, `continue`, a docstring or other constant expression;
- a bare `return` or `return None`;
- a bare `raise`, or a `raise` of a named exception called with constants (or names, or f-strings of
  names) only;
- `assert False` (with such a message) and `assert_never(x)` closing an exhaustive branch: what pyright
  reports as unreachable there is the exhaustiveness check itself.

A block is harmless from a statement to its end only if every statement from there on is.
"""

from __future__ import annotations

import ast


def bodies(node: ast.AST) -> list[list[ast.stmt]]:
    """The statement blocks directly under `node` (body, else, finally, handlers, match cases)."""
    found = [getattr(node, name, None) for name in ("body", "orelse", "finalbody")]
    found += [h.body for h in getattr(node, "handlers", [])]
    found += [c.body for c in getattr(node, "cases", [])]
    return [b for b in found if isinstance(b, list) and b and isinstance(b[0], ast.stmt)]


def _constant_like(node: ast.expr | None) -> bool:
    if node is None or isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.JoinedStr):
        return all(
            isinstance(v, ast.Constant)
            or (isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name))
            for v in node.values
        )
    return False


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def nothing_to_check(statement: ast.stmt) -> bool:
    """A statement in which a type error cannot hide."""
    if isinstance(statement, ast.Pass | ast.Break | ast.Continue):
        return True
    if isinstance(statement, ast.Expr):
        value = statement.value
        if isinstance(value, ast.Constant):
            return True
        return (  # assert_never(x) / typing.assert_never(x)
            isinstance(value, ast.Call)
            and _called_name(value.func) == "assert_never"
            and all(isinstance(a, ast.Name) for a in value.args)
            and not value.keywords
        )
    if isinstance(statement, ast.Return):
        return statement.value is None or (
            isinstance(statement.value, ast.Constant) and statement.value.value is None
        )
    if isinstance(statement, ast.Assert):
        return (
            isinstance(statement.test, ast.Constant)
            and not statement.test.value
            and _constant_like(statement.msg)
        )
    if isinstance(statement, ast.Raise):
        exc = statement.exc
        if exc is None or isinstance(exc, ast.Name):
            return statement.cause is None
        return (
            isinstance(exc, ast.Call)
            and isinstance(exc.func, ast.Name)
            and all(_constant_like(a) for a in exc.args)
            and not exc.keywords
            and statement.cause is None
        )
    return False


def harmless_lines(source: str) -> frozenset[int]:
    """Lines where unreachable code starts that holds nothing to check (to the end of its block)."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return frozenset()
    found: set[int] = set()
    for node in ast.walk(module):
        for body in bodies(node):
            for position, statement in enumerate(body):
                if all(nothing_to_check(s) for s in body[position:]):
                    found.add(statement.lineno)
    return frozenset(found)
