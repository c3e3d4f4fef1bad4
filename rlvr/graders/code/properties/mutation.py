"""Type-aware mutation of seed inputs (in the spirit of EvalPlus).

A seed is an argument tuple the task itself uses (a docstring example or a call its original test
makes). Mutating seeds explores the neighbourhood of inputs the task author considered valid:
integers step by one, strings lose, repeat or swap pieces, lists drop, duplicate or perturb
elements (also mirrored, sorted, doubled or all equal: cancelling pairs, order boundaries, longer
inputs and ties), and so on. Values are mixed with an "ingredient" pool of every value seen in the seeds.
Each mutated argument must still lie inside its inferred domain (`Shape.accepts`).
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Sequence
from typing import Any

from rlvr.graders.code.properties.shapes import Shape

MAX_ATTEMPTS_PER_INPUT = 8


def ingredients(seeds: Sequence[tuple[Any, ...]]) -> dict[str, list[Any]]:
    """Every scalar value in the seeds, by type name (the pool mutations draw replacements from)."""
    pool: dict[str, list[Any]] = {}

    def visit(value: Any, depth: int) -> None:
        if depth > 8:
            return
        if type(value) in (list, tuple):
            for item in value:
                visit(item, depth + 1)
        elif type(value) is dict:
            for key, item in value.items():
                visit(key, depth + 1)
                visit(item, depth + 1)
        else:
            bucket = pool.setdefault(type(value).__name__, [])
            if value not in bucket and len(bucket) < 200:
                bucket.append(value)
            if type(value) is str:
                vocabulary = pool.setdefault("word", [])
                for token in value.split():
                    if token not in vocabulary and len(vocabulary) < 400:
                        vocabulary.append(token)
                numbers = pool.setdefault("digits", [])
                for token in _NUMBER.findall(value):
                    if token not in numbers and len(numbers) < 200:
                        numbers.append(token)

    for args in seeds:
        visit(list(args), 0)
    return pool


def mutate_value(value: Any, rng: random.Random, pool: dict[str, list[Any]], depth: int = 0) -> Any:
    """One random type-preserving edit of `value`."""
    kind = type(value)
    if kind is bool:
        return not value
    if kind is int:
        return rng.choice(
            [
                value + 1,
                value - 1,
                -value,
                0,
                value * 2,
                value // 2,
                _from_pool(pool, "int", rng, value),
                _from_pool(pool, "int", rng, value),
                _power_or_product(value, rng, pool),
            ]
        )
    if kind is float:
        return rng.choice(
            [
                value + 1.0,
                value + 1e-7,
                value - 1.0,
                -value,
                0.0,
                value / 2,
                value * 2,
                round(value, 1),
                _from_pool(pool, "float", rng, value),
            ]
        )
    if kind is str:
        return _mutate_text(value, rng, pool)
    if kind is list:
        return _mutate_list(value, rng, pool, depth)
    if kind is tuple:
        if not value:
            return value
        position = rng.randrange(len(value))
        return (
            value[:position] + (mutate_value(value[position], rng, pool, depth + 1),) + value[position + 1 :]
        )
    if kind is dict:
        return _mutate_dict(value, rng, pool, depth)
    return value


MAX_GROWN_INT = 10**12


def _power_or_product(value: int, rng: random.Random, pool: dict[str, list[Any]]) -> int:
    """A square, a cube, or a product with another seen int: perfect powers and composites with only
    large factors are where digit-bound and factor-bound shortcuts show (kept below MAX_GROWN_INT)."""
    other = _from_pool(pool, "int", rng, value)
    grown = rng.choice([value * value, value * value * value, value * other])
    return grown if abs(grown) <= MAX_GROWN_INT else value


def _from_pool(pool: dict[str, list[Any]], kind: str, rng: random.Random, default: Any) -> Any:
    options = pool.get(kind)
    return rng.choice(options) if options else default


def _mutate_words(text: str, rng: random.Random, pool: dict[str, list[Any]]) -> str:
    """Word-level edits keep structured text (e.g. "three one five") well formed."""
    words = text.split(" ")
    vocabulary = pool.get("word") or words
    k = rng.randrange(len(words))
    choice = rng.randrange(5)
    if choice == 0:
        rng.shuffle(words)
    elif choice == 1 and len(words) > 1:
        del words[k]
    elif choice == 2:
        words.insert(k, words[k])
    elif choice == 3:
        words[k] = rng.choice(vocabulary)
    else:
        words.insert(rng.randrange(len(words) + 1), rng.choice(vocabulary))
    return " ".join(words)


_NUMBER = re.compile(r"\d+")


def _mutate_number_in_text(text: str, rng: random.Random, pool: dict[str, list[Any]]) -> str:
    """Change one digit run ("03-11-2000" -> "03-12-2000" or "03-01-2000"), keeping its width, or
    swap in a digit run seen in another seed: numbers inside formats stay well formed."""
    runs = list(_NUMBER.finditer(text))
    run = rng.choice(runs)
    digits = run.group()
    seen = [d for d in pool.get("digits", []) if d != digits]
    if seen and rng.random() < 0.5:
        replacement = rng.choice(seen)
    else:
        replacement = str(max(0, int(digits) + rng.choice([-1, 1]))).zfill(len(digits))
    return text[: run.start()] + replacement + text[run.end() :]


def _mutate_text(text: str, rng: random.Random, pool: dict[str, list[Any]]) -> str:
    if " " in text.strip() and rng.random() < 0.5:
        return _mutate_words(text, rng, pool)
    if _NUMBER.search(text) and rng.random() < 0.3:
        return _mutate_number_in_text(text, rng, pool)
    # characters come from this string or, half the time, from every seed string ("14.5" -> "14.50")
    everywhere = sorted(set("".join(pool.get("str", []))))
    alphabet = (everywhere if rng.random() < 0.5 else sorted(set(text))) or everywhere or ["a"]
    words = text.split(" ")
    choice = rng.randrange(9)
    if not text:
        return rng.choice(alphabet)
    i = rng.randrange(len(text))
    j = rng.randrange(i, len(text)) + 1
    if choice == 0:  # delete a slice
        return text[:i] + text[j:]
    if choice == 1:  # repeat a slice
        return text[:j] + text[i:j] + text[j:]
    if choice == 2:  # replace one character
        return text[:i] + rng.choice(alphabet) + text[i + 1 :]
    if choice == 3:  # insert one character
        return text[:i] + rng.choice(alphabet) + text[i:]
    if choice == 4 and len(words) > 1:  # shuffle words
        rng.shuffle(words)
        return " ".join(words)
    if choice == 5 and len(words) > 1:  # drop or duplicate a word
        k = rng.randrange(len(words))
        return " ".join(words[:k] + words[k + 1 :] if rng.random() < 0.5 else words[: k + 1] + words[k:])
    if choice == 6:  # swap case of one character
        return text[:i] + text[i].swapcase() + text[i + 1 :]
    if choice == 7:  # splice with another seed string
        other = _from_pool(pool, "str", rng, text)
        return text[:i] + other[rng.randrange(len(other) + 1) :] if other else text[:i]
    return text[::-1]


def _mutate_list(items: list[Any], rng: random.Random, pool: dict[str, list[Any]], depth: int) -> list[Any]:
    out = list(items)
    choice = rng.randrange(12)
    if not out or choice == 0:  # insert a mutated copy of an element (or a pool value)
        donor = rng.choice(out) if out else _any_from_pool(pool, rng)
        if donor is None and not out:
            return out
        out.insert(rng.randrange(len(out) + 1), mutate_value(donor, rng, pool, depth + 1))
        return out
    k = rng.randrange(len(out))
    if choice == 1:
        del out[k]
    elif choice == 2:
        out.insert(k, out[k])  # duplicate: ties and repeats
    elif choice == 3:
        out[k] = mutate_value(out[k], rng, pool, depth + 1)
    elif choice == 4:
        rng.shuffle(out)
    elif choice == 5:
        out = out[: rng.randrange(len(out) + 1)]
    elif choice == 6:
        out.reverse()
    elif choice == 7 and type(out[k]) in (int, float) and len(out) > 1:
        # mirror another element: pairs that cancel (x, -x) catch sum/sign/distance bugs
        out[rng.randrange(len(out))] = -out[k]
    elif choice == 8:
        try:  # sorted runs, ascending or descending: the boundaries of order-sensitive code
            out.sort(reverse=rng.random() < 0.5)
        except TypeError:
            rng.shuffle(out)
    elif choice == 9:
        out = out + out  # longer inputs with repeats
    elif choice == 10 and all(type(v) in (int, float) for v in out):
        out = [-v for v in out]  # all signs flipped: all-negative inputs, where a 0 start is wrong
    else:
        out = [out[k]] * len(out)  # all equal: every comparison ties
    return out


def _any_from_pool(pool: dict[str, list[Any]], rng: random.Random) -> Any:
    kinds = sorted(k for k, v in pool.items() if v)
    return rng.choice(pool[rng.choice(kinds)]) if kinds else None


def _mutate_dict(
    mapping: dict[Any, Any], rng: random.Random, pool: dict[str, list[Any]], depth: int
) -> dict[Any, Any]:
    out = dict(mapping)
    if not out:
        return out
    key = rng.choice(list(out))
    choice = rng.randrange(3)
    if choice == 0:
        del out[key]
    elif choice == 1:
        out[key] = mutate_value(out[key], rng, pool, depth + 1)
    else:
        new_key = mutate_value(key, rng, pool, depth + 1)
        out[new_key] = out[key]
    return out


def _numbers_in(value: Any) -> list[int | float]:
    if type(value) in (int, float):
        return [value]
    if type(value) in (list, tuple):
        return [v for v in value if type(v) in (int, float)]
    return []


def _tie_with_another_argument(args: list[Any], rng: random.Random) -> None:
    """Set a numeric argument from the others: equal to an element, to a difference or sum of
    two elements, or to a length (+-1). Such ties (threshold == a - b, k == len(xs)) are where
    `<` / `<=` and off-by-one bugs show."""
    scalars = [i for i, v in enumerate(args) if type(v) in (int, float)]
    if not scalars:
        return
    target = rng.choice(scalars)
    others = [v for i, v in enumerate(args) if i != target]
    numbers = [n for v in others for n in _numbers_in(v)]
    lengths = [len(v) for v in others if type(v) in (list, tuple, str, dict)]
    candidates: list[int | float] = list(numbers) + lengths + [n + d for n in lengths for d in (-1, 1)]
    if len(numbers) >= 2:
        a, b = rng.sample(numbers, 2)
        candidates += [abs(a - b), a + b]
    if not candidates:
        return
    value = rng.choice(candidates)
    args[target] = (
        float(value) if type(args[target]) is float else int(value) if value == int(value) else args[target]
    )


def source_constants(source: str) -> list[Any]:
    """Literal numbers and short strings of (trusted) reference source: the thresholds, month
    numbers and separators where its behaviour changes are the values most worth trying."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    found: list[Any] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and type(node.value) in (int, float, str)
            and node.value not in found
        ):
            if type(node.value) is not str or len(node.value) <= 12:
                found.append(node.value)
    return found[:200]


