"""Core data: a Task (public prompt + hidden spec) and the Verdict a grader returns."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Literal

Family = Literal["code", "math", "tool", "sql", "proof"]
FAMILIES: tuple[str, ...] = ("code", "math", "tool", "sql", "proof")


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

    `error` is set when grading itself failed (timeout, crash, sandbox fault, unknown task,
    malformed input): such a verdict is never a silent 0 — callers can always tell it apart.
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

    def __post_init__(self) -> None:
        if not math.isfinite(self.reward):
            self.reward = 0.0
            self.error = self.error or "non-finite reward"
        self.reward = min(1.0, max(0.0, float(self.reward)))

    def to_json(self) -> dict[str, Any]:
        """The contract line of `rlvr grade` (DESIGN §6) plus details."""
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
            "flags": list(self.flags),
        }

    @classmethod
    def failure(cls, task_id: str, error: str, *, gates: list[str] | None = None) -> Verdict:
        """A verdict for input that could not be graded at all."""
        return cls(task_id=task_id, reward=0.0, passed=False, gates=gates or ["input"], error=error)
