"""Tool grader: replays a whole tool-use transcript against a fresh simulated world and grades the episode.

`rlvr grade` and the trainer hand over one completion per task: the agent's turns as a JSON list of assistant
messages (`[{"role": "assistant", "tool_calls": [...]}, ..., {"final_answer": "..."}]`) or one assistant
message a line; anything else is taken as a single turn. The worlds are deterministic, so a replay sees
exactly the tool results the agent saw live in `rlvr/Tool-v0`. See rlvr/graders/tool/episode.py for the
reward.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task, Verdict
from rlvr.graders.base import Grader
from rlvr.graders.compose import normalized_weights
from rlvr.graders.options import GraderOptions, no_sandbox
from rlvr.graders.tool.calls import split_transcript
from rlvr.graders.tool.episode import DEFAULT_WEIGHTS, ToolEpisode

__all__ = ["ToolGrader", "split_transcript"]


@dataclass(frozen=True, kw_only=True)
class ToolOptions(GraderOptions):
    not_honoured: ClassVar[Mapping[str, str]] = {
        "timeout": "an episode is bounded by its turn limit; the simulated tools take no wall-clock time",
        **no_sandbox("tool calls act on a simulated in-memory world, never run in a sandbox"),
    }


class ToolGrader(Grader):
    family = "tool"
    options_class = ToolOptions

    def __init__(self, pack: TaskPack, **options: Any) -> None:
        super().__init__(pack, **options)
        self.weights = normalized_weights(self.options.weights, DEFAULT_WEIGHTS, ("goal",))

    def new_episode(self, task: Task) -> ToolEpisode:
        return ToolEpisode(task, self.weights)

    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        return self.grade_each(tasks, completions, self._replay)

    def _replay(self, task: Task, completion: str) -> Verdict:
        try:
            episode = self.new_episode(task)
        except Exception as exc:
            return Verdict.failure(
                task.id, f"task could not be set up: {type(exc).__name__}: {exc}", fault="task"
            )
        for turn in split_transcript(completion):
            if episode.done:
                break
            episode.act(turn)
        return episode.verdict()
