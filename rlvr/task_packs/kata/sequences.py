"""List families."""

from __future__ import annotations

import random

from rlvr.task_packs.kata.base import Variant, family, ints, size_for


@family("rotate_list", "lists")
def rotate_list(rng: random.Random, difficulty: int) -> Variant:
    direction = rng.choice(["right", "left"])
    sign = "-" if direction == "right" else ""
    description = (
        f"Return a new list with the elements of `values` rotated {direction} by `k` positions "
        "(k may be larger than the length, or negative for the other direction). An empty list stays empty."
    )
    reference = f"""def rotate(values: list[int], k: int) -> list[int]:
    if not values:
        return []
    k = ({sign}k) % len(values)
    return values[k:] + values[:k]
"""
    return Variant(
        "rotate",
        "def rotate(values: list[int], k: int) -> list[int]:",
        description,
        reference,
        lambda r: (ints(r, size_for(difficulty, r)), r.randint(-3 * difficulty, 3 * difficulty)),
        lambda n, r: (ints(r, n), n // 3),
        edge_cases=(([], 3), ([1], -1), ([1, 2], 0)),
    )


@family("prefix_sums", "lists")
def prefix_sums(rng: random.Random, difficulty: int) -> Variant:
    modulus = rng.choice([7, 10, 13]) if difficulty >= 3 else None
    description = "Return the list of running totals of `values` (element i is the sum of values[0..i])" + (
        f", each taken modulo {modulus} (a non-negative remainder)." if modulus else "."
    )
    total = f"total % {modulus}" if modulus else "total"
    reference = f"""def running_totals(values: list[int]) -> list[int]:
    out = []
    total = 0
    for v in values:
        total += v
        out.append({total})
    return out
"""
    return Variant(
        "running_totals",
        "def running_totals(values: list[int]) -> list[int]:",
        description,
        reference,
        lambda r: (ints(r, size_for(difficulty, r), -50, 50),),
        lambda n, r: (ints(r, n),),
        edge_cases=(([],), ([-1],)),
    )


@family("dedupe_keep_order", "lists")
def dedupe_keep_order(rng: random.Random, difficulty: int) -> Variant:
    keep_last = difficulty >= 4
    description = (
        "Return `values` without duplicates, keeping the "
        + ("last" if keep_last else "first")
        + " occurrence of each value, in the order those occurrences appear."
    )
    source = "reversed(values)" if keep_last else "values"
    result = "out[::-1]" if keep_last else "out"
    reference = f"""def dedupe(values: list[int]) -> list[int]:
    seen = set()
    out = []
    for v in {source}:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return {result}
"""
    return Variant(
        "dedupe",
        "def dedupe(values: list[int]) -> list[int]:",
        description,
        reference,
        lambda r: (ints(r, size_for(difficulty, r), 0, 5),),
        lambda n, r: (ints(r, n, 0, n),),
        edge_cases=(([],), ([1, 1, 1],)),
    )


@family("chunk_list", "lists")
def chunk_list(rng: random.Random, difficulty: int) -> Variant:
    pad = difficulty >= 3
    description = (
        "Split `values` into consecutive chunks of `size` elements (size >= 1); the last chunk may be "
        "shorter"
        + (", unless `fill` is given: then it is padded with `fill` to full size" if pad else "")
        + "."
    )
    signature = (
        "def chunks(values: list[int], size: int, fill: int | None) -> list[list[int]]:"
        if pad
        else "def chunks(values: list[int], size: int) -> list[list[int]]:"
    )
    padding = (
        "    if fill is not None and out and len(out[-1]) < size:\n        out[-1] = out[-1] + [fill] * (size - len(out[-1]))\n"
        if pad
        else ""
    )
    reference = f"""{signature}
    out = [values[i:i + size] for i in range(0, len(values), size)]
{padding}    return out
"""

    def sample(r: random.Random) -> tuple:
        base = (ints(r, size_for(difficulty, r)), r.randint(1, 4))
        return (*base, r.choice([None, 0, -1])) if pad else base

    def growth(n: int, r: random.Random) -> tuple:
        return (ints(r, n), 3, 0) if pad else (ints(r, n), 3)

    return Variant("chunks", signature, description, reference, sample, growth)


@family("second_largest", "lists")
def second_largest(rng: random.Random, difficulty: int) -> Variant:
    reference = """def second_largest(values: list[int]) -> int | None:
    first = second = None
    for v in values:
        if first is None or v > first:
            if first is not None:
                second = first
            first = v
        elif v != first and (second is None or v > second):
            second = v
    return second
"""
    return Variant(
        "second_largest",
        "def second_largest(values: list[int]) -> int | None:",
        "Return the second largest distinct value in `values`, or None if there are fewer than two distinct values.",
        reference,
        lambda r: (ints(r, size_for(difficulty, r), -5, 5),),
        lambda n, r: (ints(r, n, -(10**6), 10**6),),
        edge_cases=(([],), ([3, 3],), ([2, 1],)),
    )


@family("merge_sorted", "lists")
def merge_sorted(rng: random.Random, difficulty: int) -> Variant:
    dedupe = difficulty >= 4
    description = "Merge two ascending lists into one ascending list" + (
        " without duplicates (each value once)." if dedupe else " (keeping duplicates)."
    )
    tail = (
        "    return [v for i, v in enumerate(out) if i == 0 or out[i - 1] != v]\n"
        if dedupe
        else "    return out\n"
    )
    reference = f"""def merge(a: list[int], b: list[int]) -> list[int]:
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    out.extend(a[i:])
    out.extend(b[j:])
{tail}"""
    return Variant(
        "merge",
        "def merge(a: list[int], b: list[int]) -> list[int]:",
        description,
        reference,
        lambda r: (
            sorted(ints(r, size_for(difficulty, r), -9, 9)),
            sorted(ints(r, size_for(difficulty, r), -9, 9)),
        ),
        lambda n, r: (sorted(ints(r, n, -(10**6), 10**6)), sorted(ints(r, n, -(10**6), 10**6))),
        edge_cases=(([], []), ([1], []), ([], [1, 1])),
    )


@family("max_subarray", "dp")
def max_subarray(rng: random.Random, difficulty: int) -> Variant:
    reference = """def max_subarray(values: list[int]) -> int:
    best = 0
    current = 0
    for v in values:
        current = max(0, current + v)
        best = max(best, current)
    return best
"""
    return Variant(
        "max_subarray",
        "def max_subarray(values: list[int]) -> int:",
        "Return the largest sum of a contiguous (possibly empty) slice of `values`; the empty slice sums to 0.",
        reference,
        lambda r: (ints(r, size_for(difficulty, r), -10, 10),),
        lambda n, r: (ints(r, n, -100, 100),),
        edge_cases=(([],), ([-1, -2],)),
    )


@family("two_sum", "lists")
def two_sum(rng: random.Random, difficulty: int) -> Variant:
    reference = """def two_sum(values: list[int], target: int) -> tuple[int, int] | None:
    seen: dict[int, int] = {}
    for j, v in enumerate(values):
        if target - v in seen:
            return (seen[target - v], j)
        seen.setdefault(v, j)
    return None
"""
    return Variant(
        "two_sum",
        "def two_sum(values: list[int], target: int) -> tuple[int, int] | None:",
        "Return a pair of indices (i, j) with i < j and values[i] + values[j] == target (any such pair), "
        "or None if there is none.",
        reference,
        lambda r: _two_sum_input(r, difficulty),
        lambda n, r: (list(range(0, 2 * n, 2)), -1),
        relation="pair_summing_to_target",
        edge_cases=(([], 0), ([1, 1], 2)),
    )


def _two_sum_input(rng: random.Random, difficulty: int) -> tuple[list[int], int]:
    """Mostly inputs that have an answer: with random targets most lists have no pair, and a solution that
    always returns None would pass those."""
    if rng.random() < 0.2:
        return ints(rng, size_for(difficulty, rng), -10, 10), rng.randint(-12, 12)
    values = ints(rng, max(2, size_for(difficulty, rng)), -10, 10)
    i, j = rng.sample(range(len(values)), 2)
    return values, values[i] + values[j]


@family("find_peak", "lists", split="test")
def find_peak(rng: random.Random, difficulty: int) -> Variant:
    reference = """def find_peak(values: list[int]) -> int:
    lo, hi = 0, len(values) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] < values[mid + 1]:
            lo = mid + 1
        else:
            hi = mid
    return lo
"""
    return Variant(
        "find_peak",
        "def find_peak(values: list[int]) -> int:",
        "`values` is non-empty. Return the index of any peak: an element not smaller than its neighbours "
        "(the ends have one neighbour).",
        reference,
        lambda r: (ints(r, 1 + size_for(difficulty, r), -9, 9),),
        lambda n, r: (list(range(n)),),
        relation="peak_index",
        edge_cases=(([5],), ([1, 2],), ([2, 2, 2],)),
    )


@family("longest_increasing", "dp", split="test")
def longest_increasing(rng: random.Random, difficulty: int) -> Variant:
    strict = difficulty >= 2
    description = (
        "Return the length of the longest "
        + ("strictly increasing" if strict else "non-decreasing")
        + (" subsequence (not necessarily contiguous) of `values`; 0 for an empty list.")
    )
    search = "bisect_left" if strict else "bisect_right"
    reference = f"""from bisect import {search}


def longest_increasing(values: list[int]) -> int:
    tails: list[int] = []
    for v in values:
        i = {search}(tails, v)
        if i == len(tails):
            tails.append(v)
        else:
            tails[i] = v
    return len(tails)
"""
    return Variant(
        "longest_increasing",
        "def longest_increasing(values: list[int]) -> int:",
        description,
        reference,
        lambda r: (ints(r, size_for(difficulty, r), 0, 9),),
        lambda n, r: (ints(r, n, 0, 10**6),),
        edge_cases=(([],), ([3, 3, 3],)),
    )
