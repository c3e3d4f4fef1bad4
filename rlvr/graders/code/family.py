"""What the Python and TypeScript code graders share: the family and its options, and the two ends of a
batch (empty completions decided before any layer runs; each prepared candidate's verdict put back at
its place in the batch)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol, TypeVar

from rlvr.core.types import Task, Verdict
from rlvr.graders.base import Grader
from rlvr.graders.code.options import CodeOptions
from rlvr.graders.code.typecheck.report import TypeReport
from rlvr.sandbox.pool import ExecResult


class CodeFamilyGrader(Grader):
    """The code family's graders, whatever the candidate's language (options: `CodeOptions`)."""

    family = "code"
    options_class = CodeOptions
    options: CodeOptions


class Indexed(Protocol):
    @property
    def index(self) -> int: ...


Item = TypeVar("Item", bound=Indexed)


def candidates(
    tasks: list[Task], completions: list[str], verdicts: list[Verdict | None]
) -> Iterator[tuple[int, Task, str]]:
    """(index, task, completion) of each completion worth grading; an empty one gets its verdict here."""
    for index, (task, completion) in enumerate(zip(tasks, completions, strict=True)):
        if not isinstance(completion, str) or not completion.strip():
            verdicts[index] = Verdict.failure(task.id, "empty completion")
            continue
        yield index, task, completion


def place_verdicts(
    verdicts: list[Verdict | None],
    items: list[Item],
    runnable: list[Item],
    results: list[ExecResult],
    reports: list[TypeReport],
    types_seconds: float,
    verdict: Callable[[Item, ExecResult | None, TypeReport | None, float], Verdict],
) -> None:
    """Each prepared item's verdict at its index: `results` and `reports` line up with `runnable`
    (`reports` empty when types are off); the type checker's time is shared evenly over the run."""
    position = {item.index: k for k, item in enumerate(runnable)}
    share = types_seconds / max(1, len(runnable))
    for item in items:
        k = position.get(item.index)
        verdicts[item.index] = verdict(
            item,
            results[k] if k is not None else None,
            reports[k] if k is not None and reports else None,
            share,
        )
