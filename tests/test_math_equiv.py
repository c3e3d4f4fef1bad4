"""Answer equivalence on the 71 labelled pairs of benchmarks/math_equivalence/pairs.jsonl (positives and
negatives), run in-process (trusted pairs). math-verify alone is scored on the same pairs for contrast."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.graders.math.equiv import Tolerance, equivalent, math_verify_equal, normalise, shape_of

PAIRS = [
    json.loads(line)
    for line in (Path(__file__).parents[1] / "benchmarks" / "math_equivalence" / "pairs.jsonl")
    .read_text()
    .splitlines()
    if line.strip()
]


def test_the_pair_set_is_large_and_balanced() -> None:
    assert len(PAIRS) >= 60
    assert 15 <= sum(not p["equivalent"] for p in PAIRS) <= len(PAIRS) - 15


@pytest.mark.parametrize("pair", PAIRS, ids=[p["note"] for p in PAIRS])
def test_pair(pair: dict) -> None:
    tolerance = Tolerance.from_spec(pair.get("tolerance"))
    equal, how = equivalent(pair["candidate"], pair["reference"], tolerance)
    assert equal is pair["equivalent"], how


def test_grader_beats_math_verify_alone_on_the_pairs() -> None:
    ours = sum(
        equivalent(p["candidate"], p["reference"], Tolerance.from_spec(p.get("tolerance")))[0]
        == p["equivalent"]
        for p in PAIRS
    )
    alone = sum(math_verify_equal(p["candidate"], p["reference"]) == p["equivalent"] for p in PAIRS)
    assert ours == len(PAIRS)
    assert alone < ours


def test_numbers_are_exact_unless_the_task_gives_a_tolerance() -> None:
    assert not equivalent("0.3333", "1/3")[0]
    assert equivalent("0.3333", "1/3", Tolerance(absolute=1e-3))[0]
    assert equivalent("101", "100", Tolerance(relative=0.02))[0]
    assert not equivalent("103", "100", Tolerance(relative=0.02))[0]


def test_tolerance_specs() -> None:
    assert Tolerance.from_spec(None) is None and Tolerance.from_spec(0) is None
    assert Tolerance.from_spec(0.5) == Tolerance(absolute=0.5)
    assert Tolerance.from_spec({"rel": 0.1}) == Tolerance(relative=0.1)
    with pytest.raises(ValueError):
        Tolerance.from_spec("loose")


def test_shapes() -> None:
    assert shape_of("\\{1, 2\\}").kind == "set"
    assert shape_of("(1, 2)").kind == "tuple"
    assert shape_of("[1, 2)").kind == "interval"
    assert shape_of("1, 2").kind == "list"
    assert shape_of("x + 1").kind == "scalar"


def test_normalise_strips_wrappers() -> None:
    assert normalise("$\\dfrac{1}{2}$") == "\\frac{1}{2}"
    assert normalise("\\text{Monday}.") == "Monday"
    assert normalise("1,000,000") == "1000000"
    assert normalise("oo") == "\\infty"


def test_overlong_answers_are_not_equal() -> None:
    assert equivalent("1" * 5000, "1") == (False, "answer too long")
