"""Deterministic performance: counted operations at growing input sizes, never seconds.

The sandbox counts Python call and line events inside candidate code for every call (the same
instrumentation measures the reference once per task). Same program + same inputs -> same counts
-> same score, whatever the machine is doing.

The constant-factor band: ordinary correct code differs from one reference by constant factors
(an extra assignment, a helper call, a sort instead of a scan) that are not worth reward. So a
candidate within `BAND` times the reference's ops plus `SLACK_PER_CALL` events per call gets full
credit; beyond the band the score declines smoothly, as allowance / candidate ops (4x the
reference scores about 0.5, 8x about 0.25).

With a growth plan (calls on inputs of growing size n, see `PerfPlan`), the layer fits the growth
exponent k of ops ~ n^k on the largest sizes, for the candidate and for the reference (whose ops
count at least `BUILTIN_EVENTS_PER_ITEM` per input element: builtins do work the tracer cannot see,
so a Python loop over the input is not "asymptotically worse" than `len` or `sorted`):
  * score = the banded ratio at the largest n;
  * a candidate asymptotically worse than the reference (k at least `WORSE_EXPONENT_MARGIN` above
    the reference's, and at least twice as many ops at the largest n) gets at most
    `ASYMPTOTIC_PENALTY_CAP` of the perf credit: O(n^2) for an O(n) task cannot win on constants.
Without a plan, the score is the banded ratio of total ops over the hidden test calls.

Peak memory (the tracemalloc high-water mark of each call, measured in the sandbox child beside
the op count; deterministic for a given program and input) follows the same band: within `BAND`
times the reference's peak (counted as at least `MEMORY_BYTES_PER_ITEM` per input element: a copy,
a set or a sorted list of the input is ordinary code) plus `MEMORY_SLACK_PER_CALL` bytes per call
is full credit, beyond it allowance / peak; O(n^2) memory where the reference needs O(n) is not. The perf score is the smaller of the two (ops and memory) at the largest growth
size. Memory is measured on growth inputs only (tracemalloc slows every allocation, so the test
run stays untraced for memory); tasks without growth inputs are scored on ops alone.

Limits: only Python-level work inside candidate code is counted. A builtin call costs one event,
whatever it does internally, so e.g. `list.index` inside a loop looks linear, not quadratic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

ASYMPTOTIC_PENALTY_CAP = 0.25
BAND = 2.0  # full credit up to this many times the reference's counted operations
SLACK_PER_CALL = 16  # plus this many events per call (a few extra lines in an O(1) function)
BUILTIN_EVENTS_PER_ITEM = 2  # the least a growth input of n elements is charged to the reference
MEMORY_SLACK_PER_CALL = 4096  # bytes: a few temporaries are free
MEMORY_BYTES_PER_ITEM = 64  # the least a growth input of n elements is charged to the reference's peak
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
    memory_score: float | None = None  # None when peak memory was not measured
    candidate_peak: int | None = None
    reference_peak: int | None = None


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
    reference_peaks: Sequence[int | None] = (),
    candidate_peaks: Sequence[int | None] = (),
) -> PerfResult:
    """Flat ratio (no plan) or growth-aware score (plan; counts are those of the growth calls),
    limited by the banded peak-memory score when both sides' peaks were measured."""
    result = ops_score(reference_counts, candidate_counts, plan)
    if result.score == 0.0 and result.candidate_ops == 0:
        return result  # nothing measured
    return with_memory(result, plan, reference_peaks, candidate_peaks)


