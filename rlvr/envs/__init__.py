"""Gymnasium environments. `import rlvr` registers them under the `rlvr/` namespace."""

from __future__ import annotations

import gymnasium as gym


def register_envs() -> None:
    from rlvr.envs import vector  # noqa: F401  (registers UnicodeText shared memory for async vector envs)

    if "rlvr/Code-v0" not in gym.registry:
        gym.register(
            id="rlvr/Code-v0",
            entry_point="rlvr.envs.code_env:CodeEnv",
            vector_entry_point="rlvr.envs.vector:make_batched_vector_env",  # one grading batch per step
            disable_env_checker=False,
        )
    try:
        from rlvr.envs.families import register_family_envs
    except ImportError:  # families not part of this build
        return
    register_family_envs()
