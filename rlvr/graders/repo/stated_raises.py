"""Exceptions the reference raises that nothing the agent reads states (issue 31).

A feature task shows the agent a stub and its docstring; a bug task shows the base code. Where the
reference adds a `raise SomeError(...)` to a function the task touches, and neither that function's
docstring in the base state nor the issue text names the exception, a hidden check that expects it
pins a behaviour the agent was never shown (a negative rate rejected where the docstring only says
how a price is computed). `rlvr packs validate` warns about such listed scenarios
(`unstated_raise_warnings`): state the rule in the docstring or the issue, or drop the scenario.
Read in the trusted process from trusted data only (the task's base and reference states).
"""

from __future__ import annotations

import ast
import json
from typing import Any

from rlvr.graders.repo.source_modules import package_functions


def _raised(function: ast.FunctionDef) -> list[str]:
    """The exception names a function's own `raise` statements name (`raise ValueError(...)`)."""
    names: list[str] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            name = (
                exc.attr if isinstance(exc, ast.Attribute) else exc.id if isinstance(exc, ast.Name) else None
            )
            if name is not None and name not in names:
                names.append(name)
    return names


def unstated_raises(base: dict[str, str], reference: dict[str, str], prompt: str) -> dict[str, list[str]]:
    """{target: exception names} where the reference's version of a function raises an exception by
    name that the base's version does not, and neither the base's docstring of it nor the issue
    text names that exception."""
    before, after = package_functions(base), package_functions(reference)
    out: dict[str, list[str]] = {}
    for target, node in after.items():
        old = before.get(target)
        if old is None or ast.dump(old) == ast.dump(node):
            continue
        shown = (ast.get_docstring(old) or "") + "\n" + prompt
        added = [name for name in _raised(node) if name not in _raised(old) and name not in shown]
        if added:
            out[target] = added
    return out


def unstated_raise_warnings(
    task_prompt: str,
    base: dict[str, str],
    reference: dict[str, str],
    checks: list[tuple[int, dict[str, Any], Any]],
) -> list[str]:
    """A warning for each listed call check `(number, scenario, the reference's outcome)` that expects
    an exception `unstated_raises` finds for its target."""
    unstated = unstated_raises(base, reference, task_prompt)
    found: list[str] = []
    for number, scenario, expected in checks:
        if scenario.get("derived") or scenario.get("generated") or scenario.get("kind") != "call":
            continue
        raised = expected.get("raises") if isinstance(expected, dict) else None
        target = str(scenario.get("target"))
        if isinstance(raised, str) and raised in unstated.get(target, []):
            found.append(
                f"hidden check {number} (call {target} {json.dumps(scenario.get('args'))[:60]}) expects "
                f"{raised}, which the reference adds to {target.partition(':')[2]} and neither its "
                "docstring nor the issue text names: the agent cannot know it"
            )
    return found
