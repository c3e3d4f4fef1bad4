"""Which training tasks a step draws, and how many samples each gets.

Curriculum: the pool starts at the easiest difficulty and admits the next level once the recent
pass rate on the pool reaches a threshold. Difficulty-adaptive G: harder tasks get more samples
(seed 000 §5.3), linearly from `group_size` at the easiest level to `group_size_max` at the
hardest, so a rarely solved task still tends to have one success in its group.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from rlvr.core.types import Task


def up_to_difficulty(tasks: list[Task], level: int) -> list[Task]:
    """The tasks of difficulty <= `level` (every task when `level` is 0)."""
    return [t for t in tasks if not level or t.difficulty <= level]


def group_size_for(difficulty: int, low: int, high: int, group_size: int, group_size_max: int) -> int:
    if group_size_max <= group_size or high <= low:
        return group_size
    fraction = (min(max(difficulty, low), high) - low) / (high - low)
    return group_size + round(fraction * (group_size_max - group_size))


@dataclass
class Curriculum:
    tasks: list[Task]
    enabled: bool
    threshold: float
    window: int
    level: int = 0
    recent: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.tasks:
            raise ValueError("the curriculum needs at least one training task")
        self.levels = sorted({t.difficulty for t in self.tasks})
        if not self.enabled:
            self.level = self.levels[-1]
        elif self.level not in self.levels:
            self.level = self.levels[0]

    def pool(self) -> list[Task]:
        return [t for t in self.tasks if t.difficulty <= self.level]

    def draw(self, count: int, rng: random.Random) -> list[Task]:
        """`count` tasks from the pool, without repeats while the pool lasts."""
        pool = self.pool()
        picked: list[Task] = []
        while len(picked) < count:
            picked.extend(rng.sample(pool, min(len(pool), count - len(picked))))
        return picked

    def observe(self, pass_rate: float) -> bool:
        """Record a step's pass rate on the pool; True when the level went up."""
        self.recent = (self.recent + [pass_rate])[-self.window :]
        ready = len(self.recent) >= self.window and sum(self.recent) / len(self.recent) >= self.threshold
        if self.enabled and ready and self.level != self.levels[-1]:
            self.level = self.levels[self.levels.index(self.level) + 1]
            self.recent = []
            return True
        return False

    def state(self) -> dict[str, Any]:
        return {"level": self.level, "recent": list(self.recent)}

    def load_state(self, state: dict[str, Any]) -> None:
        self.level, self.recent = int(state["level"]), list(state["recent"])
