"""Red team 5, class 2: one candidate's content must never break the verdicts of others.

Every trusted comparison is total — any plain value the codec can carry, of any size or depth, gives
True or False, never an exception — and a fault that still happens is confined to the item that
caused it. Property-tested with hypothesis over arbitrary codec values (huge ints, NaN, infinities,
-0.0, every container, nesting past the depth limit), against every comparator a candidate's value
reaches: the code family's agreement (Python and TypeScript oracles), the program judges' data and
token comparisons, and the codec's shape check. Request bodies that the JSON parser refuses for
size or depth are a 422 with a message in `rlvr serve`, never a 500.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlvr.core import StaticPack, Task
from rlvr.core.codec import from_wire, same_shape, to_wire
from rlvr.graders.base import make_grader
from rlvr.graders.code import agreement
from rlvr.graders.code.agreement import ANY, NumberRule, ResultType, agrees, numbers_agree, same_types
from rlvr.graders.code.programs.compare import text_matches, value_matches
from rlvr.graders.code.typescript.oracle import shaped
from rlvr.specs.programs import parse_spec

HUGE = 10**4200  # the largest ints the sandbox reports are about this size


def _ints() -> st.SearchStrategy[int]:
    return st.one_of(
        st.integers(),
        st.integers(min_value=-HUGE, max_value=HUGE),
        st.sampled_from([2**53, 2**53 + 1, 2**1024, -(2**1024), HUGE, -HUGE, 10**308, 10**309]),
    )


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    _ints(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 1e308, 5e-324]),
    st.text(max_size=8),
)
HASHABLE = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.tuples(inner, inner), st.frozensets(inner, max_size=3), st.lists(inner, max_size=3).map(tuple)
    ),
    max_leaves=8,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(HASHABLE, inner, max_size=3),
        st.sets(HASHABLE, max_size=3),
        st.frozensets(HASHABLE, max_size=3),
    ),
    max_leaves=12,
)


def _nest(value: Any, depth: int, kind: int) -> Any:
    for _ in range(depth):
        value = ([value], (value,), {"k": value})[kind]
    return value


DEEP = st.builds(_nest, VALUES, st.integers(0, 90), st.integers(0, 2))
ANY_VALUE = st.one_of(VALUES, DEEP)

KINDS = ["any", "int", "float", "bool", "str", "bytes", "none", "list", "tuple", "dict", "set", "frozenset"]
RESULT_TYPES = st.recursive(
    st.sampled_from(KINDS).map(ResultType),
    lambda inner: st.one_of(
        st.builds(
            ResultType,
            st.sampled_from(["list", "tuple", "dict", "set", "frozenset", "sequence", "union"]),
            st.lists(inner, max_size=3).map(tuple),
            st.booleans(),
        )
    ),
    max_leaves=6,
)
RULES = st.builds(
    NumberRule,
    st.sampled_from([0.0, 1e-9, 1e-6, 0.5, math.inf]),
    st.sampled_from([0.0, 1e-12, 1e-6, 1.0]),
    st.booleans(),
)
SETTINGS = settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")


@SETTINGS
@given(RESULT_TYPES, ANY_VALUE, ANY_VALUE, RULES)
def test_agreement_is_total(expected_type: ResultType, expected: Any, actual: Any, rule: NumberRule) -> None:
    assert agrees(expected_type, expected, actual, rule) in (True, False)
    assert same_types(expected_type, expected, actual) in (True, False)


@SETTINGS
@given(st.one_of(_ints(), st.floats()), st.one_of(_ints(), st.floats()), RULES)
def test_number_rule_is_total(expected: int | float, actual: int | float, rule: NumberRule) -> None:
    assert numbers_agree(expected, actual, rule) in (True, False)


@SETTINGS
@given(ANY_VALUE)
def test_every_value_agrees_with_itself(value: Any) -> None:
    # the same value (through the wire, as a candidate's would arrive) agrees, unless it is nested
    # beyond the depth limit (then nothing agrees) or holds NaN dict keys / set members (no identity)
    try:
        arrived = from_wire(to_wire(value))
    except ValueError:
        return  # deeper than the codec carries: it never reaches a comparison
    if "nan" in repr(value):
        return
    assert agrees(ANY, value, arrived)


@SETTINGS
@given(ANY_VALUE, ANY_VALUE, st.sampled_from([0.0, 1e-6, 1e-3]))
def test_program_value_comparison_is_total(expected: Any, got: Any, tolerance: float) -> None:
    compare: Any = {"float": tolerance} if tolerance else "tokens"
    spec = parse_spec({"program": {"call": "f", "compare": compare, "tests": [{"args": [], "output": 0}]}})
    assert value_matches(spec, expected, got) in (True, False)


TOKENS = st.lists(
    st.one_of(
        st.from_regex(r"-?[0-9]{1,400}(\.[0-9]{0,30})?(e-?[0-9]{1,4})?", fullmatch=True),
        st.sampled_from(["nan", "inf", "-inf", "1e999", "-0", "0x10", "YES"]),
    ),
    max_size=5,
).map(" ".join)


@SETTINGS
@given(TOKENS, TOKENS, st.sampled_from([1e-9, 1e-6, 0.5]))
def test_float_token_comparison_is_total(expected: str, output: str, tolerance: float) -> None:
    spec = parse_spec({"program": {"compare": {"float": tolerance}, "tests": [{"input": "", "output": "0"}]}})
    assert text_matches(spec, "", expected, output, None) in (True, False)


@SETTINGS
@given(ANY_VALUE, ANY_VALUE)
def test_shape_check_and_typescript_reading_are_total(expected: Any, actual: Any) -> None:
    assert same_shape(expected, actual) in (True, False)
    shaped(expected, actual)


def test_the_judge_rule_is_relative_to_the_expected_value() -> None:
    judge = NumberRule.judge(1e-6)
    assert numbers_agree(1_000_000.0, 1_000_000.9, judge)
    assert not numbers_agree(1.0, 1.00001, judge)
    assert not numbers_agree(10**400, 1e308, judge) and numbers_agree(10**400, 10**400, judge)
    assert not numbers_agree(1e308, -1e308, judge)  # their difference overflows to inf


# -- a fault is confined to its item
ADD = Task(
    id="rt5/add",
    prompt='def add(a: int, b: int) -> int:\n    """a + b"""\n',
    family="code",
    hidden={
        "entry_point": "add",
        "reference": "def add(a: int, b: int) -> int:\n    return a + b\n",
        "check": None,
        "calls": [(1, 2), (3, 4)],
    },
)
POISON = 7_777_777


def test_a_comparison_that_raises_faults_only_its_own_item(monkeypatch: pytest.MonkeyPatch) -> None:
    # a stand-in for a comparator bug some value reaches: it raises for one candidate's answer only
    real_walk = agreement._walk

    def fragile(expected_type: ResultType, expected: Any, actual: Any, depth: int, **kw: Any) -> bool:
        if actual == POISON:
            raise ArithmeticError("comparator bug")
        return real_walk(expected_type, expected, actual, depth, **kw)

    monkeypatch.setattr(agreement, "_walk", fragile)
    honest = "def add(a: int, b: int) -> int:\n    return a + b\n"
    poison = f"def add(a: int, b: int) -> int:\n    return {POISON}\n"
    wrong = "def add(a: int, b: int) -> int:\n    return a - b\n"
    with make_grader(StaticPack("rt5-add", [ADD]), types=False, jobs=1) as grader:
        verdicts = grader.grade_many(["rt5/add"] * 3, [honest, poison, wrong])
    first, second, third = verdicts
    assert first.passed and first.error is None
    assert not third.passed and third.error is None
    assert second.error and second.fault == "grader" and "comparator bug" in second.error


# -- rlvr serve: bodies the parser refuses are a 4xx with a message
@pytest.mark.parametrize(
    "body",
    [
        b'{"query": [' + b"[" * 100_000 + b"]" * 100_000 + b'], "prompts": [], "labels": []}',
        b'{"query": ["x"], "prompts": [""], "labels": [' + b"9" * 5000 + b"]}",
    ],
    ids=["deep-nesting", "huge-integer"],
)
def test_serve_refuses_deep_or_huge_bodies_with_a_message(body: bytes) -> None:
    pytest.importorskip("fastapi")
    httpx = pytest.importorskip("httpx")
    from rlvr.integrations.openrlhf import create_app

    with make_grader(StaticPack("rt5-add", [ADD]), types=False, jobs=1) as grader:
        app = create_app(grader)
        transport = httpx.ASGITransport(app=app)

        async def post() -> Any:
            async with httpx.AsyncClient(transport=transport, base_url="http://rlvr") as client:
                return await client.post("/get_reward", content=body)

        import asyncio

        response = asyncio.run(post())
    assert response.status_code == 422, response.text
    assert "not valid JSON" in json.loads(response.text)["error"]
