"""Input domains for hidden property tests: inferred from seed inputs (and type hints), turned
into boundary-biased hypothesis strategies.

A `Shape` describes the *valid* values of one argument as the task's own examples exhibit them:
the integer range and sign, the string alphabet and lengths, whether lists were ever empty,
sorted or free of duplicates, and so on. Generated inputs stay inside that domain, so a program
that is correct on the task's stated inputs is never judged on inputs the task never promised.
"""

from __future__ import annotations

import math
import random
import string
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

MAX_LIST = 24
MAX_TEXT = 40

_CATEGORIES = (
    (string.ascii_lowercase, 8),
    (string.ascii_uppercase, 8),
    (string.digits, 5),
)


@dataclass(frozen=True)
class Shape:
    """Base class of argument domains."""

    def strategy(self) -> st.SearchStrategy[Any]:
        raise NotImplementedError

    def boundary(self) -> list[Any]:
        """A few extreme valid values (smallest, largest, empty, all-equal)."""
        return []

    def accepts(self, value: Any) -> bool:
        """Whether `value` lies inside this domain (used to keep mutated seeds valid)."""
        raise NotImplementedError

    def sample(self, rng: random.Random, size: int | None = None) -> Any:
        """A random valid value (of `size` elements, for sized domains); used for growth inputs."""
        raise NotImplementedError


@dataclass(frozen=True)
class NoneShape(Shape):
    def strategy(self) -> st.SearchStrategy[Any]:
        return st.none()

    def accepts(self, value: Any) -> bool:
        return value is None

    def sample(self, rng: random.Random, size: int | None = None) -> Any:
        return None

    def boundary(self) -> list[Any]:
        return [None]


@dataclass(frozen=True)
class BoolShape(Shape):
    def strategy(self) -> st.SearchStrategy[Any]:
        return st.booleans()

    def accepts(self, value: Any) -> bool:
        return type(value) is bool

    def sample(self, rng: random.Random, size: int | None = None) -> Any:
        return rng.random() < 0.5

    def boundary(self) -> list[Any]:
        return [False, True]


@dataclass(frozen=True)
class IntShape(Shape):
    low: int
    high: int

    def strategy(self) -> st.SearchStrategy[Any]:
        edges = [v for v in (self.low, self.high, 0, 1, -1, 2) if self.low <= v <= self.high]
        # small values are where off-by-one and boundary bugs show (n = 4 is the first composite)
        small = st.integers(max(self.low, -32), min(self.high, max(self.low, -32) + 64))
        options = [st.sampled_from(edges), st.integers(self.low, self.high)]
        if max(self.low, -32) <= min(self.high, max(self.low, -32) + 64):
            options.insert(1, small)
        return st.one_of(*options)

    def accepts(self, value: Any) -> bool:
        return type(value) is int and self.low <= value <= self.high

    def sample(self, rng: random.Random, size: int | None = None) -> Any:
        return rng.randint(self.low, self.high)

    def boundary(self) -> list[Any]:
        return sorted({v for v in (self.low, self.high, 0, 1) if self.low <= v <= self.high})


@dataclass(frozen=True)
class FloatShape(Shape):
    low: float
    high: float
    integral: bool = False  # every seed float was a whole number (e.g. 2.0)

    def strategy(self) -> st.SearchStrategy[Any]:
        edges = [v for v in (self.low, self.high, 0.0, 1.0, -1.0, 0.5) if self.low <= v <= self.high]
        options = [st.sampled_from(edges)]
        if math.ceil(self.low) <= math.floor(self.high):
            options.append(st.integers(math.ceil(self.low), math.floor(self.high)).map(float))
        low4, high4 = math.ceil(self.low * 4), math.floor(self.high * 4)
        if not self.integral and low4 <= high4:
            # quarters are exact in binary, so generated inputs hit exact ties (a - b == t) that
            # decimal fractions such as 0.1 would miss by a rounding error
            options.append(st.integers(low4, high4).map(lambda v: v / 4))
        low10, high10 = math.ceil(self.low * 10), math.floor(self.high * 10)
        if not self.integral and low10 <= high10:
            options.append(st.integers(low10, high10).map(lambda v: v / 10))
        if not self.integral and self.low < self.high:  # arbitrary floats: no accidental ties
            options.append(st.floats(self.low, self.high, allow_nan=False, allow_infinity=False))
        return st.one_of(*options)

    def accepts(self, value: Any) -> bool:
        if type(value) is not float or not self.low <= value <= self.high:
            return False
        return value == int(value) if self.integral else True

    def sample(self, rng: random.Random, size: int | None = None) -> Any:
        value = rng.uniform(self.low, self.high)
        value = float(round(value)) if self.integral else round(value, 3)
        return min(self.high, max(self.low, value))

    def boundary(self) -> list[Any]:
        return sorted({v for v in (self.low, self.high, 0.0) if self.low <= v <= self.high})


