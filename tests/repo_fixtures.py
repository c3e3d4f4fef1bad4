"""One-task repo packs for tests that grade a tiny hand-written repository with the real RepoGrader."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

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