def _swap_arguments(args: list[Any], rng: random.Random) -> None:
    """Exchange two arguments of the same type (e.g. which side of a triangle is longest)."""
    pairs = [
        (i, j) for i in range(len(args)) for j in range(i + 1, len(args)) if type(args[i]) is type(args[j])
    ]
    if pairs:
        i, j = rng.choice(pairs)
        args[i], args[j] = args[j], args[i]


SWEEP = range(-3, 11)


def structured_inputs(shapes: Sequence[Shape], seeds: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Deterministic neighbours of the first seeds, before any random edit: every small int (-3..10)
    in each int argument (the small-scope cases: 0, 1, 4, a first composite), each numeric argument
    tied with the others (`_ties`: a threshold equal to a difference), and every reordering of
    same-typed arguments (which side is the hypotenuse, which bound is the lower). Each argument
    must still lie inside its domain; the caller checks the rest."""
    out: list[tuple[Any, ...]] = []
    for seed in seeds[:2]:
        for position, shape in enumerate(shapes):
            if type(seed[position]) is not int:
                continue
            for value in SWEEP:
                if shape.accepts(value):
                    out.append(seed[:position] + (value,) + seed[position + 1 :])
    for seed in seeds[:3]:
        for position, value in enumerate(seed):
            if type(value) not in (int, float) or len(seed) < 2:
                continue
            for tie in _ties(seed, position)[:MAX_TIES]:
                if shapes[position].accepts(tie):
                    out.append(seed[:position] + (tie,) + seed[position + 1 :])
    for seed in seeds[:6]:
        for order in _same_type_orders(seed):
            permuted = tuple(seed[i] for i in order)
            if all(shape.accepts(v) for shape, v in zip(shapes, permuted, strict=True)):
                out.append(permuted)
    return out


MAX_TIES = 12


def _ties(seed: tuple[Any, ...], position: int) -> list[int | float]:
    """Values of a numeric argument that tie with the others: each difference of two of their
    numbers (where `<` and `<=` part), each of their numbers, each length and length +- 1; in the
    argument's own type, without repeats."""
    numbers = [n for i, v in enumerate(seed) if i != position for n in _numbers_in(v)]
    lengths = [len(v) for i, v in enumerate(seed) if i != position and type(v) in (list, tuple, str, dict)]
    found: list[int | float] = []
    candidates = [abs(a - b) for a, b in itertools.combinations(numbers[:8], 2)] + numbers[:8]
    candidates += [n + d for n in lengths for d in (0, -1, 1)]
    for value in candidates:
        typed = float(value) if type(seed[position]) is float else int(value) if value == int(value) else None
        if typed is not None and typed not in found and typed != seed[position]:
            found.append(typed)
    return found


def _same_type_orders(seed: tuple[Any, ...]) -> list[tuple[int, ...]]:
    if not 1 < len(seed) <= 4:
        return []
    positions = range(len(seed))
    return [
        order
        for order in itertools.permutations(positions)
        if order != tuple(positions)
        and all(type(seed[i]) is type(seed[j]) for i, j in zip(order, positions, strict=True))
    ]


def mutate_inputs(
    seeds: Sequence[tuple[Any, ...]],
    shapes: Sequence[Shape],
    rng: random.Random,
    count: int,
    accept: Callable[[tuple[Any, ...]], bool] = lambda args: True,
    constants: Sequence[Any] = (),
) -> list[tuple[Any, ...]]:
    """Up to `count` mutated argument tuples: each mutates one or two arguments of a seed (or of an
    earlier mutant, so edits compound), keeping every argument inside its domain."""
    if not seeds or not shapes:
        return []
    pool = ingredients(seeds)
    for value in constants:  # the reference's own literals join the ingredients
        bucket = pool.setdefault(type(value).__name__, [])
        if value not in bucket:
            bucket.append(value)
        if type(value) is int and value >= 0:
            digits = pool.setdefault("digits", [])
            if str(value) not in digits:
                digits.append(str(value))
    population = [tuple(s) for s in seeds]
    out: list[tuple[Any, ...]] = []
    for _ in range(count * MAX_ATTEMPTS_PER_INPUT):
        if len(out) >= count:
            break
        parent = list(rng.choice(population))
        if len(parent) > 1 and rng.random() < 0.25:
            (_tie_with_another_argument if rng.random() < 0.7 else _swap_arguments)(parent, rng)
        else:
            for _ in range(1 if rng.random() < 0.7 else 2):
                position = rng.randrange(len(parent))
                parent[position] = mutate_value(parent[position], rng, pool)
        child = tuple(parent)
        if all(shape.accepts(v) for shape, v in zip(shapes, child, strict=True)) and accept(child):
            out.append(child)
            population.append(child)
    return out
