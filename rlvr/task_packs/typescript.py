"""rlvr's Python -> TypeScript task translator (task data only: it imports no grader or sandbox).

`translate` writes a TypeScript signature and a JSDoc comment for a Python function task. A parameter's
or the result's type comes from the Python annotation where it maps (int/float -> number, bool ->
boolean, str -> string, None -> null, list[T] -> T[], tuple[A, B] -> [A, B], tuple[T, ...] -> T[],
dict[str, V] -> Record<string, V>, Optional[T] -> T | null, unions -> unions), else from the values the
task's own calls pass to and get from the trusted reference (`record_calls` replays the task's `check`,
`record_inputs` runs listed inputs). What does not map raises `Unmappable` with the reason: sets, dicts
with non-string keys, integers beyond 2**53, non-finite floats, values of no consistent type, helper
functions in the prompt, variadic or default parameters.
"""

from __future__ import annotations

import ast
import copy
import inspect
import random
import re
from typing import Any

from rlvr.specs.javascript_values import MAX_SAFE_INTEGER, same_in_javascript

_CHECK_SEED = 1729


class Unmappable(Exception):
    """The task's types have no TypeScript translation here; the message says why."""


# ---------------------------------------------------------------- types from annotations
_SIMPLE = {"int": "number", "float": "number", "bool": "boolean", "str": "string", "None": "null"}


def _wrap(inner: str) -> str:
    return f"({inner})" if "|" in inner else inner


def annotation_type(node: ast.expr | None) -> str:
    if node is None:
        raise Unmappable("no annotation")
    if isinstance(node, ast.Constant) and node.value is None:
        return "null"
    if isinstance(node, ast.Name):
        if node.id in _SIMPLE:
            return _SIMPLE[node.id]
        raise Unmappable(f"type {node.id} does not map")
    if isinstance(node, ast.Attribute):
        raise Unmappable(f"type {ast.unparse(node)} does not map")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return f"{annotation_type(node.left)} | {annotation_type(node.right)}"
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        name = node.value.id
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if name in ("List", "list", "Sequence", "Iterable") and len(args) == 1:
            return _wrap(annotation_type(args[0])) + "[]"
        if name in ("Tuple", "tuple"):
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                return _wrap(annotation_type(args[0])) + "[]"
            return "[" + ", ".join(annotation_type(a) for a in args) + "]"
        if name in ("Dict", "dict") and len(args) == 2:
            if annotation_type(args[0]) != "string":
                raise Unmappable("dict keys that are not strings")
            return f"Record<string, {annotation_type(args[1])}>"
        if name == "Optional" and len(args) == 1:
            return f"{annotation_type(args[0])} | null"
        if name == "Union":
            return " | ".join(annotation_type(a) for a in args)
    raise Unmappable(f"type {ast.unparse(node)} does not map")


# ---------------------------------------------------------------- types from values
def value_type(values: list[Any]) -> str:
    """The TypeScript type of a set of example values (raises Unmappable)."""
    if not values:
        raise Unmappable("no example value shows the type (e.g. only empty lists)")
    nullable = any(v is None for v in values)
    present = [v for v in values if v is not None]
    if not present:
        return "null"
    kinds = {_kind(v) for v in present}
    containers = kinds - {"boolean", "number", "string"}
    if kinds <= {"boolean", "number", "string"}:
        base = " | ".join(sorted(kinds))
    elif len(containers) == 1 and len(kinds) > 1:  # e.g. `string[] | number`
        groups = [[v for v in present if _kind(v) == kind] for kind in sorted(kinds)]
        base = " | ".join(value_type(group) for group in groups)
    elif kinds == {"array"}:
        items = [x for v in present for x in v]
        base = _wrap(value_type(items)) + "[]"
    elif kinds == {"tuple"}:
        lengths = {len(v) for v in present}
        if len(lengths) == 1:
            (length,) = lengths
            base = "[" + ", ".join(value_type([v[i] for v in present]) for i in range(length)) + "]"
        else:
            base = _wrap(value_type([x for v in present for x in v])) + "[]"
    elif kinds == {"record"}:
        base = f"Record<string, {value_type([x for v in present for x in v.values()])}>"
    else:
        raise Unmappable(f"values of no single type ({', '.join(sorted(kinds))})")
    return f"{base} | null" if nullable else base


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise Unmappable("integers beyond 2**53")
        return "number"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise Unmappable("non-finite floats")
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, tuple):
        return "tuple"
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise Unmappable("dict keys that are not strings")
        return "record"
    raise Unmappable(f"values of type {type(value).__name__}")


def _check_values(value: Any) -> None:
    """Every value the task passes or returns must cross JSON unchanged (raises Unmappable)."""
    if value is None:
        return
    kind = _kind(value)
    if kind in ("array", "tuple"):
        for item in value:
            _check_values(item)
    elif kind == "record":
        for item in value.values():
            _check_values(item)


