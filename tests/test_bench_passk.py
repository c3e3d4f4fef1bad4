"""The unbiased pass@k estimator against exact rational arithmetic on binomial coefficients."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlvr.bench.passk import mean_pass_at_k, pass_at_k


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(comb(n - c, k), comb(n, k))


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_matches_exact_binomial_formula(case: tuple[int, int, int]) -> None:
    n, c, k = case
    value = pass_at_k(n, c, k)
    assert value is not None
    assert value == pytest.approx(float(exact_pass_at_k(n, c, k)), abs=1e-12)


def test_known_values() -> None:
    assert pass_at_k(10, 0, 1) == 0.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(10, 10, 8) == 1.0
    assert pass_at_k(8, 1, 8) == 1.0  # k = n: any correct sample is drawn
    assert pass_at_k(10, 3, 8) == 1.0  # n - c < k: every draw of 8 includes a correct one
    assert pass_at_k(10, 2, 8) == pytest.approx(1 - 1 / 45)  # C(8,8) / C(10,8)
    assert pass_at_k(10, 1, 8) == pytest.approx(0.8)


def test_large_n_is_stable() -> None:
    # C(5000, 100) overflows a float; the product form must still be exact to 1e-12
    value = pass_at_k(5000, 7, 100)
    assert value == pytest.approx(float(exact_pass_at_k(5000, 7, 100)), abs=1e-12)


def test_k_greater_than_n_is_undefined_not_a_number() -> None:
    assert pass_at_k(3, 1, 8) is None
    value, short = mean_pass_at_k([(10, 2), (3, 1), (8, 0)], 8)
    assert value is None and short == [1]


def test_mean_over_tasks() -> None:
    counts = [(10, 2), (9, 0), (12, 12)]
    value, short = mean_pass_at_k(counts, 2)
    expected = sum(exact_pass_at_k(n, c, 2) for n, c in counts) / 3
    assert short == [] and value == pytest.approx(float(expected), abs=1e-12)
    assert mean_pass_at_k([], 1) == (None, [])


@pytest.mark.parametrize(("n", "c", "k"), [(5, 6, 1), (-1, 0, 1), (5, 1, 0)])
def test_invalid_counts_are_errors(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
