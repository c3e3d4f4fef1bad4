"""rlvr: reinforcement learning with verifiable rewards.

Every task is a Gymnasium environment (`gymnasium.make("rlvr/Code-v0", pack="humaneval")` after
`import rlvr`) whose `step()` grades model text with sandboxed, machine-checkable verifiers.
"""

from rlvr.core.types import Component, Task, Verdict
from rlvr.envs import register_envs

__version__ = "0.1.0"
__all__ = ["Component", "Task", "Verdict", "__version__"]

register_envs()