# ---------------------------------------------------------------- recording the task's own calls
def record_inputs(
    reference: str, inputs: list[list[Any]], entry: str
) -> list[tuple[tuple[Any, ...], Any, bool]]:
    """(args, result, raised) of the (trusted) reference on each argument list."""
    namespace: dict[str, Any] = {"__name__": "rlvr_translate"}
    exec(compile(reference, "<reference>", "exec"), namespace)  # trusted task code
    function = namespace[entry]
    calls: list[tuple[tuple[Any, ...], Any, bool]] = []
    for args in inputs:
        try:
            calls.append((tuple(args), function(*copy.deepcopy(args)), False))
        except Exception:
            calls.append((tuple(args), None, True))
    return calls


def record_calls(reference: str, check: str, entry: str) -> list[tuple[tuple[Any, ...], Any, bool]]:
    """(args, result, raised) of every call the task's `check` makes on the (trusted) reference."""
    namespace: dict[str, Any] = {"__name__": "rlvr_translate"}
    exec(compile(reference, "<reference>", "exec"), namespace)  # trusted task code
    function = namespace[entry]
    calls: list[tuple[tuple[Any, ...], Any, bool]] = []

    def recorder(*args: Any) -> Any:
        try:
            value = function(*args)
        except Exception:
            calls.append((args, None, True))
            raise
        calls.append((args, value, False))
        return value

    exec(compile(check, "<check>", "exec"), namespace)
    state = random.getstate()
    random.seed(_CHECK_SEED)
    try:
        namespace["check"](recorder)
    finally:
        random.setstate(state)
    for args, value, raised in calls:
        if not same_in_javascript(function, args, value, raised):
            raise Unmappable(
                "the reference tells arguments apart that JavaScript receives alike "
                f"(int vs integral float, or tuple vs list): {repr(args)[:60]}"
            )
    return calls


# ---------------------------------------------------------------- the prompt
def jsdoc(docstring: str) -> str:
    """The docstring as a JSDoc comment; from the first `>>>` example on, Python's True, False and
    None read as true, false and null."""
    lines = []
    examples = False
    for line in docstring.strip("\n").splitlines():
        text = line.strip()
        examples = examples or text.startswith(">>>")
        if examples:
            text = re.sub(r"\bTrue\b", "true", text)
            text = re.sub(r"\bFalse\b", "false", text)
            text = re.sub(r"\bNone\b", "null", text)
        lines.append(text.replace("*/", "* /"))
    while lines and not lines[-1]:
        lines.pop()
    return "/**\n" + "".join(f" * {line}".rstrip() + "\n" for line in lines) + " */\n"


_STRING_LITERAL = re.compile(r"[rRuU]?(\"\"\"|'''|\"|')(.*)\1", re.S)


def _source_docstring(prompt: str, function: ast.FunctionDef) -> str:
    """The docstring as written in the source, escapes kept: `"a\\nb"` in an example stays the
    two characters `\\n`, as a TypeScript string literal writes them, not a line break. A docstring
    placed after the function's imports (HumanEval/115 opens with `import math`) is the docstring."""
    body = list(function.body)
    while body and isinstance(body[0], ast.Import | ast.ImportFrom):
        body.pop(0)
    first = body[0] if body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
        return ""
    if not isinstance(first.value.value, str):
        return ""
    literal = _STRING_LITERAL.fullmatch(ast.get_source_segment(prompt, first.value) or "")
    if literal is None:  # implicit concatenation: the evaluated text
        return inspect.cleandoc(first.value.value)
    return inspect.cleandoc(literal.group(2))


def translate(prompt: str, entry: str, calls: list[tuple[tuple[Any, ...], Any, bool]]) -> dict[str, str]:
    """{"prompt", "signature"} of the TypeScript task for a Python prompt whose entry point was called
    as `calls` (args, result, raised) on the trusted reference (raises Unmappable)."""
    module = ast.parse(prompt)
    functions = [n for n in module.body if isinstance(n, ast.FunctionDef)]
    if [f.name for f in functions] != [entry]:
        raise Unmappable("the prompt relies on a Python helper function")
    function = functions[0]
    if function.args.vararg or function.args.kwarg or function.args.kwonlyargs or function.args.defaults:
        raise Unmappable("variadic, keyword-only or default parameters")
    if not calls:
        raise Unmappable("no recorded calls to read the types from")
    for args, value, raised in calls:
        _check_values(list(args))
        if not raised:
            _check_values(value)
    parameters = []
    for position, arg in enumerate(function.args.args):
        values = [args[position] for args, _, _ in calls if position < len(args)]
        try:
            kind = annotation_type(arg.annotation)
        except Unmappable:
            kind = value_type(values)
        parameters.append(f"{arg.arg}: {kind}")
    try:
        result = annotation_type(function.returns)
    except Unmappable:
        result = value_type([value for _, value, raised in calls if not raised])
    signature = f"function {entry}({', '.join(parameters)}): {result}"
    docstring = _source_docstring(prompt, function)
    return {"signature": signature, "prompt": jsdoc(docstring) + signature + " {\n"}
