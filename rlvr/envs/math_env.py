"""`rlvr/Math-v0`: a math question per episode; step(text) grades the stated final answer.

Single-turn by default; with `max_turns > 1` a wrong answer gets short feedback (never the expected answer)
and another try. Any Unicode text is a valid action.
"""

from __future__ import annotations

from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.envs.families import FamilyTextEnv


class MathEnv(FamilyTextEnv):
    family = "math"

    def __init__(self, pack: str | TaskPack = "math-procedural", **kwargs: Any) -> None:
        super().__init__(pack, **kwargs)
