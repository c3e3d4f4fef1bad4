"""The math, tool, SQL and proof environments: their shared base and Gymnasium registration."""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym

from rlvr.envs.code_env import TextTaskEnv

FAMILY_ENVS: dict[str, str] = {
    "rlvr/Math-v0": "rlvr.envs.math_env:MathEnv",
    "rlvr/Tool-v0": "rlvr.envs.tool_env:ToolEnv",
    "rlvr/SQL-v0": "rlvr.envs.sql_env:SQLEnv",
    "rlvr/Proof-v0": "rlvr.envs.proof_env:ProofEnv",
}


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


def register_family_envs() -> None:
    for env_id, entry_point in FAMILY_ENVS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point)
