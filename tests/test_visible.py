"""The examples a prompt shows (what a policy can see and hard-code), read from the prompt only."""

from __future__ import annotations

from rlvr.graders.code.visible import VisibleExample, literal_outputs_in_source, visible_examples

PROMPT = '''def pairs(xs: list[int], k: int) -> list[tuple[int, int]]:
    """Pairs summing to k.
    >>> pairs([1, 2, 3], 4)
    [(1, 3)]
    >>> pairs(xs, 4)
    []
    For example: pairs([5, 5], 10) == [(5, 5)] and pairs([], 1) ➞ []
    """
'''


def test_doctest_and_prose_examples_with_literal_data_only() -> None:
    found = visible_examples(PROMPT, "pairs")
    assert found == [
        VisibleExample(([1, 2, 3], 4), [(1, 3)]),
        VisibleExample(([5, 5], 10), [(5, 5)]),
        VisibleExample(([], 1), []),
    ]


def test_other_functions_and_garbage_are_ignored() -> None:
    assert visible_examples(">>> other(1)\n2\n", "pairs") == []
    assert visible_examples("pairs((((( == ", "pairs") == []
    assert visible_examples(">>> pairs(1)\n<object at 0x1>\n", "pairs") == []


def test_lookup_tables_of_visible_outputs_are_spotted_but_ordinary_literals_are_not() -> None:
    examples = [VisibleExample((3,), 1234), VisibleExample((4,), True), VisibleExample((5,), 2)]
    assert literal_outputs_in_source("def f(n):\n    return {3: 1234}.get(n, 0)\n", examples)
    assert not literal_outputs_in_source("def f(n):\n    return n > 2 and 2 or True\n", examples)
    assert not literal_outputs_in_source("def f(n):\n    return n * 411 + 1\n", examples)
