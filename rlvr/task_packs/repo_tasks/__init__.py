"""The built-in `repo-tasks` pack: reference repositories (package data under `data/`) and tasks on them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rlvr.core.pack import Problem, TaskPack
from rlvr.core.types import Task

DATA_DIR = Path(__file__).parent / "data"


class RepoTasksPack(TaskPack):
    name = "repo-tasks"
    family = "repo"
    version = "1"
    description = (
        "Coding-agent tasks on 9 small typed Python repositories (bugs, removed features, renames, "
        "schema migrations); test split = held-out repositories (router, configloader, bookings on "
        "sqlite), with every kind of task."
    )

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or DATA_DIR
        super().__init__()

    def _load(self) -> Iterable[Task]:
        from rlvr.task_packs.directory import PackValidationError
        from rlvr.task_packs.repo_tasks.format import read_repo_tasks

        tasks, problems = read_repo_tasks(self.root)
        if problems:
            raise PackValidationError(problems)
        return tasks

    def validate(self) -> list[Problem]:
        """`rlvr packs validate repo-tasks`: every problem of the pack's data (file, line, field)."""
        from rlvr.task_packs.repo_tasks.format import read_repo_tasks

        return read_repo_tasks(self.root)[1]
