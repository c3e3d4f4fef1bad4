"""Deterministic performance: counted operations at growing input sizes, never seconds.

The sandbox counts Python call and line events inside candidate code for every call (the same
instrumentation measures the reference once per task). Same program + same inputs -> same counts
-> same score, whatever the machine is doing.

With a growth plan (calls on inputs of growing size n, see `PerfPlan`), the layer fits the growth
exponent k of ops ~ n^k on the largest sizes, for the candidate and for the reference:
  * score = min(1, reference ops / candidate ops) at the largest n;
  * a candidate asymptotically worse than the reference (k at least `WORSE_EXPONENT_MARGIN` above
    the reference's, and at least twice as many ops at the largest n) gets at most
    `ASYMPTOTIC_PENALTY_CAP` of the perf credit: O(n^2) for an O(n) task cannot win on constants.
Without a plan, the score is the flat ratio of total ops over the hidden test calls.

Limits: only Python-level work inside candidate code is counted. A builtin call costs one event,
whatever it does internally, so e.g. `list.index` inside a loop looks linear, not quadratic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

ASYMPTOTIC_PENALTY_CAP = 0.25
WORSE_EXPONENT_MARGIN = 0.5
WORSE_RATIO = 0.5
FIT_POINTS = 3  # the exponent is fitted on the largest sizes, where constant overheads fade


@dataclass(frozen=True)
class PerfResult:
    score: float
    candidate_ops: int
    reference_ops: int
    detail: str
    candidate_exponent: float | None = None
    reference_exponent: float | None = None
    asymptotically_worse: bool = False


@dataclass(frozen=True)
class PerfPlan:
    """Growth measurement: `sizes[i]` is the input size n of growth call i (several calls may
    share a size; their ops are summed)."""

    sizes: tuple[int, ...]

    def __post_init__(self) -> None:
        if any(type(n) is not int or n <= 0 for n in self.sizes):
            raise ValueError(f"growth sizes must be positive integers, got {self.sizes!r}")
        if len(set(self.sizes)) < 2:
            raise ValueError("a growth plan needs at least two distinct sizes")


def perf_score(
    reference_counts: Sequence[int | None],
    candidate_counts: Sequence[int | None],
    plan: PerfPlan | None = None,
) -> PerfResult:
    """Flat ratio (no plan) or growth-aware score (plan; counts are those of the growth calls)."""
    if plan is not None:
        return growth_score(plan, reference_counts, candidate_counts)
    pairs = [
        (r, c)
        for r, c in zip(reference_counts, candidate_counts, strict=False)
        if r is not None and c is not None
    ]
    if not pairs:
        return PerfResult(0.0, 0, 0, "no operation counts")
    reference_ops = sum(max(1, r) for r, _ in pairs)
    candidate_ops = sum(max(1, c) for _, c in pairs)
    score = min(1.0, reference_ops / candidate_ops)
    return PerfResult(
        score, candidate_ops, reference_ops, f"{candidate_ops} ops vs reference {reference_ops}"
    )


def ops_by_size(sizes: Sequence[int], counts: Sequence[int | None]) -> dict[int, int] | None:
    """Total ops per input size, or None if any growth call went unmeasured."""
    if len(counts) < len(sizes) or any(c is None for c in counts[: len(sizes)]):
        return None
    totals: dict[int, int] = {}
    for n, count in zip(sizes, counts, strict=False):
        totals[n] = totals.get(n, 0) + max(1, int(count or 0))
    return dict(sorted(totals.items()))


def growth_exponent(points: dict[int, int]) -> float:
    """Least-squares slope of log(ops) against log(n) over the largest `FIT_POINTS` sizes."""
    chosen = sorted(points.items())[-FIT_POINTS:]
    xs = [math.log(n) for n, _ in chosen]
    ys = [math.log(ops) for _, ops in chosen]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread


def growth_score(
    plan: PerfPlan, reference_counts: Sequence[int | None], candidate_counts: Sequence[int | None]
) -> PerfResult:
    reference = ops_by_size(plan.sizes, reference_counts)
    candidate = ops_by_size(plan.sizes, candidate_counts)
    if reference is None:
        return PerfResult(0.0, 0, 0, "the reference's growth could not be measured")
    if candidate is None:
        return PerfResult(0.0, 0, sum(reference.values()), "the program did not finish the growth inputs")
    largest = max(reference)
    ratio = reference[largest] / candidate[largest]
    k_ref, k_cand = growth_exponent(reference), growth_exponent(candidate)
    worse = k_cand - k_ref >= WORSE_EXPONENT_MARGIN and ratio <= WORSE_RATIO
    score = min(1.0, ratio)
    if worse:
        score = min(score, ASYMPTOTIC_PENALTY_CAP)
    detail = (
        f"n={largest}: {candidate[largest]} ops vs reference {reference[largest]}; "
        f"growth n^{k_cand:.2f} vs reference n^{k_ref:.2f}" + (" (asymptotically worse)" if worse else "")
    )
    return PerfResult(score, candidate[largest], reference[largest], detail, k_cand, k_ref, worse)
