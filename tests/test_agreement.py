"""Agreement between a candidate's result and the reference's: types as far as the task fixes them."""

from __future__ import annotations

import pytest

from rlvr.graders.code.agreement import ANY, ResultType, agrees, examples_type, result_type, same_types


def typed(annotation: str, docstring: str = "") -> ResultType:
    doc = f'    """{docstring}"""\n' if docstring else ""
    return result_type([f"from typing import *\n\n\ndef f(x){annotation}:\n{doc}    ...\n"], "f")


@pytest.mark.parametrize(
    ("annotation", "expected", "actual"),
    [
        (" -> dict[int, int]", {1: 2}, {1.0: 2}),
        (" -> Dict[int, str]", {0: "a", 1: "b"}, {False: "a", True: "b"}),
        ("", {1: 2}, {1.0: 2}),  # keys are identities even where nothing fixes their type
        (" -> set[int]", {1, 2}, {1.0, 2}),
        (" -> list[frozenset[int]]", [frozenset({1})], [frozenset({True})]),
        (" -> dict[tuple[int, int], int]", {(1, 2): 0}, {(1.0, 2): 0}),
        (" -> int", 3, 3.0),
        (" -> int", 1, True),
        ("", 1, True),  # bool never agrees with a number
        (" -> float", 1.0, True),
        (" -> tuple[int, int]", (1, 2), [1, 2]),
        ("", (1, 2), [1, 2]),
        (" -> list[int]", [1, 2], [1, 2.0]),
        (" -> int", 2**200, float(2**200)),
        (" -> float", float("inf"), float("-inf")),
        (" -> float", float("nan"), 0.0),
        (" -> float", 10**400, 1e308),  # an int beyond float range is no float's equal
    ],
)
def test_disagreements(annotation: str, expected: object, actual: object) -> None:
    assert not agrees(typed(annotation), expected, actual)


@pytest.mark.parametrize(
    ("annotation", "expected", "actual"),
    [
        (" -> float", 2.0, 2),  # float documented: an int that agrees passes
        (" -> Optional[float]", 2.5, 2.5000000000000004),
        (" -> list[float]", [0.6000000000000001], [0.6]),  # a reordered sum
        (" -> float", float("nan"), float("nan")),
        (" -> float", -0.0, 0.0),
        (" -> float", float("inf"), float("inf")),
        ("", 3, 3.0),  # nothing fixes the type
        (" -> list", [1, 2], [1.0, 2]),  # bare list: elements not fixed
        (" -> Sequence[int]", [1, 2], (1, 2)),
        (" -> int", 10**400, 10**400),
        (" -> dict[float, int]", {1.0: 2}, {1: 2}),  # float keys documented
        (" -> Union[int, float]", 1, 1.0),
        (" -> Optional[int]", None, None),
    ],
)
def test_agreements(annotation: str, expected: object, actual: object) -> None:
    assert agrees(typed(annotation), expected, actual)


def test_the_type_comes_from_the_docstring_when_there_is_no_annotation() -> None:
    assert typed("", ":rtype: int").kind == "int"
    assert typed("", "Returns:\n        float: the mean").kind == "float"
    assert not agrees(typed("", ":rtype: int"), 3, 3.0)


def test_examples_fix_the_type_where_they_agree() -> None:
    counts = "Count letters.\n    >>> f('aab')\n    {'a': 2, 'b': 1}\n    f('') == {}\n"
    assert typed("", counts) == ResultType("dict", (ResultType("str"), ResultType("int")))
    assert not agrees(typed("", counts), {"a": 2}, {"a": 2.0})
    mixed = ">>> f([3, 1, 2])\n    2\n    >>> f([1, 2])\n    1.5\n"
    assert typed("", mixed).kind == "float" and agrees(typed("", mixed), 2, 2.0)
    assert examples_type("f(x) ➞ True\n    f(y) ➞ 'no'", "f") == ANY  # examples disagree: not fixed
    assert examples_type("no examples here", "f") == ANY


def test_a_reference_value_outside_its_annotation_is_what_counts() -> None:
    wrong_annotation = typed(" -> int")
    assert agrees(wrong_annotation, "a", "a") and not agrees(wrong_annotation, "a", "b")


def test_same_types_ignores_values_but_not_types() -> None:
    t = typed(" -> dict[int, list[int]]")
    assert same_types(t, {1: [1, 2]}, {2: [3]})  # different values: the task's check decides
    assert not same_types(t, {1: [1]}, {1.0: [1]})
    assert not same_types(t, {1: [1]}, {1: [1.0]})
    assert not same_types(typed(" -> set[int]"), {1}, {True})


def test_deep_values_do_not_raise() -> None:
    deep: list[object] = []
    for _ in range(500):
        deep = [deep]
    assert not agrees(ANY, deep, deep)  # beyond the depth limit nothing agrees, and nothing raises
