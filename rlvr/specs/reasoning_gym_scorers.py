"""The reasoning-gym generators whose `score_answer` may grade untrusted answers.

A task may name a reasoning-gym generator (`"reasoning_gym": {"dataset", "seed", "size", "index"}`) so that
the generator's own `score_answer` decides. Some generators score by evaluating the answer as Python or
sympy code (`eval`, `parse_expr`, `sympify`); an answer must never run as code in a grading process, so
only the generators listed here are accepted. Each was read and compares the answer as text, numbers,
`Decimal`, `complex()` or `float()` — never as code (tests/test_math_worker_protocol.py re-reads their
sources for eval-like calls on every run).
"""

from __future__ import annotations

from typing import Any

ALLOWED_SCORERS: frozenset[str] = frozenset(
    {
        "basic_arithmetic",
        "base_conversion",
        "chain_sum",
        "complex_arithmetic",
        "decimal_arithmetic",
        "fraction_simplification",
        "gcd",
        "lcm",
        "polynomial_equations",
        "power_function",
        "prime_factorization",
        "simple_equations",
    }
)
SPEC_KEYS = ("dataset", "seed", "size", "index")
MAX_DATASET_SIZE = 100_000


def scorer_problem(spec: Any) -> str | None:
    """Why a `reasoning_gym` spec cannot be used (None when it can)."""
    if not isinstance(spec, dict) or set(spec) != set(SPEC_KEYS):
        return f"must be an object with exactly the keys {', '.join(SPEC_KEYS)}"
    dataset = spec["dataset"]
    if dataset not in ALLOWED_SCORERS:
        return (
            f"generator {dataset!r} is not allowed (its scorer may evaluate answers as code); "
            f"allowed: {', '.join(sorted(ALLOWED_SCORERS))}"
        )
    numbers = [spec[key] for key in ("seed", "size", "index")]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers):
        return "seed, size and index must be non-negative integers"
    if not 0 <= spec["index"] < spec["size"] <= MAX_DATASET_SIZE:
        return f"index must be below size, and size at most {MAX_DATASET_SIZE}"
    return None
