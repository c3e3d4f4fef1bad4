"""`rlvr/Code-v0`: a code task as a Gymnasium environment.

reset() shows the task prompt; step(text) grades the text and returns the reward, with the full
verdict in `info["verdict"]` (all but its wall-clock timings, which are on `env.unwrapped.last_verdict`). Single-turn by default (`terminated=True` after one step); with
`max_turns > 1` a failing attempt gets the verifier's feedback as the next observation.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import numpy as np

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task, Verdict
from rlvr.envs.spaces import UnicodeText
from rlvr.graders.base import Grader, check_options, grade_or_fault, make_grader
from rlvr.graders.tool.calls import nesting_depth
from rlvr.task_packs.registry import resolve_pack

MAX_TEXT = 1 << 20
MAX_ACTION_NESTING = 64  # an action given as data nested deeper than this is refused, not printed


def action_text(action: Any) -> str | None:
    """The text an action stands for: itself, or an action given as data (a chat message, a list of
    parts) as its JSON text; None when the data nests deeper than MAX_ACTION_NESTING (printing it
    would recurse past Python's limit: the action is then a scored failure, never an exception)."""
    if isinstance(action, str):
        return action
    if nesting_depth(action, MAX_ACTION_NESTING) > MAX_ACTION_NESTING:
        return None
    try:
        return json.dumps(action, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        return None


class TextTaskEnv(gym.Env[str, str]):
    """Shared machinery for text-in/text-out task envs of any family."""

    metadata = {"render_modes": ["ansi"]}
    family = ""

    def __init__(
        self,
        pack: str | TaskPack = "humaneval",
        *,
        split: str | None = None,
        task_id: str | None = None,
        max_turns: int = 1,
        grader: Grader | None = None,
        render_mode: str | None = None,
        **grader_options: Any,
    ) -> None:
        super().__init__()
        self.pack = resolve_pack(pack)
        if self.family and self.pack.family != self.family:
            raise ValueError(
                f"pack {self.pack.name!r} is a {self.pack.family} pack; this env grades {self.family}"
            )
        self.tasks: list[Task] = self.pack.tasks(split)
        if not self.tasks:
            raise ValueError(f"pack {self.pack.name!r} has no tasks in split {split!r}")
        self.fixed_task_id = task_id
        self.max_turns = max(1, int(max_turns))
        self.render_mode = render_mode
        self._owns_grader = grader is None
        self._grader = grader
        self._grader_options = grader_options
        if grader is None:
            check_options(self.pack, **grader_options)  # a misspelled option fails here, not at step()
        self.observation_space = UnicodeText(MAX_TEXT)
        self.action_space = UnicodeText(MAX_TEXT)
        self.task: Task | None = None
        self.turn = 0
        self.last_verdict: Verdict | None = None

    @property
    def grader(self) -> Grader:
        if self._grader is None:
            self._grader = make_grader(self.pack, **self._grader_options)
        return self._grader

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        task_id = (options or {}).get("task_id") or self.fixed_task_id
        if task_id is not None:
            self.task = self.pack.get(str(task_id))
        else:
            self.task = self.tasks[int(self.np_random.integers(0, len(self.tasks)))]
        self.turn = 0
        self.last_verdict = None
        return self.task.prompt, {"task": self.task.public(), "turn": 0}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        text = action_text(action)
        if text is None:
            verdict = Verdict(
                task_id=self.task.id,
                gates=["action"],
                flags=["oversized:nesting"],
                feedback=f"the action is data nested deeper than {MAX_ACTION_NESTING} levels",
            )
        else:
            verdict = grade_or_fault(self.grader, [self.task.id], [text])[0]
        self.turn += 1
        self.last_verdict = verdict
        terminated = verdict.passed or self.turn >= self.max_turns
        observation = "" if terminated else self._feedback_observation(verdict)
        reward = float(np.clip(verdict.reward, 0.0, 1.0))
        # Timings are wall-clock and so vary between identical steps; Gymnasium requires a
        # deterministic info, so they stay on `self.last_verdict.timings`.
        info: dict[str, Any] = {"verdict": {k: v for k, v in verdict.to_json().items() if k != "timings"}}
        info.update(task=self.task.public(), turn=self.turn)
        return observation, reward, terminated, False, info

    def _feedback_observation(self, verdict: Verdict) -> str:
        failed = ", ".join(verdict.gates) or "none"
        return f"Your answer did not pass (failed: {failed}). {verdict.feedback}".strip()

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.task is None:
            return None
        status = "" if self.last_verdict is None else f"\nreward={self.last_verdict.reward:.3f}"
        return f"[{self.task.id}] turn {self.turn}/{self.max_turns}{status}"

    def close(self) -> None:
        if self._owns_grader and self._grader is not None:
            self._grader.close()
            self._grader = None


class CodeEnv(TextTaskEnv):
    family = "code"
