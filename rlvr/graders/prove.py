"""Prove tasks through their own grader: the reference must pass every gate with reward 1.0, trivial
answers (empty, no-op, format-only) must stay below `TRIVIAL_REWARD_LIMIT`.

Each family's `prove.py` says what its reference completion and its trivial answers are, and adds the
checks only it can make (a declared check that must resolve, a tool schema that must be well-formed);
`prove_with_grader` grades everything in one batch (one type-checker run, one sandbox pass for code) and
turns the verdicts into `TaskProof`s and `Problem`s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rlvr.core.pack import Problem, StaticPack, TaskPack
from rlvr.core.types import Task, Verdict
from rlvr.core.validation import TaskProof, ValidationReport
from rlvr.graders.base import Grader, grade_or_fault, make_grader


@dataclass(frozen=True)
class Trials:
    """What a prover grades for one task: the reference as a completion (None: the task has none to
    grade, a problem already says why) and the trivial answers by strategy name."""

    reference: str | None
    trivial: dict[str, str] = field(default_factory=dict)
    problems: tuple[tuple[str | None, str], ...] = ()  # (field, message) found while building them


def grader_for(
    where: str, tasks: list[Task], family: str, pack: TaskPack | None, options: dict[str, Any]
) -> Grader:
    """The pack's own grader (its weights and options), or one over a static pack of the tasks."""
    source = pack if pack is not None else StaticPack(where, tasks, family=family)
    return make_grader(source, **options)


def _reference_problem(verdict: Verdict) -> str | None:
    if verdict.passed and verdict.reward >= 1.0 - 1e-9 and verdict.error is None:
        return None
    short = [
        f"{name} {component.fraction:.2f}" + (f" ({component.detail[:120]})" if component.detail else "")
        for name, component in verdict.components.items()
        if component.max > 0 and component.fraction < 1.0
    ]
    why = verdict.error or verdict.feedback or "; ".join(short) or "no feedback"
    gates = f", failed gate(s) {', '.join(verdict.gates)}" if verdict.gates else ""
    return f"the reference does not pass: reward {verdict.reward:.3f}{gates}: {why[:300]}"


def prove_with_grader(
    where: str,
    tasks: list[Task],
    grader: Grader,
    trials_of: Callable[[Task], Trials],
    *,
    progress: Callable[[int], None] | None = None,
) -> ValidationReport:
    """Grade every task's reference and trivial answers in one batch and report what they prove."""
    report = ValidationReport()
    started = time.perf_counter()
    items: list[tuple[int, str | None]] = []  # (task index, strategy; None = the reference)
    task_ids: list[str] = []
    completions: list[str] = []
    trials = [trials_of(task) for task in tasks]
    for index, (task, trial) in enumerate(zip(tasks, trials, strict=True)):
        for name, message in trial.problems:
            report.problems.append(Problem(f"{where}:{task.id}", None, name, message))
        if trial.reference is not None:
            items.append((index, None))
            task_ids.append(task.id)
            completions.append(trial.reference)
        for strategy, text in trial.trivial.items():
            items.append((index, strategy))
            task_ids.append(task.id)
            completions.append(text)
    verdicts: list[Verdict] = []
    batch = 64
    for start in range(0, len(completions), batch):
        verdicts += grade_or_fault(
            grader, task_ids[start : start + batch], completions[start : start + batch]
        )
        if progress is not None:
            progress(min(len(completions), start + batch))
    seconds = (time.perf_counter() - started) / max(1, len(tasks))
    reference: dict[int, float] = {}
    trivial: dict[int, dict[str, float]] = {index: {} for index in range(len(tasks))}
    for (index, strategy), verdict in zip(items, verdicts, strict=True):
        task = tasks[index]
        if strategy is None:
            reference[index] = verdict.reward
            problem = _reference_problem(verdict)
            if problem is not None:
                report.problems.append(Problem(f"{where}:{task.id}", None, "reference", problem))
        else:
            trivial[index][strategy] = verdict.reward
    for index, task in enumerate(tasks):
        proof = TaskProof(task.id, reference.get(index), trivial[index], seconds)
        report.proofs.append(proof)
        # the reference's own problem is reported above with its gates and feedback
        report.problems += [p for p in proof.problems(where) if p.field != "reference"]
    return report
