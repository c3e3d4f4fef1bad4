"""Deterministic performance: counted operations, never seconds.

The sandbox counts Python call and line events inside candidate code for every hidden call (the
same instrumentation measures the reference once per task). Same program + same inputs -> same
counts -> same score, whatever the machine is doing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PerfResult:
    score: float
    candidate_ops: int
    reference_ops: int
    detail: str


def perf_score(reference_counts: Sequence[int | None], candidate_counts: Sequence[int | None]) -> PerfResult:
    """min(1, reference ops / candidate ops) over the calls both answered.

    A candidate that does no traced Python work (e.g. delegates to a builtin) costs 1 op per call:
    builtins are real work too, so such a program is never scored above the reference's ratio.
    """
    pairs = [(r, c) for r, c in zip(reference_counts, candidate_counts, strict=False) if r is not None and c is not None]
    if not pairs:
        return PerfResult(0.0, 0, 0, "no operation counts")
    reference_ops = sum(max(1, r) for r, _ in pairs)
    candidate_ops = sum(max(1, c) for _, c in pairs)
    score = min(1.0, reference_ops / candidate_ops)
    return PerfResult(score, candidate_ops, reference_ops, f"{candidate_ops} ops vs reference {reference_ops}")
