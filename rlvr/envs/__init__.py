"""Gymnasium environments. `import rlvr` registers them under the `rlvr/` namespace.

Registration names entry points as strings (as Gymnasium's own environments do), so importing rlvr
loads no environment, grader, sandbox or trainer module: each is imported when an env is made.
"""

from __future__ import annotations

import gymnasium as gym

ENVS: dict[str, str] = {
    "rlvr/Code-v0": "rlvr.envs.code_env:CodeEnv",
    "rlvr/Math-v0": "rlvr.envs.math_env:MathEnv",
    "rlvr/Tool-v0": "rlvr.envs.tool_env:ToolEnv",
    "rlvr/SQL-v0": "rlvr.envs.sql_env:SQLEnv",
    "rlvr/Proof-v0": "rlvr.envs.proof_env:ProofEnv",
    "rlvr/Repo-v0": "rlvr.envs.repo_env:RepoEnv",
}
# Envs whose `gym.make_vec` builds one grading batch per step by default.
VECTOR_ENTRY_POINTS: dict[str, str] = {
    "rlvr/Code-v0": "rlvr.envs.vector:make_batched_vector_env",
}


def register_envs() -> None:
    for env_id, entry_point in ENVS.items():
        if env_id in gym.registry:
            continue
        vector_entry_point = VECTOR_ENTRY_POINTS.get(env_id)
        if vector_entry_point is None:
            gym.register(id=env_id, entry_point=entry_point)
        else:
            gym.register(id=env_id, entry_point=entry_point, vector_entry_point=vector_entry_point)
