"""Plain-data codec for the sandbox protocol.

Only exact None/bool/int/float/str/list/tuple/dict/set values cross the boundary; anything else —
including subclasses with odd `__eq__` — is refused. The wire form is JSON in which every JSON
object is a tag, so a decoded value is unambiguous:

    float nan/inf      -> {"f": "nan" | "inf" | "-inf"}
    tuple              -> {"t": [...]}
    dict               -> {"d": [[key, value], ...]}
    set / frozenset    -> {"s": [...]} / {"fs": [...]}

The same logic is embedded verbatim in the zygote (which cannot import this package), so keep
both in step: `tests/test_codec.py` checks they agree.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 64


class CodecError(ValueError):
    """A value that is not plain data, or a wire document that is malformed."""


def to_wire(value: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise CodecError("value nested too deeply")
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if kind is float:
        if math.isnan(value):
            return {"f": "nan"}
        if math.isinf(value):
            return {"f": "inf" if value > 0 else "-inf"}
        return value
    if kind is list:
        return [to_wire(v, depth + 1) for v in value]
    if kind is tuple:
        return {"t": [to_wire(v, depth + 1) for v in value]}
    if kind is dict:
        return {"d": [[to_wire(k, depth + 1), to_wire(v, depth + 1)] for k, v in value.items()]}
    if kind is set:
        return {"s": [to_wire(v, depth + 1) for v in value]}
    if kind is frozenset:
        return {"fs": [to_wire(v, depth + 1) for v in value]}
    raise CodecError(f"not plain data: {kind.__name__}")


def from_wire(doc: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise CodecError("document nested too deeply")
    kind = type(doc)
    if doc is None or kind in (bool, int, str, float):
        return doc
    if kind is list:
        return [from_wire(v, depth + 1) for v in doc]
    if kind is dict and len(doc) == 1:
        ((tag, body),) = doc.items()
        if tag == "f" and body in ("nan", "inf", "-inf"):
            return float(body)
        if type(body) is not list:
            raise CodecError(f"malformed tag {tag!r}")
        items = [from_wire(v, depth + 1) for v in body] if tag != "d" else None
        try:
            if tag == "t":
                return tuple(items or [])
            if tag == "s":
                return set(items or [])
            if tag == "fs":
                return frozenset(items or [])
            if tag == "d":
                out: dict[Any, Any] = {}
                for pair in body:
                    if type(pair) is not list or len(pair) != 2:
                        raise CodecError("malformed dict pair")
                    out[from_wire(pair[0], depth + 1)] = from_wire(pair[1], depth + 1)
                return out
        except TypeError as exc:  # unhashable key or element
            raise CodecError(str(exc)) from exc
    raise CodecError("malformed document")


def dumps(value: Any) -> str:
    return json.dumps(to_wire(value), allow_nan=False, separators=(",", ":"))


def loads(text: str | bytes) -> Any:
    try:
        return from_wire(json.loads(text))
    except (json.JSONDecodeError, RecursionError, UnicodeDecodeError) as exc:
        raise CodecError(f"undecodable: {type(exc).__name__}") from exc


def exact_identity(value: Any, depth: int = 0) -> Any:
    """A hashable identity of a plain value that keeps its exact type at every level: `1`, `1.0` and
    `True` are three identities (Python's `==` and hashing make them one); all NaNs are one."""
    if depth > MAX_DEPTH:
        raise CodecError("value nested too deeply")
    kind = type(value)
    if kind is float:
        return ("float", "nan") if math.isnan(value) else ("float", value + 0.0)  # -0.0 is 0.0
    if kind is tuple:
        return ("tuple", tuple(exact_identity(v, depth + 1) for v in value))
    if kind is frozenset:
        return ("frozenset", frozenset(exact_identity(v, depth + 1) for v in value))
    return (kind.__name__, value)


def _identities(container: Any, depth: int) -> dict[Any, Any] | None:
    """Exact identity -> key (or member); None when two keys share an identity or one is too deep."""
    found: dict[Any, Any] = {}
    try:
        for key in container:
            identity = exact_identity(key, depth + 1)
            if identity in found:
                return None
            found[identity] = key
    except CodecError:
        return None
    return found


def same_shape(expected: Any, actual: Any, depth: int = 0) -> bool:
    """Exact-type agreement between a reference result and a candidate result.

    Types must match exactly at every aligned position (bool is not int, int is not float, tuple is
    not list), including dict keys and set members: `{1: x}` and `{1.0: x}`, or `{1}` and `{True}`,
    are equal by `==` but do not have the same shape. Containers whose lengths or keys differ in
    value are compared by their own type only, since the value comparison decides those.
    """
    if depth > MAX_DEPTH or type(expected) is not type(actual):
        return False
    kind = type(expected)
    if kind in (list, tuple) and len(expected) == len(actual):
        return all(same_shape(e, a, depth + 1) for e, a in zip(expected, actual, strict=True))
    if kind is dict:
        typed_e, typed_a = _identities(expected, depth), _identities(actual, depth)
        if typed_e is None or typed_a is None:
            return False
        if typed_e.keys() == typed_a.keys():
            return all(same_shape(expected[typed_e[k]], actual[typed_a[k]], depth + 1) for k in typed_e)
        return expected.keys() != actual.keys()  # equal keys only across types: a type mismatch
    if kind in (set, frozenset):
        typed_e, typed_a = _identities(expected, depth), _identities(actual, depth)
        if typed_e is None or typed_a is None:
            return False
        return typed_e.keys() == typed_a.keys() or expected != actual
    return True
