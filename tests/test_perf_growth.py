"""Perf layer: growth exponents from counted operations, the asymptotic penalty, determinism."""

from __future__ import annotations

import pytest

from rlvr.graders.base import make_grader
from rlvr.graders.code.perf import ASYMPTOTIC_PENALTY_CAP, PerfPlan, growth_exponent, perf_score
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


def test_same_growth_is_scored_by_the_ratio_at_the_largest_size() -> None:
    reference = [10 * n for n in SIZES]
    slower = [20 * n + 3 for n in SIZES]
    result = perf_score(reference, slower, PerfPlan(SIZES))
    assert not result.asymptotically_worse
    assert result.score == pytest.approx(reference[-1] / slower[-1])
    assert perf_score(reference, reference, PerfPlan(SIZES)).score == 1.0


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
    assert perf_score([10, 10], [20, 20]).score == pytest.approx(0.5)
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
