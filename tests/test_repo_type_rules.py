"""The whole-repository type gate charges what hides code from pyright, never the idioms that do not:
a NoReturn helper, `assert_never` / `assert False` closing an exhaustive branch; its feedback names
each charged error with file and line."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlvr.graders.base import make_grader
from rlvr.graders.code.typecheck.report import diagnostics_report
from rlvr.graders.repo.grader import RepoGrader
from rlvr.graders.repo.type_rules import harmless_lines
from rlvr.task_packs.registry import load_pack

PACK = load_pack("repo-tasks")
TASK = next(t for t in PACK.tasks() if t.hidden["repo"] == "ledger" and t.meta["kind"] == "bug")
IDIOMS = '''"""Helpers written with ordinary typing idioms."""

from enum import Enum
from typing import NoReturn, assert_never


class Side(Enum):
    DEBIT = 1
    CREDIT = 2


def fail(message: str) -> NoReturn:
    raise ValueError(message)


def sign(side: Side) -> int:
    if side is Side.DEBIT:
        return -1
    elif side is Side.CREDIT:
        return 1
    else:
        assert_never(side)


def label(side: Side) -> str:
    match side:
        case Side.DEBIT:
            return "debit"
        case Side.CREDIT:
            return "credit"
    assert False, "every side is handled"


def checked(cents: int) -> int:
    if cents < 0:
        fail("negative")
    return cents
'''
HIDDEN = (
    IDIOMS
    + """

def hidden(cents: int) -> int:
    fail("always")
    return cents + "text"
"""
)


@pytest.fixture(scope="module")
def grader() -> Iterator[RepoGrader]:
    with make_grader(PACK, jobs=1) as built:
        assert isinstance(built, RepoGrader)
        yield built


def test_ordinary_idioms_cost_nothing(grader: RepoGrader) -> None:
    files = dict(TASK.hidden["reference"]) | {"ledger/sides.py": IDIOMS}
    verdict = grader.grade_state(TASK, files)
    assert verdict.components["types"].fraction == 1.0, verdict.components["types"]
    assert verdict.passed, verdict


def test_code_hidden_after_a_noreturn_call_is_charged_and_named(grader: RepoGrader) -> None:
    files = dict(TASK.hidden["reference"]) | {"ledger/sides.py": HIDDEN}
    verdict = grader.grade_state(TASK, files)
    assert verdict.components["types"].fraction == 0.5 and "types" in verdict.gates
    line = HIDDEN.splitlines().index('    return cents + "text"') + 1
    assert f"ledger/sides.py:{line}:" in verdict.feedback and "unreachable" in verdict.feedback


def test_harmless_lines() -> None:
    lines = harmless_lines(IDIOMS)
    source = IDIOMS.splitlines()
    assert source.index("        assert_never(side)") + 1 in lines
    assert source.index('    assert False, "every side is handled"') + 1 in lines
    assert source.index("    return cents") + 1 not in lines


CONSTANT_RETURN = (
    IDIOMS
    + """

def constant(cents: int) -> int:
    fail("always")
    return "text"
"""
)


def test_a_constant_of_the_wrong_type_after_a_noreturn_call_is_charged(grader: RepoGrader) -> None:
    files = dict(TASK.hidden["reference"]) | {"ledger/sides.py": CONSTANT_RETURN}
    verdict = grader.grade_state(TASK, files)
    assert verdict.components["types"].fraction == 0.5 and "types" in verdict.gates
    line = CONSTANT_RETURN.splitlines().index('    return "text"') + 1
    assert f"ledger/sides.py:{line}:" in verdict.feedback


def test_both_type_layers_share_the_unreachable_rule() -> None:
    source = (
        "def f(x: int) -> int:\n"
        "    if x > 0:\n"
        "        return x\n"
        "    else:\n"
        "        return -x\n"
        '    raise ValueError("unreachable")\n'
        "\n\n"
        "def g(x: int) -> int:\n"
        "    return x\n"
        '    return "text"\n'
    )
    unreachable = [(6, "error", "Code is unreachable"), (11, "error", "Code is unreachable")]
    report = diagnostics_report(unreachable, source)
    assert report.errors == 1 and report.messages[0].startswith("line 11:"), report
    assert harmless_lines(source) & {6, 11} == {6}