@dataclass(frozen=True)
class TextShape(Shape):
    alphabet: str
    min_size: int
    max_size: int

    def strategy(self) -> st.SearchStrategy[Any]:
        if not self.alphabet:
            return st.just("")
        return st.text(alphabet=self.alphabet, min_size=self.min_size, max_size=self.max_size)

    def accepts(self, value: Any) -> bool:
        return (
            type(value) is str
            and len(value) >= self.min_size  # longer than generated is fine: mutated seeds may be
            and all(c in self.alphabet for c in value)
        )

    def sample(self, rng: random.Random, size: int | None = None) -> Any:
        if not self.alphabet:
            return ""
        length = rng.randint(self.min_size, self.max_size) if size is None else size
        return "".join(rng.choice(self.alphabet) for _ in range(length))

    def boundary(self) -> list[Any]:
        out = [""] if self.min_size == 0 else []
        if self.alphabet:
            first = self.alphabet[0]
            out += [first * max(1, self.min_size), self.alphabet[-1] * max(1, self.min_size)]
        return out


@dataclass(frozen=True)
class ListShape(Shape):
    item: Shape
    min_size: int
    max_size: int
    ordered: bool = False  # every seed list of length >= 3 was sorted ascending
    distinct: bool = False  # no seed list of length >= 4 had a duplicate

    def strategy(self) -> st.SearchStrategy[Any]:
        items = st.lists(
            self.item.strategy(),
            min_size=self.min_size,
            max_size=self.max_size,
            unique_by=_key if self.distinct else None,
        )
        if self.ordered:
            items = items.map(_sorted_or_same)
        return items

    def accepts(self, value: Any) -> bool:
        if type(value) is not list or len(value) < self.min_size:
            return False
        if not all(self.item.accepts(v) for v in value):
            return False
        if self.ordered and not _is_sorted(value):
            return False
        return not self.distinct or len({_key(v) for v in value}) == len(value)

    def sample(self, rng: random.Random, size: int | None = None) -> Any:
        length = rng.randint(self.min_size, self.max_size) if size is None else size
        values: list[Any] = []
        seen: set[str] = set()
        for _ in range(length * 20):
            if len(values) >= length:
                break
            value = self.item.sample(rng)
            if self.distinct:
                if _key(value) in seen:
                    continue
                seen.add(_key(value))
            values.append(value)
        return _sorted_or_same(values) if self.ordered else values

    def boundary(self) -> list[Any]:
        out: list[Any] = [[]] if self.min_size == 0 else []
        for value in self.item.boundary()[:3]:
            out.append([value] * max(1, self.min_size))
            if not self.distinct and self.min_size <= 3 <= self.max_size:
                out.append([value] * 3)  # ties
        return out


@dataclass(frozen=True)
class TupleShape(Shape):
    items: tuple[Shape, ...]

    def strategy(self) -> st.SearchStrategy[Any]:
        return st.tuples(*(s.strategy() for s in self.items))

    def accepts(self, value: Any) -> bool:
        return (
            type(value) is tuple
            and len(value) == len(self.items)
            and all(s.accepts(v) for s, v in zip(self.items, value, strict=True))
        )

    def sample(self, rng: random.Random, size: int | None = None) -> Any:
        return tuple(s.sample(rng) for s in self.items)

    def boundary(self) -> list[Any]:
        firsts = [s.boundary() for s in self.items]
        if all(firsts):
            return [tuple(b[0] for b in firsts)]
        return []


@dataclass(frozen=True)
class DictShape(Shape):
    key: Shape
    value: Shape
    min_size: int
    max_size: int

    def strategy(self) -> st.SearchStrategy[Any]:
        return st.dictionaries(
            self.key.strategy(), self.value.strategy(), min_size=self.min_size, max_size=self.max_size
        )

    def accepts(self, value: Any) -> bool:
        return (
            type(value) is dict
            and self.min_size <= len(value) <= self.max_size
            and all(self.key.accepts(k) and self.value.accepts(v) for k, v in value.items())
        )

    def sample(self, rng: random.Random, size: int | None = None) -> Any:
        length = rng.randint(self.min_size, self.max_size) if size is None else size
        return {self.key.sample(rng): self.value.sample(rng) for _ in range(length)}

    def boundary(self) -> list[Any]:
        return [{}] if self.min_size == 0 else []


