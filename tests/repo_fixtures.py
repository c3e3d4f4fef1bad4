"""One-task repo packs for tests that grade a tiny hand-written repository with the real RepoGrader."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from rlvr.core.types import Task
from rlvr.graders.repo.grader import RepoGrader
from rlvr.graders.repo.prove import _Tasks
from rlvr.sandbox import make_sandbox


def repo_task(task_id: str, prompt: str, states: dict[str, dict[str, str]], scenarios: list) -> Task:
    """A repo task whose `states` holds its "base" and "reference" file trees; no domains, perf or protected paths."""
    return Task(
        id=task_id,
        prompt=prompt,
        family="repo",
        hidden={**states, "scenarios": scenarios, "domains": [], "perf": [], "protected": []},
    )


@contextmanager
def one_task_grader(task: Task, pack_name: str) -> Iterator[RepoGrader]:
    """The repo grader over a pack holding only `task`, on a local sandbox, without the type layer."""
    with make_sandbox("local", workers=2) as sandbox:
        built = RepoGrader(_Tasks([task], pack_name), sandbox=sandbox, types=False)
        try:
            yield built
        finally:
            built.close()


def one_module_task(
    task_id: str,
    prompt: str,
    module: str,
    base: str,
    reference: str,
    scenarios: list,
    tests: str | None = None,
) -> Task:
    """A repo task of one package holding one module (`module` is its path, e.g. "shop/core.py"), its
    base and reference texts, and a visible test file tests/test_<name>.py when `tests` is given."""
    package = module.split("/")[0]
    extra = {f"tests/test_{module.rsplit('/', 1)[-1]}": tests} if tests is not None else {}
    states = {
        name: {f"{package}/__init__.py": "", module: text, **extra}
        for name, text in (("base", base), ("reference", reference))
    }
    return repo_task(task_id, prompt, states, scenarios)


def edited_reference(task: Task, module: str, *edits: tuple[str, str]) -> dict[str, str]:
    """The task's reference tree with each (old, new) edit applied to `module`, where `old` occurs once."""
    text = task.hidden["reference"][module]
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return {**task.hidden["reference"], module: text}


def module_grader(task: Task, pack_name: str) -> Any:
    """A module-scoped `grader` fixture over `task` (assign it to `grader` in the test module)."""

    @pytest.fixture(scope="module")
    def grader() -> Iterator[RepoGrader]:
        with one_task_grader(task, pack_name) as built:
            yield built

    return grader


def assert_full_reward(grader: RepoGrader, task: Task, state: dict[str, str]) -> None:
    verdict = grader.grade_state(task, state)
    assert verdict.passed and verdict.reward == 1.0, verdict.feedback


def assert_fails(grader: RepoGrader, task: Task, state: dict[str, str], name: str = "") -> None:
    verdict = grader.grade_state(task, state)
    assert not verdict.passed and verdict.reward < 1.0, (name, verdict.feedback)
