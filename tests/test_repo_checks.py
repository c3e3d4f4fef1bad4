"""Hidden checks over the domain (derived from the task's scenarios and states) and the comparison
semantics of repository outcomes, on a small synthetic repository graded by the real repo grader."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlvr.core.types import Task
from rlvr.graders.repo.checks import derived_checks, removed_names
from rlvr.graders.repo.grader import RepoGrader
from rlvr.graders.repo.prove import _Tasks
from rlvr.sandbox import make_sandbox

CORE = '''"""Shop helpers."""

import argparse
import dataclasses
from collections import defaultdict
from enum import IntEnum
from typing import NamedTuple


class Level(IntEnum):
    LOW = 1
    HIGH = 2


class Pair(NamedTuple):
    left: int
    right: int


@dataclasses.dataclass
class Item:
    name: str
    cents: int
    note: str = dataclasses.field(default="", compare=False)


def tidy(names: list[str]) -> list[str]:
    """A new list: names stripped and lower-cased; the argument is not changed."""
    return [name.strip().lower() for name in names]


def level(cents: int) -> Level:
    return Level.HIGH if cents >= 100 else Level.LOW


def pair(a: int, b: int) -> Pair:
    return Pair(min(a, b), max(a, b))


def tally(words: list[str]) -> dict[str, int]:
    counts: defaultdict[str, int] = defaultdict(int)
    for word in words:
        counts[word] += 1
    return counts


def item(name: str, cents: int) -> Item:
    return Item(name, cents, note="made by core")


def old_total(cents: list[int]) -> int:
    return sum(cents)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="shop")
    parser.add_argument("cents", type=int)
    args = parser.parse_args(argv)
    print(int(level(args.cents)))
    return 0
'''
REFERENCE = CORE.replace("def old_total(", "def total(")
BASE = CORE.replace("name.strip().lower()", "name.strip()")  # the bug: case kept
SCENARIOS = [
    {"kind": "call", "target": "shop.core:tidy", "args": [["  Ann ", "BOB"]]},
    {"kind": "call", "target": "shop.core:level", "args": [150]},
    {"kind": "call", "target": "shop.core:pair", "args": [3, 1]},
    {"kind": "call", "target": "shop.core:tally", "args": [["a", "b", "a"]]},
    {"kind": "call", "target": "shop.core:item", "args": ["x", 5]},
    {"kind": "cli", "target": "shop.core:main", "argv": ["150"]},
]


def _task(base: str) -> Task:
    tests = "from shop.core import tidy\n\n\ndef test_tidy() -> None:\n    assert tidy([' A ']) == ['a']\n"
    states = {
        name: {"shop/__init__.py": "", "shop/core.py": text, "tests/test_core.py": tests}
        for name, text in (("base", base), ("reference", REFERENCE))
    }
    return Task(
        id="shop-tidy",
        prompt="tidy keeps upper case letters: tidy(['BOB']) gives ['BOB'], expected ['bob']. old_total is gone.",
        family="repo",
        hidden={**states, "scenarios": SCENARIOS, "domains": [], "perf": [], "protected": []},
    )


TASK = _task(BASE)


@pytest.fixture(scope="module")
def grader() -> Iterator[RepoGrader]:
    with make_sandbox("local", workers=2) as sandbox:
        built = RepoGrader(_Tasks([TASK], "shop"), sandbox=sandbox, types=False)
        yield built
        built.close()


def _state(text: str, **extra: str) -> dict[str, str]:
    return {**TASK.hidden["reference"], "shop/core.py": text, **extra}


def test_derived_checks_cover_arity_flags_boundaries_and_the_api_surface() -> None:
    derived = derived_checks(SCENARIOS, TASK.hidden["base"], TASK.hidden["reference"])
    kinds = {check["derived"] for check in derived}
    assert {"api-surface", "cli-domain", "call-domain"} <= kinds
    assert removed_names({"m.py": "def a(): pass\ndef b(): pass\n"}, {"m.py": "def a(): pass\n"}) == ["m:b"]
    argvs = [c["argv"] for c in derived if c["kind"] == "cli"]
    assert ["150", "--rlvr-unknown-option"] in argvs and [] in argvs
    assert derived == derived_checks(
        SCENARIOS, TASK.hidden["base"], TASK.hidden["reference"]
    )  # deterministic


def test_reference_passes_and_noop_scores_zero(grader: RepoGrader) -> None:
    assert grader.grade_state(TASK, TASK.hidden["reference"]).reward == 1.0
    assert grader.grade_state(TASK, TASK.hidden["base"]).reward == 0.0


def test_equal_under_eq_is_equal(grader: RepoGrader) -> None:
    """A dict for the defaultdict and another note (a field `==` ignores) behave as the reference does;
    a plain tuple for the NamedTuple and an int for the IntEnum do not where the reference's return
    annotation names the class (`-> Pair`, `-> Level`: the exact type is part of the behaviour there;
    tests/test_repo_comparison_semantics.py has them passing where it does not)."""
    text = REFERENCE.replace("    return counts\n", "    return dict(counts)\n").replace(
        'note="made by core"', 'note="another note"'
    )
    verdict = grader.grade_state(TASK, _state(text))
    assert verdict.passed, verdict.feedback
    retyped = text.replace(
        "return Pair(min(a, b), max(a, b))", "return (min(a, b), max(a, b))  # type: ignore"
    ).replace(
        "return Level.HIGH if cents >= 100 else Level.LOW",
        "return 2 if cents >= 100 else 1  # type: ignore",
    )
    verdict = grader.grade_state(TASK, _state(retyped))
    assert not verdict.passed and "shop.core:pair" in verdict.feedback, verdict.feedback


@pytest.mark.parametrize(
    "name, old, new",
    [
        (
            "mutates its argument",
            "    return [name.strip().lower() for name in names]",
            "    names[:] = [name.strip().lower() for name in names]\n    return names",
        ),
        (
            "accepts unknown flags",
            "args = parser.parse_args(argv)",
            "args, _ = parser.parse_known_args(argv)",
        ),
        (
            "keeps an alias",
            "def total(",
            "def old_total(cents: list[int]) -> int:\n    return sum(cents)\n\n\ndef total(",
        ),
        (
            "swallows bad input",
            "def level(cents: int) -> Level:\n",
            "def level(cents: int) -> Level:\n    if not isinstance(cents, int):\n        return Level.LOW\n",
        ),
        ("normalises more", "        counts[word] += 1", "        counts[word.strip().lower()] += 1"),
    ],
)
def test_plausible_wrong_fixes_fail(grader: RepoGrader, name: str, old: str, new: str) -> None:
    assert old in REFERENCE
    verdict = grader.grade_state(TASK, _state(REFERENCE.replace(old, new)))
    assert not verdict.passed and "behaviour" in verdict.gates, (name, verdict.feedback)


def test_a_test_module_inside_the_package_is_a_protected_edit(grader: RepoGrader) -> None:
    verdict = grader.grade_state(
        TASK, _state(REFERENCE, **{"shop/test_core.py": "def test() -> None:\n    pass\n"})
    )
    assert verdict.reward == 0.0 and "protected_path_edit" in verdict.flags and "test_tamper" in verdict.flags


def test_names_added_outside_the_reference_are_reported(grader: RepoGrader) -> None:
    verdict = grader.grade_state(TASK, _state(REFERENCE + "\n\ndef helper() -> int:\n    return 1\n"))
    assert verdict.passed and "shop.core:helper" in verdict.components["patch"].detail


def test_touched_functions_are_called_over_their_annotated_domain() -> None:
    from rlvr.graders.repo.checks import annotation_checks

    calls = annotation_checks(TASK.hidden["base"], TASK.hidden["reference"])
    targets = {call["target"] for call in calls}
    # tidy changed (list[str]); total is new (list[int]); untouched functions are not called
    assert targets == {"shop.core:tidy", "shop.core:total"}
    assert any(c["args"] == [["b", "a", "b"]] for c in calls if c["target"] == "shop.core:tidy")
