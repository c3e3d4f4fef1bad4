"""Red-team round three, class 7 (repositories): each test failed before its fix.

- an int answer given as a float of equal value agreed with the reference;
- the cold pyright engine never reported on `node_modules/` and `__pycache__/` directories, which the
  sandbox imports like any package;
- the repo grader never raised `special_cases_visible`, and dropped the sandbox's
  `sandbox:denied:<op>` reports;
- an agent's budgets were checked once per turn, so one turn of many sandboxed calls overran them;
- a rename "with no alias left" passed with the old name kept as an alias.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from rlvr.graders.base import make_grader
from rlvr.graders.repo.episode import Budgets, RepoEpisode
from rlvr.graders.repo.grader import RepoGrader
from rlvr.graders.repo.runner import same_value
from rlvr.graders.repo.whole_repo_types import RepoTypeChecker
from rlvr.task_packs.registry import load_pack

PACK = load_pack("repo-tasks")
BUG = next(t for t in PACK.tasks() if t.hidden["repo"] == "ledger" and t.meta["kind"] == "bug")
RENAME = PACK.get("ledger-rename-format_cents")
TYPE_ERROR = 'def broken() -> int:\n    return "not an int"\n'


@pytest.fixture(scope="module")
def grader() -> Iterator[RepoGrader]:
    with make_grader(PACK, jobs=1) as built:
        assert isinstance(built, RepoGrader)
        yield built


def test_a_float_of_equal_value_is_not_the_reference_int(grader: RepoGrader) -> None:
    assert not same_value(700, 700.0) and not same_value([1, 2], [1.0, 2])
    assert same_value(0.5, 0.5) and same_value(2.0, 2)  # a float answer may still be an exact int
    assert not same_value(1.0, 10**400)  # total: no OverflowError on a huge int
    files = dict(BUG.hidden["reference"])
    files["ledger/money.py"] = files["ledger/money.py"].replace(
        "    return -cents if negative else cents",
        "    return float(-cents if negative else cents)  # type: ignore",
    )
    verdict = grader.grade_state(BUG, files)
    assert not verdict.passed and "behaviour" in verdict.gates, verdict


@pytest.mark.parametrize("engine", ["cli", "server"])
def test_code_in_directories_pyright_skips_is_not_unchecked(engine: str) -> None:
    checker = RepoTypeChecker(engine=engine, cache_size=0)
    try:
        for directory in ("ledger/node_modules", "ledger/__pycache__"):
            state = dict(BUG.hidden["reference"]) | {
                f"{directory}/__init__.py": "",
                f"{directory}/hidden.py": TYPE_ERROR,
            }
            assert checker.check(state).failure == "unchecked_path", (engine, directory)
        assert checker.check(dict(BUG.hidden["reference"])).failure is None
    finally:
        checker.close()


def test_a_grader_refuses_the_directories_pyright_skips_as_a_scored_failure(grader: RepoGrader) -> None:
    state = dict(BUG.hidden["reference"]) | {
        "ledger/node_modules/__init__.py": "",
        "ledger/node_modules/x.py": TYPE_ERROR,
    }
    verdict = grader.grade_state(BUG, state)
    assert verdict.error is None and not verdict.passed and "unchecked_path:types" in verdict.flags


def test_keeping_the_old_name_as_an_alias_fails_and_is_flagged(grader: RepoGrader) -> None:
    """The visible tests (migrated to the new name) pass; the hidden API-surface check (the old name
    is gone) fails: a visible-only fit, flagged `special_cases_visible`."""
    files = dict(RENAME.hidden["base"])
    files["ledger/money.py"] += "\n\nrender_cents = format_cents\n"
    package = files["ledger/__init__.py"]
    files["ledger/__init__.py"] = package.replace("format_cents", "format_cents, render_cents", 1)
    verdict = grader.grade_state(RENAME, files)
    assert verdict.visible_passed is True, verdict
    assert not verdict.passed and "behaviour" in verdict.gates
    assert "special_cases_visible" in verdict.flags
    assert "must no longer exist" in verdict.feedback
    assert grader.grade_state(RENAME, RENAME.hidden["reference"]).passed


def test_refused_operations_are_reported_by_name(grader: RepoGrader) -> None:
    files = dict(BUG.hidden["reference"])
    files["ledger/__init__.py"] += (
        "\ntry:\n    open('/tmp/rlvr-h31-probe', 'w')\nexcept Exception:\n    pass\n"
    )
    verdict = grader.grade_state(BUG, files)
    assert "sandbox:denied:file_write" in verdict.flags, verdict.flags
    assert "writing" in verdict.feedback


def _calls(*codes: str) -> str:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "run_python", "arguments": {"code": code}}}
        for i, code in enumerate(codes)
    ]
    return json.dumps({"tool_calls": calls})


def test_budgets_are_spent_per_call_not_per_turn(grader: RepoGrader) -> None:
    budgets = Budgets(tool_seconds=0.6)
    episode = RepoEpisode(BUG, grader.run, grader.grade_state, budgets)
    observation = json.loads(episode.act(_calls(*["import time\ntime.sleep(0.4)\nprint(1)"] * 6)))
    assert episode.done and episode.exhausted == "tool_seconds"
    ran = [o for o in observation if not o["content"].startswith("error: the episode ended")]
    assert 1 <= len(ran) <= 3, observation
    assert "tool_seconds budget ran out" in observation[-1]["content"]
    assert episode.tool_seconds < 6 * 0.4
    assert episode.verdict is not None and "budget:tool_seconds" in episode.verdict.flags
