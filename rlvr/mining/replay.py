"""Replaying the calls a project's tests make with values that are not plain data.

A mined pack ships this file in its repository as `_rlvr_replay.py` (protected: the agent cannot edit
it). A hidden scenario whose arguments are not JSON data is the call scenario
`{"kind": "call", "target": "_rlvr_replay:call", "args": [spec]}`: the repo child driver calls `call(spec)`
in the grading sandbox, which rebuilds the arguments from `spec` and makes the recorded call, and the
driver turns its result into plain data as for any call. `spec` is
`{"target": "module:qualified", "args": [...], "kwargs": {...}}`, plus `"steps": [[method, args, kwargs], ...]`
for an object (the constructor's arguments, then each method the test called on it, in order).

Encoded values (JSON objects with one `$` key; a plain dict with such a key is itself encoded):
`{"$ref": "module:qualified"}` a function, class or builtin of the package, the standard library or
builtins, recorded by the name it resolves from; `{"$tuple"|"$set"|"$frozenset": [...]}`;
`{"$bytes": hex}`; `{"$module": name}`; `{"$range": [start, stop, step]}`; `{"$dict": [[key, value], ...]}` (keys that are not
strings, or a key starting with `$`); `{"$partial": [func, args, kwargs]}`; `{"$lambda": [source,
{name: value}]}` a lambda of the test file without free variables, rebuilt from its source with the
globals it names.

A result that is an iterator is returned as `{"$items": [the first MAX_ITEMS items], "$more": bool}`
(with `"$raises": name` where iterating raised); iterators inside those items are turned into lists the
same way, so a generator of generators compares by its values. The module imports nothing outside the
standard library and never reads files: it runs in the sandbox, where the recording was replayed first.
"""

from __future__ import annotations

import functools
import importlib
import itertools
from typing import Any

ADAPTER_PATH = "_rlvr_replay.py"  # where a mined pack's repository holds this file
ADAPTER_TARGET = "_rlvr_replay:call"
MAX_ITEMS = 50
MAX_NESTED_ITEMS = 20
MAX_DEPTH = 3


def resolve(name: str) -> Any:
    module_name, _, qualified = name.partition(":")
    value: Any = importlib.import_module(module_name)
    for part in qualified.split("."):
        value = getattr(value, part)
    return value


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        key, inner = next(iter(value.items()))
        if key == "$ref":
            return resolve(str(inner))
        if key == "$module":
            return importlib.import_module(str(inner))
        if key == "$tuple":
            return tuple(decode(item) for item in inner)
        if key == "$set":
            return {decode(item) for item in inner}
        if key == "$frozenset":
            return frozenset(decode(item) for item in inner)
        if key == "$bytes":
            return bytes.fromhex(str(inner))
        if key == "$range":
            return range(*inner)
        if key == "$dict":
            return {decode(k): decode(v) for k, v in inner}
        if key == "$partial":
            function, args, kwargs = inner
            return functools.partial(decode(function), *decode(args), **decode(kwargs))
        if key == "$lambda":
            source, names = inner
            return eval(str(source), {"__builtins__": __builtins__, **decode(names)})  # noqa: S307
    return {key: decode(item) for key, item in value.items()}


def is_iterator(value: Any) -> bool:
    try:
        return hasattr(value, "__next__") and iter(value) is value
    except Exception:  # noqa: BLE001 - a hostile __iter__
        return False


def materialise(value: Any, depth: int = 0) -> Any:
    """`value` with iterators (at the top and inside tuples and lists, a few levels down) as bounded lists."""
    if depth > MAX_DEPTH:
        return value
    if is_iterator(value):
        limit = MAX_ITEMS if depth == 0 else MAX_NESTED_ITEMS
        items: list[Any] = []
        out: dict[str, Any] = {}
        try:
            for item in itertools.islice(value, limit):
                items.append(materialise(item, depth + 1))
            out["$more"] = len(items) == limit and next(value, StopIteration) is not StopIteration
        except Exception as exc:  # noqa: BLE001 - the package's code may raise anything
            out["$raises"] = type(exc).__name__
        out["$items"] = items
        return out
    if type(value) is tuple:
        return tuple(materialise(item, depth + 1) for item in value)
    if type(value) is list:
        return [materialise(item, depth + 1) for item in value]
    return value


def call(spec: dict[str, Any]) -> Any:
    """The recorded call (or object) rebuilt from `spec`; its result with iterators materialised. A
    raised exception propagates (the driver records its name), except inside an object's steps,
    where each step's outcome is {"value": ...} or {"raises": name}."""
    target = resolve(str(spec["target"]))
    args, kwargs = decode(spec.get("args", [])), decode(spec.get("kwargs", {}))
    if "steps" not in spec:
        return materialise(target(*args, **kwargs))
    try:
        instance = target(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001
        return {"init": {"raises": type(exc).__name__}}
    steps: list[dict[str, Any]] = []
    for method, step_args, step_kwargs in spec["steps"]:
        try:
            steps.append(
                {"value": materialise(getattr(instance, method)(*decode(step_args), **decode(step_kwargs)))}
            )
        except Exception as exc:  # noqa: BLE001
            steps.append({"raises": type(exc).__name__})
    return {"steps": steps}


def shown(value: Any) -> str:
    """An encoded value written as the Python a reader would type (for issue texts)."""
    if isinstance(value, list):
        return "[" + ", ".join(shown(item) for item in value) + "]"
    if not isinstance(value, dict):
        return repr(value)
    if len(value) == 1:
        key, inner = next(iter(value.items()))
        if key == "$ref":
            module, _, qualified = str(inner).partition(":")
            return qualified if module == "builtins" else f"{module}.{qualified}"
        if key == "$module":
            return str(inner)
        if key == "$tuple":
            items = [shown(item) for item in inner]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if key in ("$set", "$frozenset"):
            items = ", ".join(shown(item) for item in inner)
            return ("{" + items + "}") if key == "$set" and items else f"{key[1:]}([{items}])"
        if key == "$bytes":
            return repr(bytes.fromhex(str(inner)))
        if key == "$range":
            return "range(" + ", ".join(str(i) for i in inner) + ")"
        if key == "$dict":
            return "{" + ", ".join(f"{shown(k)}: {shown(v)}" for k, v in inner) + "}"
        if key == "$partial":
            function, args, kwargs = inner
            parts = (
                [shown(function)] + [shown(a) for a in args] + [f"{k}={shown(v)}" for k, v in kwargs.items()]
            )
            return "functools.partial(" + ", ".join(parts) + ")"
        if key == "$lambda":
            return str(inner[0])
    return "{" + ", ".join(f"{k!r}: {shown(v)}" for k, v in value.items()) + "}"
