"""When does a candidate's result agree with the reference's? Types where the task fixes them, values always.

The result type comes from trusted task source only: the entry point's return annotation in the
reference (or the prompt), else a `:rtype:` / `Returns:` line of its docstring. Never from the candidate.

Rules (recursive over list/tuple elements, dict keys and values, set members):
  * `bool` never agrees with a number, whatever the annotation (`True == 1` is not agreement).
  * Containers keep their exact type (list is not tuple, set is not frozenset), except where the
    annotation says `Sequence`/`Iterable`/`Collection` (list or tuple).
  * Numbers where the type says `float`, or where nothing fixes the type: `int` and `float` are
    interchangeable if their values agree. Where the type says `int`, only an `int` agrees.
  * Floats agree to a relative 1e-9 (absolute 1e-12): a reordered sum is still a correct sum.
    NaN agrees only with NaN; inf only with inf of the same sign; -0.0 agrees with 0.0 (they are
    equal numbers). Two ints compare exactly (also huge ones); an int too big for a float never
    agrees with a float. These number rules are `NumberRule`, written once: a family that needs
    other tolerances (a program judge's `{"float": 1e-6}`) passes its own rule, never its own code.
  * Every comparison is total: any plain value of any size or depth gives True or False, never an
    exception (beyond `MAX_DEPTH` levels nothing agrees).
  * Dict keys and set members are identities, matched by exact type (`{1: x}`, `{1.0: x}` and
    `{True: x}` are three different answers), except that under a `float` key/member type an int is
    read as the equal float.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 64
REL_TOLERANCE = 1e-9
ABS_TOLERANCE = 1e-12

_NUMBERS = (int, float)
_SCALARS = {"int": int, "float": float, "bool": bool, "str": str, "bytes": bytes}
_CONTAINERS = {
    "list": "list",
    "List": "list",
    "MutableSequence": "list",
    "tuple": "tuple",
    "Tuple": "tuple",
    "dict": "dict",
    "Dict": "dict",
    "Mapping": "dict",
    "MutableMapping": "dict",
    "DefaultDict": "dict",
    "OrderedDict": "dict",
    "set": "set",
    "Set": "set",
    "MutableSet": "set",
    "frozenset": "frozenset",
    "FrozenSet": "frozenset",
    "AbstractSet": "set",
    "Sequence": "sequence",
    "Iterable": "sequence",
    "Collection": "sequence",
    "Iterator": "sequence",
    "Generator": "sequence",
}


@dataclass(frozen=True)
class ResultType:
    """A result type as far as the task fixes it. `kind` is "any" (not fixed), a scalar ("int",
    "float", "bool", "str", "bytes", "none"), a container ("list", "tuple", "dict", "set",
    "frozenset", "sequence") with element types in `args`, or "union" of `args`."""

    kind: str = "any"
    args: tuple[ResultType, ...] = ()
    variadic: bool = False  # tuple[X, ...]

    def arg(self, index: int) -> ResultType:
        return self.args[index] if index < len(self.args) else ANY

    def describe(self) -> str:
        if not self.args:
            return self.kind
        inner = ", ".join(a.describe() for a in self.args) + (", ..." if self.variadic else "")
        return f"{self.kind}[{inner}]"


ANY = ResultType()


@dataclass(frozen=True)
class NumberRule:
    """When two numbers (not bools) agree. Two ints always compare exactly. Otherwise both are read
    as floats (an int beyond float range agrees with no float): NaN only with NaN, an infinity only
    with itself, finite values within `abs_tol` or within `rel_tol` relative to the larger magnitude,
    or, with `relative_to_expected`, to the expected value's (the usual judge rule)."""

    rel_tol: float = REL_TOLERANCE
    abs_tol: float = ABS_TOLERANCE
    relative_to_expected: bool = False

    @classmethod
    def judge(cls, tolerance: float) -> NumberRule:
        """A judge's `{"float": tolerance}`: absolute or relative to the expected value; 0 is exact."""
        return cls(tolerance, tolerance, relative_to_expected=True)


DEFAULT_NUMBERS = NumberRule()


