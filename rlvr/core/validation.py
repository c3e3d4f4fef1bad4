"""What `rlvr packs validate` proves about each task, shared by every family's prover.

A family's prover grades the task's reference and a few trivial answers (a no-op, an empty or a
format-only answer) through the family's own grader and reports them as a `TaskProof`; anything
that makes the task unsound (the reference does not score 1.0, a trivial answer scores at least
`TRIVIAL_REWARD_LIMIT`, a declared check does not resolve) is a `Problem` naming the task.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlvr.core.pack import Problem

# A trivial answer (no-op, empty, format-only) that earns this much makes a task an error.
TRIVIAL_REWARD_LIMIT = 0.2


@dataclass(frozen=True)
class TaskProof:
    """The measured rewards behind one task's validation."""

    task_id: str
    reference_reward: float | None
    trivial_rewards: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    def problems(self, where: str) -> list[Problem]:
        """The problems these rewards imply (`where` names the pack or file)."""
        found: list[Problem] = []
        label = f"{where}:{self.task_id}"
        if self.reference_reward is not None and self.reference_reward < 1.0:
            found.append(
                Problem(
                    label, None, "reference", f"the reference scores {self.reference_reward:.3f}, not 1.0"
                )
            )
        for strategy, reward in sorted(self.trivial_rewards.items()):
            if reward >= TRIVIAL_REWARD_LIMIT:
                found.append(
                    Problem(
                        label,
                        None,
                        strategy,
                        f"a {strategy} answer scores {reward:.3f} (limit {TRIVIAL_REWARD_LIMIT})",
                    )
                )
        return found


@dataclass
class ValidationReport:
    """Problems plus the per-task proofs a prover measured (printed per task by the CLI)."""

    problems: list[Problem] = field(default_factory=list)
    proofs: list[TaskProof] = field(default_factory=list)
