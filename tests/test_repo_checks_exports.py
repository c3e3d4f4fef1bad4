"""`__all__` is API surface: where the reference changes a module's declared exports, what
`from module import *` binds is a hidden check (a rename that leaves `__all__` naming the old name
breaks star imports while every direct call still works)."""

from __future__ import annotations

from rlvr.graders.repo.checks import changed_exports, declared_exports, derived_checks
from rlvr.graders.repo.grader import RepoGrader
from tests.repo_fixtures import (
    assert_fails,
    assert_full_reward,
    edited_reference,
    module_grader,
    one_module_task,
)

BASE = '''__all__ = ["format_cents", "parse_cents"]


def format_cents(cents: int) -> str:
    """12345 -> "123.45"."""
    return f"{cents // 100}.{cents % 100:02d}"


def parse_cents(text: str) -> int:
    whole, _, part = text.partition(".")
    return int(whole) * 100 + int(part or 0)
'''
REFERENCE = BASE.replace('["format_cents", "parse_cents"]', '["parse_cents", "render_cents"]').replace(
    "def format_cents", "def render_cents"
)
TESTS = "from money.core import render_cents\n\n\ndef test_render() -> None:\n    assert render_cents(105) == '1.05'\n"
SCENARIOS = [
    {"kind": "call", "target": "money.core:render_cents", "args": [12345]},
    {"kind": "call", "target": "money.core:parse_cents", "args": ["1.05"]},
]
TASK = one_module_task(
    "money-rename",
    "Rename `format_cents` to `render_cents` everywhere; no alias for the old name.",
    "money/core.py",
    BASE,
    REFERENCE,
    SCENARIOS,
    tests=TESTS,
)
grader = module_grader(TASK, "money")


def test_declared_exports_reads_the_literal_and_its_extensions() -> None:
    assert declared_exports('__all__ = ["a", "b"]\n__all__ += ["c"]\n') == ("a", "b", "c")
    assert declared_exports("x = 1\n") is None
    assert declared_exports("__all__ = names()\n") == ("<computed>",)
    assert changed_exports({"m/a.py": BASE}, {"m/a.py": REFERENCE}) == ["m.a"]
    assert changed_exports({"m/a.py": BASE}, {"m/a.py": BASE}) == []


def test_the_check_is_derived_where_the_reference_changes_the_exports() -> None:
    checks = derived_checks(SCENARIOS, TASK.hidden["base"], TASK.hidden["reference"])
    assert {"kind": "exports", "target": "money.core", "derived": "api-exports"} in checks


def test_a_rename_that_leaves_all_naming_the_old_name_fails(grader: RepoGrader) -> None:
    half = edited_reference(
        TASK, "money/core.py", ('["parse_cents", "render_cents"]', '["format_cents", "parse_cents"]')
    )
    assert_fails(grader, TASK, half, "__all__ still lists format_cents")


def test_all_listing_both_names_fails(grader: RepoGrader) -> None:
    both = edited_reference(
        TASK,
        "money/core.py",
        ('["parse_cents", "render_cents"]', '["format_cents", "parse_cents", "render_cents"]'),
    )
    assert_fails(grader, TASK, both, "__all__ lists a name that no longer exists")


def test_the_same_exports_written_otherwise_pass(grader: RepoGrader) -> None:
    assert_full_reward(grader, TASK, TASK.hidden["reference"])
    reordered = edited_reference(
        TASK, "money/core.py", ('["parse_cents", "render_cents"]', "('render_cents', 'parse_cents')")
    )
    assert_full_reward(grader, TASK, reordered)


def test_the_no_op_does_not_pass(grader: RepoGrader) -> None:
    verdict = grader.grade_state(TASK, TASK.hidden["base"])
    assert not verdict.passed and verdict.reward <= 0.05, verdict.feedback
