import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from rlvr.graders.compose import CODE_GATES, CODE_WEIGHTS, WeightsError, gated_reward, normalized_weights

unit = st.floats(min_value=0.0, max_value=1.0)
weight = st.floats(min_value=0.0, max_value=10.0)


@given(
    st.tuples(weight, weight, weight, weight),
    st.tuples(unit, unit),  # passing candidate's soft scores (types, perf)
    st.tuples(unit, unit, unit, unit),  # failing candidate's scores
)
def test_gating_invariant_over_weights(w, passing_soft, failing):
    weights = dict(zip(("syntax", "types", "tests", "perf"), w, strict=False))
    assume(weights["syntax"] + weights["tests"] > 0)
    normalized = normalized_weights(weights, CODE_WEIGHTS, CODE_GATES)
    passing_scores = {"syntax": 1.0, "types": passing_soft[0], "tests": 1.0, "perf": passing_soft[1]}
    failing_scores = dict(zip(("syntax", "types", "tests", "perf"), failing, strict=False))
    assume(failing_scores["syntax"] < 1.0 or failing_scores["tests"] < 1.0)
    good, good_gates = gated_reward(passing_scores, normalized, CODE_GATES)
    bad, bad_gates = gated_reward(failing_scores, normalized, CODE_GATES)
    assert good_gates == [] and bad_gates
    assert 0.0 <= bad < good <= 1.0 + 1e-12


def test_default_weights_full_marks_is_one():
    normalized = normalized_weights(None, CODE_WEIGHTS, CODE_GATES)
    reward, gates = gated_reward({k: 1.0 for k in CODE_WEIGHTS}, normalized, CODE_GATES)
    assert reward == pytest.approx(1.0) and gates == []
    reward, gates = gated_reward({"syntax": 1, "types": 1, "tests": 0.5, "perf": 1}, normalized, CODE_GATES)
    assert gates == ["tests"] and reward < 0.6 / 2 + 1e-9


@pytest.mark.parametrize(
    "weights",
    [
        {"syntax": -1},
        {"tests": float("nan")},
        {"bogus": 1.0},
        {"syntax": 0, "tests": 0},
        {k: 0 for k in CODE_WEIGHTS},
    ],
)
def test_bad_weights_are_rejected(weights):
    with pytest.raises(WeightsError):
        normalized_weights(weights, CODE_WEIGHTS, CODE_GATES)
