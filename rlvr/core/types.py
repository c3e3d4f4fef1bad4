"""Core data: a Task (public prompt + hidden spec) and the Verdict a grader returns."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Literal

Family = Literal["code", "math", "tool", "sql", "proof", "repo"]
FAMILIES: tuple[str, ...] = ("code", "math", "tool", "sql", "proof", "repo")

# Whose fault a grading error is. `input`: the item itself could not be graded (not a string, empty,
# unknown task id, malformed line); its reward of 0 stands. The others are faults of the machinery
# (`task`: the pack's task could not be prepared; `grader`: a verifier raised; `sandbox`: the
# sandbox died or was unavailable) and say nothing about the completion: trainers drop such items.
# A failure the completion causes by its own content (a timeout, huge values, deep nesting) is not
# an error at all: it is a scored failure with a flag naming the limit.
Fault = Literal["input", "task", "grader", "sandbox"]
MACHINE_FAULTS: frozenset[str] = frozenset({"task", "grader", "sandbox"})


@dataclass(frozen=True)
class Task:
    """One task. `prompt` is all the policy ever sees; `hidden` never reaches an observation.

    `hidden` holds family-specific trusted data: for code tasks the reference solution, the entry
    point, the original tests and (later) property tests and perf budget; for math the answer.
    """

    id: str
    prompt: str
    family: str = "code"
    difficulty: int = 1
    split: str = "test"
    hidden: dict[str, Any] = field(default_factory=dict, repr=False)
    meta: dict[str, Any] = field(default_factory=dict)

    def public(self) -> dict[str, Any]:
        """The fields that may appear in an observation or a log."""
        return {
            "id": self.id,
            "prompt": self.prompt,
            "family": self.family,
            "difficulty": self.difficulty,
            "split": self.split,
            **({"meta": copy.deepcopy(self.meta)} if self.meta else {}),
        }


@dataclass
class Component:
    """One verifier layer's result: `score` in [0, max]."""

    score: float
    max: float = 1.0
    detail: str = ""

    @property
    def fraction(self) -> float:
        return 0.0 if self.max <= 0 else self.score / self.max


@dataclass
class Verdict:
    """The full result of grading one completion.

    `error` is set when grading itself failed (sandbox or grader fault, unknown task, malformed
    input): such a verdict is never a silent 0 — callers can always tell it apart, and `fault` says
    whose fault it was (an error without a stated fault is the machinery's: `grader`).
    """

    task_id: str
    reward: float = 0.0
    passed: bool = False
    components: dict[str, Component] = field(default_factory=dict)
    gates: list[str] = field(default_factory=list)
    feedback: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    flags: list[str] = field(default_factory=list)
    fault: Fault | None = None
    # Did the completion pass the examples its prompt shows? None where the task shows none (or the
    # family does not say). Beside `passed` (the hidden tests) it measures hard-coding: the hacking gap.
    visible_passed: bool | None = None
    # What was graded, by whom, how: digests of the candidate, the task, the grader's options, and the
    # pack and grader versions (set by the grader; `rlvr regrade` replays it).
    receipt: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if not math.isfinite(self.reward):
            self.reward = 0.0
            self.error = self.error or "non-finite reward"
        self.reward = min(1.0, max(0.0, float(self.reward)))
        if self.error is not None and self.fault is None:
            self.fault = "grader"
        if self.error is None:
            self.fault = None

    @property
    def disrupted(self) -> bool:
        """Grading itself failed (a fault of the machinery): the reward says nothing about the
        completion. An `input` fault (e.g. an empty completion) is the policy's own doing."""
        return self.error is not None and self.fault in MACHINE_FAULTS

    def to_json(self) -> dict[str, Any]:
        """The contract line of `rlvr grade` plus details."""
        return {
            "task_id": self.task_id,
            "reward": round(self.reward, 6),
            "passed": self.passed,
            "components": {name: round(c.score, 6) for name, c in self.components.items()},
            "components_max": {name: c.max for name, c in self.components.items()},
            "gates": list(self.gates),
            "feedback": self.feedback,
            "timings": {k: round(v, 6) for k, v in self.timings.items()},
            "error": self.error,
            "fault": self.fault,
            "visible_passed": self.visible_passed,
            "flags": list(self.flags),
            "receipt": dict(self.receipt) if self.receipt else None,
        }

    @classmethod
    def failure(cls, task_id: str, error: str, *, fault: Fault = "input") -> Verdict:
        """A verdict for an item that could not be graded at all, and whose fault that was."""
        return cls(task_id=task_id, reward=0.0, passed=False, error=error, fault=fault)


def grader_fault(task_id: str, cause: BaseException | str, *, where: str = "grader") -> Verdict:
    """The one verdict for an item whose grading machinery broke (a grader or an episode raised, a
    worker died, a batch came back short): a `grader` fault, so it is `disrupted`: trainers drop it
    and never score it against the completion. `cause` is the exception, or a sentence when none."""
    error = f"{where} fault: {type(cause).__name__}: {cause}" if isinstance(cause, BaseException) else cause
    return Verdict.failure(task_id, error, fault="grader")