def with_memory(
    result: PerfResult,
    plan: PerfPlan | None,
    reference_peaks: Sequence[int | None],
    candidate_peaks: Sequence[int | None],
) -> PerfResult:
    floor = 0
    if plan is not None:
        largest = max(plan.sizes)
        chosen = [i for i, n in enumerate(plan.sizes) if n == largest]
        floor = MEMORY_BYTES_PER_ITEM * largest * len(chosen)
    else:
        chosen = list(range(min(len(reference_peaks), len(candidate_peaks))))
    pairs = [
        (reference_peaks[i], candidate_peaks[i])
        for i in chosen
        if i < len(reference_peaks) and i < len(candidate_peaks)
    ]
    if not pairs or any(r is None or c is None for r, c in pairs):
        return result
    reference_peak = sum(int(r or 0) for r, _ in pairs)
    candidate_peak = sum(int(c or 0) for _, c in pairs)
    memory = banded_score(max(reference_peak, floor), candidate_peak, len(pairs), MEMORY_SLACK_PER_CALL)
    detail = f"{result.detail}; peak memory {candidate_peak} B vs reference {reference_peak} B"
    return replace(
        result,
        score=min(result.score, memory),
        detail=detail,
        memory_score=memory,
        candidate_peak=candidate_peak,
        reference_peak=reference_peak,
    )


def ops_score(
    reference_counts: Sequence[int | None],
    candidate_counts: Sequence[int | None],
    plan: PerfPlan | None = None,
) -> PerfResult:
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
    score = banded_score(reference_ops, candidate_ops, len(pairs))
    return PerfResult(
        score, candidate_ops, reference_ops, f"{candidate_ops} ops vs reference {reference_ops}"
    )


def banded_score(reference: float, candidate: float, calls: int, slack: float = SLACK_PER_CALL) -> float:
    """1.0 within `BAND` x reference + `slack` per call; allowance / candidate beyond (continuous)."""
    allowance = BAND * max(reference, 1) + slack * max(calls, 1)
    return 1.0 if candidate <= allowance else allowance / candidate


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


def input_floor(plan: PerfPlan, reference: dict[int, int]) -> dict[int, int]:
    """The reference's ops, but at least `BUILTIN_EVENTS_PER_ITEM` per input element: a reference
    that hands its input to a builtin (`len`, `sorted`, `str.swapcase`) does work the tracer cannot
    see, so a plain Python loop over the input is not asymptotically worse than it."""
    calls = {n: plan.sizes.count(n) for n in reference}
    return {n: max(ops, BUILTIN_EVENTS_PER_ITEM * n * calls[n]) for n, ops in reference.items()}


def growth_score(
    plan: PerfPlan, reference_counts: Sequence[int | None], candidate_counts: Sequence[int | None]
) -> PerfResult:
    measured = ops_by_size(plan.sizes, reference_counts)
    candidate = ops_by_size(plan.sizes, candidate_counts)
    if measured is None:
        return PerfResult(0.0, 0, 0, "the reference's growth could not be measured")
    reference = input_floor(plan, measured)
    if candidate is None:
        return PerfResult(0.0, 0, sum(reference.values()), "the program did not finish the growth inputs")
    largest = max(reference)
    ratio = reference[largest] / candidate[largest]
    k_ref, k_cand = growth_exponent(reference), growth_exponent(candidate)
    worse = k_cand - k_ref >= WORSE_EXPONENT_MARGIN and ratio <= WORSE_RATIO
    score = banded_score(reference[largest], candidate[largest], plan.sizes.count(largest))
    if worse:
        score = min(score, ASYMPTOTIC_PENALTY_CAP)
    detail = (
        f"n={largest}: {candidate[largest]} ops vs reference {reference[largest]}; "
        f"growth n^{k_cand:.2f} vs reference n^{k_ref:.2f}" + (" (asymptotically worse)" if worse else "")
    )
    return PerfResult(score, candidate[largest], reference[largest], detail, k_cand, k_ref, worse)


def charge_load(
    counts: list[int | None], load: int | None, reference_load: int | None, sizes: tuple[int, ...] = ()
) -> list[int | None]:
    """`counts` with the module's load-time work beyond the reference's added to the last call (the
    largest input's, when `sizes` are given): answers tabulated while the module loads are work, not
    free."""
    counts = list(counts)
    if not counts or type(load) is not int:
        return counts
    last = max(range(len(counts)), key=lambda i: (sizes[i], i)) if len(sizes) == len(counts) else -1
    if type(counts[last]) is int:
        counts[last] = int(counts[last] or 0) + max(0, load - int(reference_load or 0))
    return counts
