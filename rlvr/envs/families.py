"""The shared base of the math, tool, SQL and proof environments."""

from __future__ import annotations

import copy
from typing import Any

from rlvr.envs.code_env import TextTaskEnv


class FamilyTextEnv(TextTaskEnv):
    """A text env whose `info` is always fresh data: a caller may mutate what it gets back without
    touching the pack's tasks or the next step's info (Gymnasium's `check_env` verifies this)."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        observation, info = super().reset(seed=seed, options=options)
        return observation, copy.deepcopy(info)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = super().step(action)
        return observation, reward, terminated, truncated, copy.deepcopy(info)
