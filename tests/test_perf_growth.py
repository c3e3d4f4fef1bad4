"""Perf layer: growth exponents from counted operations, the asymptotic penalty, determinism."""

from __future__ import annotations

import pytest

from rlvr.graders.base import make_grader
from rlvr.graders.code.perf import (
    ASYMPTOTIC_PENALTY_CAP,
    BAND,
    MEMORY_SLACK_PER_CALL,
    SLACK_PER_CALL,
    PerfPlan,
    banded_score,
    growth_exponent,
    perf_score,
)
from rlvr.task_packs.kata import KataPack

SIZES = (16, 32, 64, 128, 256)


def test_growth_exponent_recovers_power_laws() -> None:
    assert growth_exponent({n: 5 * n for n in SIZES}) == pytest.approx(1.0)
    assert growth_exponent({n: n * n + 7 for n in SIZES}) == pytest.approx(2.0, abs=0.01)
    assert growth_exponent({n: 3 for n in SIZES}) == pytest.approx(0.0)


def test_quadratic_candidate_for_linear_task_gets_at_most_a_quarter() -> None:
    linear = [10 * n for n in SIZES]
    quadratic = [n * n // 4 for n in SIZES]
    result = perf_score(linear, quadratic, PerfPlan(SIZES))
    assert result.asymptotically_worse
    assert result.score <= ASYMPTOTIC_PENALTY_CAP
    assert result.candidate_exponent == pytest.approx(2.0, abs=0.05)


def test_same_growth_is_scored_by_the_banded_ratio_at_the_largest_size() -> None:
    reference = [10 * n for n in SIZES]
    within_band = [20 * n + 3 for n in SIZES]  # twice the work: a constant factor, full credit
    assert perf_score(reference, within_band, PerfPlan(SIZES)).score == 1.0
    slower = [40 * n for n in SIZES]
    result = perf_score(reference, slower, PerfPlan(SIZES))
    assert not result.asymptotically_worse
    allowance = BAND * reference[-1] + SLACK_PER_CALL
    assert result.score == pytest.approx(allowance / slower[-1])
    assert 0.45 < result.score < 0.55
    assert perf_score(reference, reference, PerfPlan(SIZES)).score == 1.0


def test_band_gives_full_credit_then_declines_smoothly() -> None:
    assert banded_score(1000, 2000, 1) == 1.0
    assert banded_score(3, 20, 1) == 1.0  # a few extra lines in an O(1) function cost nothing
    scores = [banded_score(1000, c, 1) for c in range(1000, 20_000, 250)]
    assert all(a >= b for a, b in zip(scores, scores[1:], strict=False))
    just_outside = banded_score(1000, 2017, 1)
    assert 0.99 < just_outside < 1.0  # continuous at the edge of the band
    assert banded_score(1000, 8000, 1) == pytest.approx(2016 / 8000)


def test_faster_than_reference_is_capped_at_full_credit() -> None:
    assert perf_score([100 * n for n in SIZES], [n for n in SIZES], PerfPlan(SIZES)).score == 1.0


def test_unmeasured_growth_call_scores_zero() -> None:
    result = perf_score([n for n in SIZES], [1, 2, None, 4, 5], PerfPlan(SIZES))
    assert result.score == 0.0 and "did not finish" in result.detail


def test_plans_need_two_distinct_positive_sizes() -> None:
    with pytest.raises(ValueError):
        PerfPlan((8, 8))
    with pytest.raises(ValueError):
        PerfPlan((0, 8))


def test_flat_ratio_without_a_plan_still_works() -> None:
    assert perf_score([10, 10], [20, 20]).score == 1.0
    assert perf_score([100, 100], [800, 800]).score == pytest.approx((400 + 2 * SLACK_PER_CALL) / 1600)
    assert perf_score([None], [None]).score == 0.0


BRUTE_FORCE_MAX_SUBARRAY = """
def max_subarray(values: list[int]) -> int:
    best = 0
    for i in range(len(values)):
        total = 0
        for j in range(i, len(values)):
            total += values[j]
            if total > best:
                best = total
    return best
"""

FAST_BUT_WRONG_ON_BIG_INPUTS = """
def max_subarray(values: list[int]) -> int:
    if len(values) > 40:
        return 0
    best = current = 0
    for v in values:
        current = max(0, current + v)
        best = max(best, current)
    return best
"""


@pytest.fixture(scope="module")
def kata_grader():
    pack = KataPack()
    grader = make_grader(pack, types=False, jobs=2)
    yield pack, grader
    grader.close()


def test_quadratic_solution_passes_tests_but_loses_perf_credit(kata_grader) -> None:
    pack, grader = kata_grader
    task_id = "kata/max_subarray/3/0"
    reference = pack.get(task_id).hidden["reference"]
    good, brute = grader.grade_many([task_id, task_id], [reference, BRUTE_FORCE_MAX_SUBARRAY])
    assert good.passed and brute.passed
    assert good.components["perf"].score == 1.0
    assert brute.components["perf"].score <= ASYMPTOTIC_PENALTY_CAP
    assert "asymptotically worse" in brute.components["perf"].detail
    assert brute.reward < good.reward


def test_perf_is_deterministic(kata_grader) -> None:
    _, grader = kata_grader
    task_id = "kata/max_subarray/3/0"
    first = grader.grade(task_id, BRUTE_FORCE_MAX_SUBARRAY)
    second = grader.grade(task_id, BRUTE_FORCE_MAX_SUBARRAY)
    assert first.reward == second.reward
    assert first.components["perf"].detail == second.components["perf"].detail


def test_fast_wrong_answers_on_growth_inputs_earn_no_perf(kata_grader) -> None:
    _, grader = kata_grader
    verdict = grader.grade("kata/max_subarray/1/0", FAST_BUT_WRONG_ON_BIG_INPUTS)
    assert verdict.passed  # the hidden tests use small inputs
    assert verdict.components["perf"].score == 0.0
    assert "wrong answer on a growth input" in verdict.components["perf"].detail


def test_peak_memory_uses_the_same_band() -> None:
    counts = [100, 100]
    within = perf_score(counts, counts, None, [1000, 1000], [2000, 2000])
    assert within.score == 1.0 and within.memory_score == 1.0
    hungry = perf_score(counts, counts, None, [1000, 1000], [200_000, 200_000])
    allowance = BAND * 2000 + 2 * MEMORY_SLACK_PER_CALL
    assert hungry.memory_score == pytest.approx(allowance / 400_000)
    assert hungry.score == hungry.memory_score
    assert "peak memory 400000 B" in hungry.detail
    unmeasured = perf_score(counts, counts, None, [None, None], [5, 5])
    assert unmeasured.memory_score is None and unmeasured.score == 1.0


def test_growth_memory_is_taken_at_the_largest_size() -> None:
    counts = [10 * n for n in SIZES]
    peaks_ref = [100 * n for n in SIZES]
    peaks_cand = [100 * n for n in SIZES[:-1]] + [100 * SIZES[-1] * 50]
    result = perf_score(counts, counts, PerfPlan(SIZES), peaks_ref, peaks_cand)
    assert result.reference_peak == 100 * SIZES[-1]
    assert result.candidate_peak == 100 * SIZES[-1] * 50
    assert result.score < 0.1


QUADRATIC_MEMORY_MAX_SUBARRAY = """
def max_subarray(values: list[int]) -> int:
    sums = [sum(values[i:j]) for i in range(len(values) + 1) for j in range(i, len(values) + 1)]
    return max(sums)
"""


def test_memory_hungry_solution_loses_perf_credit_in_the_sandbox(kata_grader) -> None:
    pack, grader = kata_grader
    task_id = "kata/max_subarray/3/0"
    reference = pack.get(task_id).hidden["reference"]
    good, hungry = grader.grade_many([task_id, task_id], [reference, QUADRATIC_MEMORY_MAX_SUBARRAY])
    assert good.passed and hungry.passed
    assert "peak memory" in good.components["perf"].detail
    assert good.components["perf"].score == 1.0
    assert hungry.components["perf"].score < 0.25
    again = grader.grade(task_id, QUADRATIC_MEMORY_MAX_SUBARRAY)
    assert again.components["perf"].detail == hungry.components["perf"].detail  # deterministic


def test_a_python_loop_is_not_asymptotically_worse_than_a_builtin() -> None:
    """A reference like `return len(s)` costs 2 events at every size; the loop over the input that
    an ordinary program writes is linear in Python events, which is what the builtin does in C."""
    builtin = [2 for _ in SIZES]
    loop = [2 * n + 4 for n in SIZES]
    result = perf_score(builtin, loop, PerfPlan(SIZES))
    assert not result.asymptotically_worse and result.score == 1.0
    quadratic = [n * n for n in SIZES]
    penalized = perf_score(builtin, quadratic, PerfPlan(SIZES))
    assert penalized.asymptotically_worse and penalized.score <= ASYMPTOTIC_PENALTY_CAP
