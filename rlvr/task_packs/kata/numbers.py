"""Arithmetic families."""

from __future__ import annotations

import random

from rlvr.task_packs.kata.base import Variant, family, size_for


@family("digit_power_sum", "arithmetic")
def digit_power_sum(rng: random.Random, difficulty: int) -> Variant:
    power = rng.randint(1, 1 + difficulty)
    reference = f"""def digit_power_sum(n: int) -> int:
    return sum(int(d) ** {power} for d in str(abs(n)))
"""
    return Variant(
        "digit_power_sum",
        "def digit_power_sum(n: int) -> int:",
        f"Return the sum of the decimal digits of abs(n), each raised to the power {power}.",
        reference,
        lambda r: (r.randint(-(10 ** (2 + difficulty)), 10 ** (2 + difficulty)),),
        lambda n, r: (int("7" * n),),
        edge_cases=((0,), (-9,)),
    )


@family("gcd_of_list", "arithmetic")
def gcd_of_list(rng: random.Random, difficulty: int) -> Variant:
    reference = """def gcd_all(values: list[int]) -> int:
    result = 0
    for v in values:
        a, b = abs(result), abs(v)
        while b:
            a, b = b, a % b
        result = a
    return result
"""
    return Variant(
        "gcd_all",
        "def gcd_all(values: list[int]) -> int:",
        "Return the greatest common divisor of the integers in `values` (always >= 0; gcd of an empty "
        "list or of zeros is 0).",
        reference,
        lambda r: (
            [
                r.randint(1, 6) * r.choice([1, 2, 3, 6, 12]) * r.choice([1, -1])
                for _ in range(size_for(difficulty, r))
            ],
        ),
        lambda n, r: ([6 * r.randint(1, 10**6) for _ in range(n)],),
        edge_cases=(([],), ([0, 0],), ([-4],)),
    )


@family("to_base", "arithmetic")
def to_base(rng: random.Random, difficulty: int) -> Variant:
    base = rng.choice([2, 3, 5, 7, 8, 16] if difficulty >= 3 else [2, 8])
    reference = f"""def to_base(n: int) -> str:
    digits = '0123456789abcdef'
    if n == 0:
        return '0'
    sign = '-' if n < 0 else ''
    n = abs(n)
    out = []
    while n:
        out.append(digits[n % {base}])
        n //= {base}
    return sign + ''.join(reversed(out))
"""
    return Variant(
        "to_base",
        "def to_base(n: int) -> str:",
        f"Return the base-{base} representation of `n` using digits 0-9 then lowercase a-f, with a leading "
        "'-' for negative numbers and '0' for zero.",
        reference,
        lambda r: (r.randint(-(10 ** (1 + difficulty)), 10 ** (1 + difficulty)),),
        lambda n, r: (base**n - 1,),
        edge_cases=((0,), (-1,), (base,)),
    )


@family("count_primes", "arithmetic")
def count_primes(rng: random.Random, difficulty: int) -> Variant:
    reference = """def count_primes(n: int) -> int:
    if n < 3:
        return 0
    sieve = [True] * n
    sieve[0] = sieve[1] = False
    i = 2
    while i * i < n:
        if sieve[i]:
            sieve[i * i::i] = [False] * len(range(i * i, n, i))
        i += 1
    return sum(sieve)
"""
    return Variant(
        "count_primes",
        "def count_primes(n: int) -> int:",
        "Return how many prime numbers are strictly less than `n` (0 for n <= 2).",
        reference,
        lambda r: (r.randint(-5, 50 * difficulty),),
        lambda n, r: (n * 20,),
        edge_cases=((0,), (2,), (3,)),
    )


@family("collatz_steps", "arithmetic", split="test")
def collatz_steps(rng: random.Random, difficulty: int) -> Variant:
    reference = """def collatz_steps(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps
"""
    return Variant(
        "collatz_steps",
        "def collatz_steps(n: int) -> int:",
        "`n` >= 1. Return how many Collatz steps (n -> n/2 if even, else 3n+1) it takes to reach 1.",
        reference,
        lambda r: (r.randint(1, 30 * difficulty),),
        lambda n, r: (2**n,),
        edge_cases=((1,), (2,)),
    )


@family("min_coins", "dp")
def min_coins(rng: random.Random, difficulty: int) -> Variant:
    coins = sorted(rng.sample([1, 2, 3, 5, 7, 10, 12], k=2 + min(3, difficulty // 2)))
    if difficulty <= 2 and 1 not in coins:
        coins = [1] + coins
    reference = f"""def min_coins(amount: int) -> int:
    coins = {coins!r}
    best = [0] + [-1] * amount
    for a in range(1, amount + 1):
        options = [best[a - c] for c in coins if c <= a and best[a - c] >= 0]
        best[a] = min(options) + 1 if options else -1
    return best[amount]
"""
    return Variant(
        "min_coins",
        "def min_coins(amount: int) -> int:",
        f"With unlimited coins of values {coins}, return the fewest coins summing exactly to `amount` "
        "(amount >= 0), or -1 if it cannot be made.",
        reference,
        lambda r: (r.randint(0, 15 * difficulty),),
        lambda n, r: (n * 4,),
        edge_cases=((0,), (1,)),
    )


@family("edit_distance", "dp", split="test")
def edit_distance(rng: random.Random, difficulty: int) -> Variant:
    reference = """def edit_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]
"""
    alphabet = "abc"
    return Variant(
        "edit_distance",
        "def edit_distance(a: str, b: str) -> int:",
        "Return the minimum number of single-character insertions, deletions and substitutions that turn `a` into `b`.",
        reference,
        lambda r: (
            "".join(r.choice(alphabet) for _ in range(size_for(difficulty, r))),
            "".join(r.choice(alphabet) for _ in range(size_for(difficulty, r))),
        ),
        lambda n, r: ("ab" * (n // 4), "ba" * (n // 4)),
        sizes=(8, 16, 32, 64, 128),
        edge_cases=(("", ""), ("a", ""), ("", "ab")),
    )


@family("sum_of_multiples", "arithmetic")
def sum_of_multiples(rng: random.Random, difficulty: int) -> Variant:
    factors = sorted(rng.sample(range(2, 10), k=min(4, 1 + difficulty // 2)))
    reference = f"""def sum_of_multiples(limit: int) -> int:
    return sum(n for n in range(1, limit) if any(n % f == 0 for f in {factors!r}))
"""
    return Variant(
        "sum_of_multiples",
        "def sum_of_multiples(limit: int) -> int:",
        f"Return the sum of all positive integers below `limit` that are divisible by at least one of {factors}.",
        reference,
        lambda r: (r.randint(-3, 40 * difficulty),),
        lambda n, r: (n * 4,),
        edge_cases=((0,), (1,)),
    )