@dataclass(frozen=True)
class AnyOf(Shape):
    options: tuple[Shape, ...] = field(default_factory=tuple)

    def strategy(self) -> st.SearchStrategy[Any]:
        return st.one_of(*(s.strategy() for s in self.options))

    def accepts(self, value: Any) -> bool:
        return any(s.accepts(value) for s in self.options)

    def sample(self, rng: random.Random, size: int | None = None) -> Any:
        return rng.choice(self.options).sample(rng, size)

    def boundary(self) -> list[Any]:
        return [v for s in self.options for v in s.boundary()[:2]]


def _key(value: Any) -> Any:
    return repr(value)


def _sorted_or_same(values: list[Any]) -> list[Any]:
    try:
        return sorted(values)
    except TypeError:
        return values


# ---------------------------------------------------------------------------- inference from seeds
def _kind(value: Any) -> str:
    return type(value).__name__


def infer_shape(values: Sequence[Any]) -> Shape | None:
    """The domain the seed values exhibit, or None when they are not plain data we can vary."""
    if not values:
        return None
    kinds: dict[str, list[Any]] = {}
    for value in values:
        kinds.setdefault(_kind(value), []).append(value)
    shapes = [_infer_kind(kind, group) for kind, group in sorted(kinds.items())]
    if any(s is None for s in shapes):
        return None
    concrete = [s for s in shapes if s is not None]
    return concrete[0] if len(concrete) == 1 else AnyOf(tuple(concrete))


