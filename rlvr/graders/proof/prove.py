"""`rlvr packs validate` for derivations: the task's `reference` chain must prove its goal with every
step checked (reward 1.0), and trivial answers must stay below the trivial-reward limit: an empty
completion, the left side alone, and the goal restated as one step (which the process gate refuses).
"""

from __future__ import annotations

import re
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.core.validation import ValidationReport
from rlvr.graders.prove import Trials, grader_for, prove_with_grader

_RELATION = re.compile(r"\\leq|\\geq|\\le|\\ge|<=|>=|≤|≥|=|<|>")


def task_trials(task: Task) -> Trials:
    goal = str(task.hidden.get("goal") or "")
    match = _RELATION.search(goal)
    trivial = {"empty": ""}
    if match:
        left, right = goal[: match.start()].strip(), goal[match.end() :].strip()
        trivial["no-op"] = left
        trivial["restated-goal"] = f"{left}\n{match.group(0)} {right}"
    reference = task.hidden.get("reference")
    if not isinstance(reference, str) or not reference.strip():
        problem = (
            "reference",
            "missing: a derivation that proves the goal (one step a line) is needed to validate",
        )
        return Trials(None, trivial, (problem,))
    return Trials(reference, trivial)


def prove_proof_tasks(
    where: str, tasks: list[Task], *, pack: TaskPack | None = None, **options: Any
) -> ValidationReport:
    grader = grader_for(where, tasks, "proof", pack, options)
    try:
        return prove_with_grader(where, tasks, grader, task_trials)
    finally:
        grader.close()
