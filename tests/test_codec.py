import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlvr.core import codec

plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=5) | st.integers(), children, max_size=4)
        | st.frozensets(st.integers() | st.text(max_size=3), max_size=4)
    ),
    max_leaves=20,
)


def same(a, b):
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return (math.isnan(a) and math.isnan(b)) or a == b
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=False))
    if type(a) is dict:
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


@given(plain)
def test_round_trip_keeps_exact_types(value):
    assert same(codec.loads(codec.dumps(value)), value)


@given(plain)
def test_zygote_copy_of_codec_agrees(value):
    zygote: dict = {"__name__": "zygote_under_test"}
    source = (Path(codec.__file__).parents[1] / "sandbox" / "zygote.py").read_text()
    exec(compile(source, "zygote.py", "exec"), zygote)
    wire = codec.to_wire(value)
    assert zygote["to_wire"](value) == wire
    assert same(zygote["from_wire"](wire), codec.from_wire(wire))


class EvilInt(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class EvilStr(str):
    pass


@pytest.mark.parametrize(
    "value", [EvilInt(1), EvilStr("x"), [EvilInt(2)], {EvilStr("k"): 1}, object(), b"bytes", 1j]
)
def test_non_plain_values_are_refused(value):
    with pytest.raises(codec.CodecError):
        codec.dumps(value)


@pytest.mark.parametrize(
    "doc", ['{"x": 1}', '{"t": 5}', '{"d": [[1]]}', "[" * 5000 + "]" * 5000, "nan", '{"s": [[1]]}']
)
def test_malformed_documents_are_refused(doc):
    with pytest.raises(codec.CodecError):
        codec.loads(doc)


def test_same_shape_distinguishes_bool_int_float():
    assert codec.same_shape([1, 2.0], [3, 4.0])
    assert not codec.same_shape(1, True)
    assert not codec.same_shape(1.0, 1)
    assert not codec.same_shape((1,), [1])
    assert codec.same_shape([1, 2], [1])  # length differences are left to the value comparison


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ({1: "a"}, {1.0: "a"}),  # equal by ==, different key types
        ({0: 1, 1: 2}, {False: 1, True: 2}),
        ({1, 2}, {1.0, 2}),
        (frozenset({1}), frozenset({True})),
        ([{(1, 2): 0}], [{(1.0, 2): 0}]),  # tuple keys, nested in a list
        ({1: {2: 3}}, {1: {2.0: 3}}),  # keys of a nested dict
        ({frozenset({1}): 0}, {frozenset({1.0}): 0}),
        ({1: [1, 2]}, {1: [1, 2.0]}),  # values under matching keys
    ],
)
def test_same_shape_is_exact_over_keys_and_members(expected, actual):
    assert expected == actual  # Python's == alone would let these through
    assert not codec.same_shape(expected, actual)
    assert codec.same_shape(expected, expected)


def test_same_shape_leaves_value_differences_to_the_value_comparison():
    assert codec.same_shape({1: "a"}, {2: "b"})
    assert codec.same_shape({1, 2}, {3})
    assert codec.same_shape({float("nan"): 1}, {float("nan"): 2})  # all NaNs are one identity
    assert not codec.same_shape({1: "a"}, {1: 2})


def test_exact_identity_keeps_types_at_every_level():
    identities = {
        codec.exact_identity(v) for v in (1, 1.0, True, (1,), (1.0,), frozenset({1}), frozenset({1.0}))
    }
    assert len(identities) == 7
    assert codec.exact_identity(-0.0) == codec.exact_identity(0.0)
    assert codec.exact_identity(float("nan")) == codec.exact_identity(float("nan"))
