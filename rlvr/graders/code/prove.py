"""`rlvr packs validate` for code tasks (Python or TypeScript, functions or whole programs).

Besides the structural checks of `validation.validate_tasks` (the hidden spec resolves: the reference
defines the entry point, passes its own `check`, the oracle and its generated inputs can be built), the
task's reference is graded as a candidate and must pass every layer with reward 1.0, and two trivial
answers must stay below the trivial-reward limit: an empty completion and a no-op that defines the entry
point and returns nothing (for a program: one that prints nothing).
"""

from __future__ import annotations

from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.core.validation import ValidationReport
from rlvr.graders.code.validation import validate_tasks
from rlvr.graders.prove import Trials, grader_for, prove_with_grader


def task_trials(task: Task, language: str = "python") -> Trials:
    hidden = task.hidden
    if "program" in hidden:
        program = hidden["program"] if isinstance(hidden["program"], dict) else {}
        call = program.get("call")
        if isinstance(call, str) and call:
            noop = f"def {call}(*args, **kwargs):\n    return None\n"
        else:
            noop = "pass\n"
        reference = program.get("reference")
        return Trials(reference if isinstance(reference, str) else None, {"empty": "", "no-op": noop})
    entry = str(hidden.get("entry_point") or "solution")
    if language == "typescript":
        noop = f"function {entry}(..._args: unknown[]): undefined {{\n  return undefined;\n}}\n"
        reference = hidden.get("ts_reference")  # the Python reference is the oracle, not a TS candidate
        return Trials(reference if isinstance(reference, str) else None, {"empty": "", "no-op": noop})
    noop = f"def {entry}(*args, **kwargs):\n    return None\n"
    reference = hidden.get("reference")
    return Trials(reference if isinstance(reference, str) else None, {"empty": "", "no-op": noop})


def prove_code_tasks(
    where: str, tasks: list[Task], *, pack: TaskPack | None = None, **options: Any
) -> ValidationReport:
    """Structural checks, then the reference and trivial answers graded by the pack's code grader."""
    report = ValidationReport()
    functions = [task for task in tasks if "program" not in task.hidden]
    report.problems += validate_tasks(where, functions)
    broken = {problem.file.removeprefix(f"{where}:") for problem in report.problems}
    gradable = [task for task in tasks if task.id not in broken]
    if not gradable:
        return report
    language = str(getattr(pack, "language", "python") or "python")
    grader = grader_for(where, gradable, "code", pack, options)
    try:
        proved = prove_with_grader(where, gradable, grader, lambda task: task_trials(task, language))
    finally:
        grader.close()
    report.problems += proved.problems
    report.proofs += proved.proofs
    return report
