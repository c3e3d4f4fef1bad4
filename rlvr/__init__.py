"""rlvr: reinforcement learning with verifiable rewards.

Every task is a Gymnasium environment (`gymnasium.make("rlvr/Code-v0", pack="humaneval")` after
`import rlvr`) whose `step()` grades model text with sandboxed, machine-checkable verifiers.
"""

from typing import Any

from rlvr.core.types import Component, Task, Verdict
from rlvr.envs import register_envs

__version__ = "0.1.0"
__all__ = ["Component", "Task", "Verdict", "__version__", "verify"]


def verify(gold: str | int | float, answer: str, **settings: Any) -> Verdict:
    """Grade one math answer against a reference: `rlvr.verify("\\frac{1}{2}", "0.5").passed` is True.

    `answer` may be a whole completion (boxes, answer lines and prose are searched). Settings:
    `precision`, `significant_figures`, `tolerance`, `strict`, `relation`, `boxes`, `relation_as_set`,
    `timeout` (see rlvr/specs/math_settings.py); the verdict's feedback names the extracted answer and
    the rule that decided. The math grader is imported on the first call, not by `import rlvr`."""
    from rlvr.graders.math.verify import verify as verify_math

    return verify_math(gold, answer, **settings)


register_envs()
