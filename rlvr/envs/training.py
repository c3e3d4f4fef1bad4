"""What a trainer drives, from the env layer down: a pack, its grader (in this process or on Ray),
batch grading in which a grader that raises becomes fault verdicts, and the registered env that
plays a family's episodes. The trainer imports these from here and nothing below the env layer."""

from __future__ import annotations

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator

from rlvr.envs import ENVS
from rlvr.executors import make_executor_grader
from rlvr.graders.base import Grader, grade_or_fault
from rlvr.task_packs.registry import PackError, load_pack

__all__ = [
    "Grader",
    "PackError",
    "env_id_for_family",
    "grade_or_fault",
    "load_pack",
    "make_executor_grader",
]


def env_id_for_family(family: str) -> str | None:
    """The id of the registered rlvr env whose class grades `family` (each env class names its
    family), or None when no env does. Env modules load on first use, as `gym.make` would."""
    for env_id in ENVS:
        entry_point = gym.spec(env_id).entry_point
        creator = load_env_creator(entry_point) if isinstance(entry_point, str) else entry_point
        if getattr(creator, "family", None) == family:
            return env_id
    return None
