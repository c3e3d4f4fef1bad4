"""Inputs with more digits than a stated rounding keeps (issue 31).

A docstring that says a result is "rounded to 2 places" states a rule that the listed inputs rarely
show: means of 1.0 and 2.5, or amounts with two decimals, come out the same rounded or not. Where a
function the reference changes states such a rounding (in the base's docstring, which the agent
reads), each listed call whose arguments hold floats (and each object scenario of the class whose
method states it, its steps' floats) is made again with every float given one more digit than the
stated places (1.0 as 1.001 for two places), so a result left unrounded, or rounded
to other places, differs. Derived in the trusted process from trusted data only.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from rlvr.graders.repo.source_modules import package_functions

MAX_ROUNDING_CALLS = 6  # per task
WORD_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
PLACES = re.compile(
    r"\bround(?:ed|s|ing)?\b[^.;]{0,40}?\b(\d|one|two|three|four|five|six)\s+(?:decimal\s+)?"
    r"(?:places|digits|decimals)\b",
    re.IGNORECASE,
)


def stated_places(docstring: str) -> int | None:
    """The number of decimal places a docstring says a result is rounded to, or None."""
    match = PLACES.search(docstring)
    if match is None:
        return None
    word = match.group(1).lower()
    return WORD_NUMBERS[word] if word in WORD_NUMBERS else int(word)


def rounded_functions(base: dict[str, str], reference: dict[str, str]) -> dict[str, int]:
    """{"module:function": places} for every top-level function (or method, "module:Class.method")
    the reference defines differently from the base whose base docstring states a rounding."""

    before, after = package_functions(base), package_functions(reference)
    out: dict[str, int] = {}
    for name, node in after.items():
        old = before.get(name)
        if old is None or ast.dump(old) == ast.dump(node):
            continue
        places = stated_places(ast.get_docstring(old) or "")
        if places is not None:
            out[name] = places
    return out


def more_digits(value: Any, places: int, depth: int = 0) -> Any:
    """`value` with every float in it (inside lists, tuples and mappings too) given one digit past
    `places` (1.0 as 1.001 for two places); everything else kept as it is."""
    if depth > 8:
        return value
    if isinstance(value, float):
        return round(value + 10.0 ** -(places + 1), places + 1)
    if isinstance(value, list):
        return [more_digits(item, places, depth + 1) for item in value]
    if isinstance(value, dict):
        return {key: more_digits(item, places, depth + 1) for key, item in value.items()}
    return value


def rounding_checks(
    scenarios: list[dict[str, Any]], base: dict[str, str], reference: dict[str, str]
) -> list[dict[str, Any]]:
    """Each listed call holding a float again with every float given one more digit than the places
    a touched function's docstring states (the fewest stated, if several): calls of the stated
    functions first, then the others (a caller passes its numbers on); at most MAX_ROUNDING_CALLS."""
    stated = rounded_functions(base, reference)
    if not stated:
        return []
    places = min(stated.values())
    calls = [
        s for s in scenarios if s.get("kind") == "call" and not s.get("generated") and not s.get("derived")
    ]
    calls.sort(key=lambda s: str(s.get("target")) not in stated)
    out: list[dict[str, Any]] = []
    for scenario in calls:
        args = list(scenario.get("args") or [])
        changed = more_digits(args, stated.get(str(scenario.get("target")), places))
        if changed != args:
            out.append({**scenario, "args": changed, "derived": "rounding-domain"})
    # an object whose class has a method stating the rounding: every step's floats too
    for scenario in scenarios:
        target = str(scenario.get("target"))
        if scenario.get("kind") != "object" or scenario.get("generated") or scenario.get("derived"):
            continue
        if not any(name.startswith(f"{target}.") for name in stated):
            continue
        steps = [list(step) for step in scenario.get("steps") or []]
        changed_steps = [[method, more_digits(list(args), places)] for method, args in steps]
        if changed_steps != steps:
            out.append({**scenario, "steps": changed_steps, "derived": "rounding-domain"})
    return out[:MAX_ROUNDING_CALLS]
