"""How a plain Python value looks to a JavaScript program that receives it as JSON, shared by the
TypeScript pack translator and the TypeScript grader's oracle."""

from __future__ import annotations

from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1


def js_view(value: Any) -> Any:
    """`value` as a JavaScript program receives it through JSON: integral floats are integers (3.0
    is 3), tuples are lists."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    if isinstance(value, list | tuple):
        return [js_view(v) for v in value]
    if isinstance(value, dict):
        return {k: js_view(v) for k, v in value.items()}
    return value


def blurred(value: Any) -> bool:
    """Whether JSON changes `value` on its way to JavaScript (an integral float or a tuple in it)."""
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, tuple):
        return True
    if isinstance(value, list):
        return any(blurred(v) for v in value)
    if isinstance(value, dict):
        return any(blurred(v) for v in value.values())
    return False


def same_in_javascript(function: Any, args: tuple[Any, ...], value: Any, raised: bool) -> bool:
    """Whether the (trusted) reference answers the arguments as JavaScript receives them (`js_view`)
    as it answers the arguments themselves; where it does not (e.g. `f(3.0) != f(3)`, or a tuple
    argument read differently from a list), no TypeScript program can pass the call."""
    if not blurred(list(args)):
        return True
    try:
        other = function(*js_view(list(args)))
    except Exception:
        return raised
    return not raised and js_view(other) == js_view(value)