# ------------------------------------------------------------------------------ deriving the type
def result_type(sources: list[str], function: str) -> ResultType:
    """The result type of `function` as the first trusted source that defines it fixes it."""
    for source in sources:
        try:
            module = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            continue
        definition = next(
            (
                node
                for node in ast.walk(module)
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == function
            ),
            None,
        )
        if definition is None:
            continue
        if definition.returns is not None:
            return annotation_type(definition.returns)
        docstring = ast.get_docstring(definition) or ""
        stated = _docstring_type(docstring)
        return stated if stated != ANY else examples_type(docstring, function)
    return ANY


def annotation_type(node: ast.expr, depth: int = 0) -> ResultType:
    """A `ResultType` from an annotation expression; anything not understood is "any"."""
    if depth > MAX_DEPTH:
        return ANY
    if isinstance(node, ast.Constant):
        if node.value is None:
            return ResultType("none")
        if isinstance(node.value, str):  # a forward reference: "List[int]"
            try:
                return annotation_type(ast.parse(node.value, mode="eval").body, depth + 1)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return ANY
        return ANY
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([annotation_type(node.left, depth + 1), annotation_type(node.right, depth + 1)])
    if isinstance(node, ast.Name | ast.Attribute):
        return _named(_name(node), ())
    if isinstance(node, ast.Subscript):
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        name = _name(node.value)
        if name == "Literal":
            return _union([_literal_type(item) for item in items])
        if name == "Annotated":
            return annotation_type(items[0], depth + 1) if items else ANY
        variadic = (
            name in ("tuple", "Tuple")
            and len(items) == 2
            and isinstance(items[1], ast.Constant)
            and items[1].value is Ellipsis
        )
        args = [annotation_type(item, depth + 1) for item in (items[:1] if variadic else items)]
        return _named(name, tuple(args), variadic)
    return ANY


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr  # typing.List, t.Dict, collections.abc.Sequence
    return ""


def _named(name: str, args: tuple[ResultType, ...], variadic: bool = False) -> ResultType:
    if name in _SCALARS:
        return ResultType(name)
    if name == "None":
        return ResultType("none")
    if name == "Optional":
        return _union([*args, ResultType("none")])
    if name == "Union":
        return _union(list(args))
    if name in _CONTAINERS:
        kind = _CONTAINERS[name]
        if kind == "sequence" and name == "Generator":
            args = args[:1]
        return ResultType(kind, args, variadic)
    return ANY  # Any, object, TypeVars, classes, Callable...: the type is not fixed here


def _literal_type(node: ast.expr) -> ResultType:
    if isinstance(node, ast.Constant):
        if node.value is None:
            return ResultType("none")
        name = type(node.value).__name__
        return ResultType(name) if name in _SCALARS else ANY
    return ANY


def _union(members: list[ResultType]) -> ResultType:
    flat: list[ResultType] = []
    for member in members:
        for item in member.args if member.kind == "union" else (member,):
            if item.kind == "any":
                return ANY  # Union[int, Any] fixes nothing
            if item not in flat:
                flat.append(item)
    return flat[0] if len(flat) == 1 else ResultType("union", tuple(flat))


_RTYPE = re.compile(r":rtype:\s*(.+)")
_RETURNS_SECTION = re.compile(
    r"^\s*Returns?\s*:?\s*\n(?:\s*-+\s*\n)?\s*([A-Za-z_][\w\[\], .|]*?)\s*(?::|$)", re.M
)