def _infer_kind(kind: str, values: list[Any]) -> Shape | None:
    if kind == "NoneType":
        return NoneShape()
    if kind == "bool":
        return BoolShape()
    if kind == "int":
        return _int_shape(values)
    if kind == "float":
        return _float_shape(values)
    if kind == "str":
        return _text_shape(values)
    if kind == "list":
        return _list_shape(values)
    if kind == "tuple":
        lengths = {len(v) for v in values}
        if len(lengths) != 1:
            return None
        items = [infer_shape([v[i] for v in values]) for i in range(lengths.pop())]
        if any(i is None for i in items):
            return None
        return TupleShape(tuple(i for i in items if i is not None))
    if kind == "dict":
        keys = [k for v in values for k in v]
        vals = [x for v in values for x in v.values()]
        key, value = infer_shape(keys), infer_shape(vals)
        if key is None or value is None:
            return (
                DictShape(TextShape(string.ascii_lowercase, 1, 3), IntShape(0, 9), 0, 0) if not keys else None
            )
        sizes = [len(v) for v in values]
        return DictShape(key, value, min(sizes), max(min(sizes), min(MAX_LIST // 3, max(sizes) + 2)))
    return None


def _int_shape(values: list[int]) -> IntShape:
    # Stay inside the range the task's own inputs span: beyond it a task's unstated limits
    # (e.g. "1 <= num <= 1000") may apply, and correct programs may legitimately differ there.
    return IntShape(min(values), max(values))


def _float_shape(values: list[float]) -> FloatShape:
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return FloatShape(0.0, 1.0)
    integral = all(v == int(v) for v in finite)
    return FloatShape(min(finite), max(finite), integral)


def _text_shape(values: list[str]) -> TextShape:
    seen = sorted(set("".join(values)))
    alphabet = set(seen)
    for category, threshold in _CATEGORIES:
        present = alphabet & set(category)
        if len(present) >= threshold:
            alphabet |= set(category)
    lengths = [len(v) for v in values]
    return TextShape(
        "".join(sorted(alphabet)), min(lengths), max(min(lengths), min(MAX_TEXT, max(lengths) + 4))
    )


def _list_shape(values: list[list[Any]]) -> Shape | None:
    items = [x for v in values for x in v]
    if items:
        item = infer_shape(items)
        if item is None:
            return None
    else:
        item = IntShape(-10, 10)
    lengths = [len(v) for v in values]
    long_enough = [v for v in values if len(v) >= 3]
    ordered = bool(long_enough) and all(_is_sorted(v) for v in long_enough)
    lists4 = [v for v in values if len(v) >= 4]
    distinct = bool(lists4) and all(len({repr(x) for x in v}) == len(v) for v in lists4)
    upper = max(min(lengths), min(MAX_LIST, max(lengths) + 4))
    # a non-empty list of one element is within almost every task's promise; tasks that need two
    # or more say so, and get a precondition
    lower = min(1, min(lengths))
    return ListShape(item, lower, upper, ordered, distinct)


def _is_sorted(values: list[Any]) -> bool:
    try:
        return all(a <= b for a, b in zip(values, values[1:], strict=False))
    except TypeError:
        return False


# ---------------------------------------------------------------------------- type hints
def shape_from_hint(hint: Any) -> Shape | None:
    """A generic domain for an annotation (used when no seed shows the argument's values)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is int:
        return IntShape(-20, 20)
    if hint is float:
        return FloatShape(-20.0, 20.0)
    if hint is str:
        return TextShape(string.ascii_letters + " ", 0, 12)
    if hint is bool:
        return BoolShape()
    if origin in (list, typing.List) or hint is list:  # noqa: UP006
        item = shape_from_hint(args[0]) if args else IntShape(-20, 20)
        return ListShape(item, 0, 8) if item else None
    if origin in (tuple, typing.Tuple) and args and args[-1] is not Ellipsis:  # noqa: UP006
        items = [shape_from_hint(a) for a in args]
        return TupleShape(tuple(i for i in items if i)) if all(items) else None
    if origin in (dict, typing.Dict) and len(args) == 2:  # noqa: UP006
        key, value = shape_from_hint(args[0]), shape_from_hint(args[1])
        return DictShape(key, value, 0, 5) if key and value else None
    return None


def argument_shapes(
    seeds: Sequence[tuple[Any, ...]], hints: Sequence[Any] | None = None
) -> list[Shape] | None:
    """One domain per argument position, or None if the arguments cannot be varied safely."""
    arities = {len(args) for args in seeds}
    if len(arities) > 1:
        return None
    arity = arities.pop() if arities else len(hints or [])
    shapes: list[Shape] = []
    for position in range(arity):
        column = [args[position] for args in seeds]
        shape = infer_shape(column) if column else None
        if shape is None and hints and position < len(hints):
            shape = shape_from_hint(hints[position])
        if shape is None:
            return None
        shapes.append(shape)
    return shapes


# ---------------------------------------------------------------------------- relations between arguments
Relation = Callable[[tuple[Any, ...]], bool]


def _sized(value: Any) -> bool:
    return type(value) in (list, str, tuple, dict)


def inferred_relations(
    seeds: Sequence[tuple[Any, ...]], answer: Callable[[tuple[Any, ...]], str | None] | None = None
) -> list[Relation]:
    """Simple invariants between arguments that hold on every seed (in the spirit of Daikon), kept
    as preconditions of generated inputs: equal lengths of two sized arguments, an integer
    argument bounded by another argument's length (an index or a count), and `a <= b` order
    between two numeric arguments — unless the reference's answer (`answer`: its output as text, None
    if it raises) is the same on every seed with the two swapped: then the task is symmetric in
    them and the order is only where the seeds happen to put their values (a triangle's sides), not
    a precondition (a clamp's `lo <= hi` stays)."""
    if len(seeds) < 2 or len({len(s) for s in seeds}) != 1:
        return []
    arity = len(seeds[0])
    relations: list[Relation] = []
    for i in range(arity):
        for j in range(arity):
            if i == j:
                continue
            column_i = [s[i] for s in seeds]
            column_j = [s[j] for s in seeds]
            if i < j and all(_sized(a) and _sized(b) for a, b in zip(column_i, column_j, strict=True)):
                if all(len(a) == len(b) for a, b in zip(column_i, column_j, strict=True)):
                    relations.append(_equal_lengths(i, j))
            if all(type(a) is int and _sized(b) for a, b in zip(column_i, column_j, strict=True)):
                if all(0 <= a <= len(b) for a, b in zip(column_i, column_j, strict=True)):
                    relations.append(_bounded_by_length(i, j))
            numeric = (int, float)
            if i < j and all(
                type(a) in numeric and type(b) in numeric for a, b in zip(column_i, column_j, strict=True)
            ):
                if all(a <= b for a, b in zip(column_i, column_j, strict=True)):
                    if answer is None or not _order_is_incidental(seeds, i, j, answer):
                        relations.append(_ordered(i, j))
    return relations


def _order_is_incidental(
    seeds: Sequence[tuple[Any, ...]], i: int, j: int, answer: Callable[[tuple[Any, ...]], str | None]
) -> bool:
    checked = False
    for seed in seeds:
        if seed[i] == seed[j]:
            continue
        swapped = list(seed)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        original = answer(tuple(seed))
        if original is None or answer(tuple(swapped)) != original:
            return False
        checked = True
    return checked


def _equal_lengths(i: int, j: int) -> Relation:
    return lambda args: _sized(args[i]) and _sized(args[j]) and len(args[i]) == len(args[j])


def _bounded_by_length(i: int, j: int) -> Relation:
    return lambda args: type(args[i]) is int and _sized(args[j]) and 0 <= args[i] <= len(args[j])


def _ordered(i: int, j: int) -> Relation:
    return lambda args: args[i] <= args[j]
