"""`rlvr packs validate` for a named code pack (built-in, e.g. `kata` or `humaneval`, or a plugin).

Each problem names the task and the field, like directory-pack validation. A task is valid when
its id is unique, its split/difficulty are sane, its hidden spec has what the code grader needs,
the reference compiles and defines the entry point, and the trusted oracle (with its generated
tests) can be built from it.
"""

from __future__ import annotations

from collections.abc import Iterable

from rlvr.core.pack import Problem, TaskPack
from rlvr.core.types import Task
from rlvr.graders.code.oracle import OracleCache, OracleError
from rlvr.graders.code.properties.suite import PropertySpecError, PropertyTests

SPLITS = ("train", "test")


def validate_tasks(pack_name: str, tasks: Iterable[Task]) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[str] = set()
    oracles = OracleCache(generate=PropertyTests())

    def problem(task: Task, field: str | None, message: str) -> None:
        problems.append(Problem(f"{pack_name}:{task.id}", None, field, message))

    for task in tasks:
        if task.id in seen:
            problem(task, "id", "duplicate task id")
        seen.add(task.id)
        if task.split not in SPLITS:
            problem(task, "split", f"must be one of {', '.join(SPLITS)}")
        if not 1 <= task.difficulty <= 5:
            problem(task, "difficulty", "must be 1-5")
        if not task.prompt.strip():
            problem(task, "prompt", "empty")
        for key in ("entry_point", "reference"):
            if not isinstance(task.hidden.get(key), str) or not task.hidden[key].strip():
                problem(task, key, "missing from the hidden spec")
        reference = str(task.hidden.get("reference", "")).strip()
        if reference and reference in task.prompt:
            problem(task, "prompt", "the prompt contains the reference solution")
        try:
            oracle = oracles.get(task)
        except (OracleError, PropertySpecError) as exc:
            problem(task, "hidden", str(exc))
            continue
        if oracle.generated_start is not None and oracle.generated_start == len(oracle.calls):
            problem(task, "properties", "no generated hidden input survived the task's own filters")
        if any(e.raises is not None for e in oracle.expected) and task.hidden.get("driver") is None:
            problem(task, "properties", "the reference raises on a hidden input")
    return problems


def validate_code_pack(pack: TaskPack) -> list[Problem]:
    """Every task of the pack's default listing (all splits)."""
    return validate_tasks(pack.name, pack.tasks())
