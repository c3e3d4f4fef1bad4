"""`rlvr packs validate` for math tasks: the answer, stated as a model would (`\\boxed{...}`), must be
judged equal to itself under the task's settings (reward 1.0), and trivial answers must earn less than
the trivial-reward limit: an empty completion, a refusal, a stated answer that is not math
(`\\boxed{hello world}`) and the prompt echoed back (a task whose prompt already states its answer).
"""

from __future__ import annotations

from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.core.validation import ValidationReport
from rlvr.graders.prove import Trials, grader_for, prove_with_grader


def task_trials(task: Task) -> Trials:
    answer = task.hidden.get("answer")
    trivial = {
        "empty": "",
        "no-op": "I cannot solve this.",
        "format-only": "The answer is \\boxed{hello world}.",
        "echo": task.prompt,
    }
    if answer is None:
        return Trials(None, trivial, (("answer", "missing: the task has no answer to check against"),))
    if task.hidden.get("reasoning_gym") is not None:  # the generator's scorer reads its own answer form
        return Trials(f"Answer: {answer}", trivial)
    return Trials(f"The answer is \\boxed{{{answer}}}.", trivial)


def prove_math_tasks(
    where: str, tasks: list[Task], *, pack: TaskPack | None = None, **options: Any
) -> ValidationReport:
    grader = grader_for(where, tasks, "math", pack, options)
    try:
        return prove_with_grader(where, tasks, grader, task_trials)
    finally:
        grader.close()
