"""Outcomes compared as the repository's own tests compare them (issue 31): `==` semantics for named
tuples, dict subclasses, IntEnums and dataclass fields with compare=False, and the exact type only
where the reference's return annotation names a repository class the agent can see."""

from __future__ import annotations

import pytest

from rlvr.graders.repo.checks import exact_return_types, visible_words
from rlvr.graders.repo.grader import RepoGrader
from tests.repo_fixtures import (
    edited_reference,
    module_grader,
    one_module_task,
)

REFERENCE = '''"""Shapes."""

import dataclasses
import enum
from collections import defaultdict
from typing import NamedTuple


class Point(NamedTuple):
    x: int
    y: int


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Item:
    name: str
    note: str = dataclasses.field(default="", compare=False)


def point(x: int) -> tuple[int, int]:
    return Point(x, x + 1)


def counts(words: list[str]) -> dict[str, int]:
    out: defaultdict[str, int] = defaultdict(int)
    for word in words:
        out[word] += 1
    return out


def level(n: int) -> int:
    return Level.HIGH if n > 1 else Level.LOW


def item(name: str) -> Item:
    return Item(name, "made")


def corner(x: int) -> Point:
    return Point(x, x)
'''
BASE = REFERENCE.replace("return Point(x, x + 1)", "return Point(x, x)")
SCENARIOS = [
    {"kind": "call", "target": "shapes.core:point", "args": [1]},
    {"kind": "call", "target": "shapes.core:counts", "args": [["a", "b", "a"]]},
    {"kind": "call", "target": "shapes.core:level", "args": [2]},
    {"kind": "call", "target": "shapes.core:item", "args": ["a"]},
    {"kind": "call", "target": "shapes.core:corner", "args": [3]},
]


TASK = one_module_task(
    "shapes", "`point(x)` should return the point (x, x + 1).", "shapes/core.py", BASE, REFERENCE, SCENARIOS
)


grader = module_grader(TASK, "shapes")


def _with(old: str, new: str) -> dict[str, str]:
    return edited_reference(TASK, "shapes/core.py", (old, new))


EQUAL = {
    "a plain tuple for a named tuple": _with("return Point(x, x + 1)", "return (x, x + 1)"),
    "a dict for a defaultdict": _with(
        "    out: defaultdict[str, int] = defaultdict(int)\n    for word in words:\n        out[word] += 1\n",
        "    out: dict[str, int] = {}\n    for word in words:\n        out[word] = out.get(word, 0) + 1\n",
    ),
    "an int for an IntEnum": _with("return Level.HIGH if n > 1 else Level.LOW", "return 2 if n > 1 else 1"),
    "another value of a compare=False field": _with(
        'return Item(name, "made")', 'return Item(name, "other")'
    ),
}


def test_only_annotations_naming_a_visible_repository_class_fix_the_type() -> None:
    visible = visible_words(TASK.prompt, TASK.hidden["base"])
    exact = exact_return_types(TASK.hidden["reference"], visible)
    assert exact == {"shapes.core:item": "Item", "shapes.core:corner": "Point"}
    assert exact_return_types(TASK.hidden["reference"], frozenset()) == {}


@pytest.mark.parametrize("name", sorted(EQUAL))
def test_values_equal_under_eq_pass(grader: RepoGrader, name: str) -> None:
    verdict = grader.grade_state(TASK, EQUAL[name])
    assert verdict.passed and verdict.reward == 1.0, (name, verdict.feedback)


def test_a_plain_tuple_where_the_annotation_names_the_class_fails(grader: RepoGrader) -> None:
    verdict = grader.grade_state(TASK, _with("    return Point(x, x)\n", "    return (x, x)\n"))
    assert not verdict.passed and "shapes.core:corner" in verdict.feedback, verdict.feedback


def test_reference_passes_and_noop_scores_zero(grader: RepoGrader) -> None:
    assert grader.grade_state(TASK, TASK.hidden["reference"]).reward == 1.0
    assert grader.grade_state(TASK, TASK.hidden["base"]).reward == 0.0