def _docstring_type(docstring: str) -> ResultType:
    """`:rtype: X`, or a Google/NumPy `Returns:` section that starts with a type."""
    match = _RTYPE.search(docstring) or _RETURNS_SECTION.search(docstring)
    if match is None:
        return ANY
    try:
        return annotation_type(ast.parse(match.group(1).strip(), mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ANY


_EXAMPLE_ARROW = re.compile(r"(?:==>|==|➞|=>|->|\bshould return\b|\breturns?\b)\s*(.+?)\s*$")


def examples_type(docstring: str, function: str) -> ResultType:
    """The type the docstring's examples show for every result (`>>> f(x)` + output line, or
    `f(x) == out`, `f(x) ➞ out`, ...), where they all agree; "any" where they do not or there are none.
    Ints and floats together read as "float"."""
    outputs: list[str] = []
    lines = docstring.splitlines()
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(">>>") and function in stripped:
            following = next((n.strip() for n in lines[index + 1 :] if n.strip()), "")
            if following and not following.startswith(">>>"):
                outputs.append(following)
        elif stripped.startswith(f"{function}(") or f" {function}(" in stripped:
            match = _EXAMPLE_ARROW.search(stripped[stripped.index(f"{function}(") :])
            if match:
                outputs.append(match.group(1).rstrip(".,;"))
    merged: ResultType | None = None
    for output in outputs[:50]:
        try:
            value = ast.literal_eval(output)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return ANY  # an example whose result is not a literal: its type is not shown
        merged = _merge(merged, value_type(value))
    return merged if merged is not None else ANY


def value_type(value: Any, depth: int = 0) -> ResultType:
    """The type a literal example value shows (containers' element types merged)."""
    kind = type(value)
    if depth > MAX_DEPTH:
        return ANY
    if value is None:
        return ResultType("none")
    if kind.__name__ in _SCALARS:
        return ResultType(kind.__name__)
    if kind is tuple:
        return ResultType("tuple", tuple(value_type(v, depth + 1) for v in value))
    if kind in (list, set, frozenset):
        merged: ResultType | None = None
        for item in value:
            merged = _merge(merged, value_type(item, depth + 1))
        return ResultType(kind.__name__, (merged,) if merged is not None else ())
    if kind is dict:
        keys: ResultType | None = None
        values: ResultType | None = None
        for key, item in value.items():
            keys, values = (
                _merge(keys, value_type(key, depth + 1)),
                _merge(values, value_type(item, depth + 1)),
            )
        return ResultType("dict", (keys, values) if keys is not None and values is not None else ())
    return ANY


def _merge(first: ResultType | None, second: ResultType) -> ResultType:
    if first is None or first == second:
        return second
    if {first.kind, second.kind} == {"int", "float"}:
        return ResultType("float")
    if first.kind != second.kind or first.kind in ("any", "union"):
        return ANY
    if not first.args or not second.args:  # an empty container shows no element type
        return first if first.args else second
    if len(first.args) != len(second.args):
        return ResultType(first.kind) if first.kind != "tuple" else ANY
    return ResultType(first.kind, tuple(_merge(a, b) for a, b in zip(first.args, second.args, strict=True)))


# ------------------------------------------------------------------------------ comparing values
def agrees(
    expected_type: ResultType, expected: Any, actual: Any, numbers: NumberRule = DEFAULT_NUMBERS
) -> bool:
    """Types (as far as `expected_type` fixes them) and values agree."""
    return _walk(expected_type, expected, actual, 0, values=True, numbers=numbers)


def same_types(expected_type: ResultType, expected: Any, actual: Any) -> bool:
    """Only the types agree (values may differ: a task's own check decides those)."""
    return _walk(expected_type, expected, actual, 0, values=False)


def numbers_agree(expected: int | float, actual: int | float, rule: NumberRule = DEFAULT_NUMBERS) -> bool:
    """`rule` applied to two numbers (see `NumberRule`)."""
    if type(expected) is int and type(actual) is int:
        return expected == actual
    try:
        e, a = float(expected), float(actual)
    except OverflowError:  # an int beyond float range is no float's equal
        return False
    if math.isnan(e) or math.isnan(a):
        return math.isnan(e) and math.isnan(a)
    if math.isinf(e) or math.isinf(a):
        return e == a
    difference = abs(e - a)  # inf when the two are further apart than float range: no agreement
    if difference <= rule.abs_tol:
        return True
    scale = abs(e) if rule.relative_to_expected else max(abs(e), abs(a))
    return difference <= rule.rel_tol * scale


def _fits(expected_type: ResultType, value: Any) -> bool:
    """Whether the reference's own value fits the stated type at this position (if not, the
    annotation is wrong there, and the reference's value is what counts)."""
    kind, value_type = expected_type.kind, type(value)
    if kind in ("any", "union"):
        return True
    if kind == "none":
        return value is None
    if kind == "float":
        return value_type in _NUMBERS
    if kind in _SCALARS:
        return value_type is _SCALARS[kind]
    if kind == "sequence":
        return value_type in (list, tuple)
    return value_type.__name__ == kind


def _walk(
    expected_type: ResultType,
    expected: Any,
    actual: Any,
    depth: int,
    *,
    values: bool,
    numbers: NumberRule = DEFAULT_NUMBERS,
) -> bool:
    if depth > MAX_DEPTH:
        return False
    if expected_type.kind == "union":
        members = [m for m in expected_type.args if _fits(m, expected)]
        return (
            any(_walk(m, expected, actual, depth, values=values, numbers=numbers) for m in members)
            if members
            else (_walk(ANY, expected, actual, depth, values=values, numbers=numbers))
        )
    if not _fits(expected_type, expected):
        expected_type = ANY
    kind = expected_type.kind
    e_type, a_type = type(expected), type(actual)
    if e_type is bool or a_type is bool:
        return e_type is a_type and (not values or expected == actual)
    if e_type in _NUMBERS and a_type in _NUMBERS:
        if e_type is not a_type and kind not in ("float", "any"):
            return False
        return not values or numbers_agree(expected, actual, numbers)
    if e_type is not a_type and not (kind == "sequence" and a_type in (list, tuple)):
        return False
    if expected is None or e_type in (str, bytes):
        return not values or expected == actual
    if e_type in (list, tuple):
        if len(expected) != len(actual):
            return not values
        return all(
            _walk(_element_type(expected_type, i), e, a, depth + 1, values=values, numbers=numbers)
            for i, (e, a) in enumerate(zip(expected, actual, strict=True))
        )
    if e_type is dict:
        return _dicts(expected_type, expected, actual, depth, values=values, numbers=numbers)
    if e_type in (set, frozenset):
        member_type = expected_type.arg(0)
        typed_e = _typed_keys(expected, member_type, depth)
        typed_a = _typed_keys(actual, member_type, depth)
        if typed_e is None or typed_a is None:
            return False
        if set(typed_e) == set(typed_a):
            return True
        return not values and expected != actual  # equal only by `==` across types: a type mismatch
    return False  # not plain data


def _element_type(container: ResultType, index: int) -> ResultType:
    if container.kind == "tuple" and not container.variadic:
        return container.args[index] if len(container.args) > index else ANY
    return container.arg(0)


def _dicts(
    expected_type: ResultType,
    expected: dict[Any, Any],
    actual: dict[Any, Any],
    depth: int,
    *,
    values: bool,
    numbers: NumberRule,
) -> bool:
    key_type, value_type = expected_type.arg(0), expected_type.arg(1)
    typed_e = _typed_keys(expected, key_type, depth)
    typed_a = _typed_keys(actual, key_type, depth)
    if typed_e is None or typed_a is None:
        return False
    if typed_e.keys() != typed_a.keys():
        return not values and expected.keys() != actual.keys()  # equal only across types: mismatch
    return all(
        _walk(
            value_type,
            expected[typed_e[key]],
            actual[typed_a[key]],
            depth + 1,
            values=values,
            numbers=numbers,
        )
        for key in typed_e
    )


def _typed_keys(container: Any, key_type: ResultType, depth: int) -> dict[Any, Any] | None:
    """Each key (or member) under its exact-type identity -> the key itself; None if two keys
    collapse into one identity (only possible with NaN or float keys under a float type)."""
    typed: dict[Any, Any] = {}
    try:
        for key in container:
            identity = typed_identity(key, key_type, depth + 1)
            if identity in typed:
                return None
            typed[identity] = key
    except ValueError:  # nested too deeply
        return None
    return typed


def typed_identity(value: Any, value_type: ResultType = ANY, depth: int = 0) -> Any:
    """A hashable identity of a plain value that keeps its exact type at every level: 1, 1.0 and
    True are three identities (1 and 1.0 are one under a `float` type); all NaNs are one."""
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deeply")
    kind = type(value)
    if kind is int and value_type.kind == "float":
        try:
            return ("float", float(value))
        except OverflowError:
            return ("int", value)
    if kind is float:
        return ("float", "nan") if math.isnan(value) else ("float", value + 0.0)
    if kind is tuple:
        return (
            "tuple",
            tuple(typed_identity(v, _element_type(value_type, i), depth + 1) for i, v in enumerate(value)),
        )
    if kind is frozenset:
        return ("frozenset", frozenset(typed_identity(v, value_type.arg(0), depth + 1) for v in value))
    return (kind.__name__, value)
