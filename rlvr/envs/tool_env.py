"""`rlvr/Tool-v0` (multi-turn): each action is one assistant turn — OpenAI-style tool calls as JSON, or a final
answer. The observation is the tool results (JSON list of `{"role": "tool", ...}` messages) or an error
message for a malformed turn. The episode ends on a final answer (terminated) or at the turn limit
(truncated); only that last step carries the reward, with the full verdict in `info["verdict"]`. Every step's info
names the turn's tool calls (`tool_calls`, a list of tool names; a name the world has no tool of is reported as
`UNKNOWN_TOOL`, so the agent's text never becomes a metric name) and says whether the turn was malformed.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import gymnasium as gym

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task, grader_fault
from rlvr.envs.agent import UNFINISHED_FLAG, function_schema, tool_calls_action
from rlvr.envs.families import FamilyTextEnv
from rlvr.graders.tool.calls import parse_turn
from rlvr.graders.tool.episode import ToolEpisode
from rlvr.graders.tool.grader import ToolGrader
from rlvr.specs.tool_worlds import WORLDS

UNKNOWN_TOOL = "<unknown>"
FINAL_ANSWER = "final_answer"
FINAL_ANSWER_SCHEMA = function_schema(
    FINAL_ANSWER,
    "End the episode with your final answer; the world's final state and this answer are then graded.",
    {
        "type": "object",
        "properties": {
            "answer": {"type": "string", "description": "the answer the task asks for, or a short summary"}
        },
        "required": ["answer"],
        "additionalProperties": False,
    },
)


@functools.cache
def _world_schemas(world: str) -> list[dict[str, Any]]:
    return [*(spec.schema for spec in WORLDS[world].tools().values()), FINAL_ANSWER_SCHEMA]


class ToolEnv(FamilyTextEnv):
    """Also an agent env (rlvr/envs/agent.py): the world's tools plus `final_answer(answer)`."""

    family = "tool"

    def __init__(
        self, pack: str | TaskPack = "tool-worlds", *, max_turns: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(pack, max_turns=max_turns or 1, **kwargs)
        self.turn_limit = max_turns  # None: each task's own limit
        self.episode: ToolEpisode | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        observation, info = super().reset(seed=seed, options=options)
        assert self.task is not None
        grader = self.grader
        if not isinstance(grader, ToolGrader):
            raise TypeError(f"Tool-v0 needs a ToolGrader, got {type(grader).__name__}")
        self.episode = grader.new_episode(self.task)
        if self.turn_limit is not None:
            self.episode.max_turns = max(1, int(self.turn_limit))
        self.max_turns = self.episode.max_turns
        return observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.task is None or self.episode is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        text: Any = action  # text, or a turn as JSON data: the episode checks its depth before reading it
        if self.episode.done:
            info = {"task": self.task.public(), "turn": self.turn, "error": "episode is over; call reset()"}
            return "", 0.0, True, False, copy.deepcopy(info)
        try:
            observation = self.episode.act(text)
            verdict = self.episode.verdict() if self.episode.done else None
        except Exception as exc:  # the episode promises not to raise; if it does, end with a flagged verdict
            self.episode.done = True
            observation, verdict = "", grader_fault(self.task.id, exc, where="episode")
        self.turn = self.episode.turns
        turn = parse_turn(text)  # for the caller's statistics: which tools this turn called
        info: dict[str, Any] = {
            "task": self.task.public(),
            "turn": self.turn,
            "tool_calls": [
                call.name if call.name in self.episode.tools else UNKNOWN_TOOL for call in turn.calls
            ],
            "malformed": turn.error is not None,
        }
        if verdict is None:
            return observation, 0.0, False, False, copy.deepcopy(info)
        self.last_verdict = verdict
        info["verdict"] = verdict.to_json()
        terminated = self.episode.final_answer is not None
        return observation, float(verdict.reward), terminated, not terminated, copy.deepcopy(info)

    # ------------------------------------------------------------ agent-env protocol (rlvr/envs/agent.py)

    def toolset(self, task: Task) -> tuple[str, list[dict[str, Any]]]:
        world = str(task.hidden["world"])
        return world, copy.deepcopy(_world_schemas(world))

    def tool_call_action(self, name: str, arguments: dict[str, Any]) -> str:
        if name == FINAL_ANSWER and (self.episode is None or FINAL_ANSWER not in self.episode.tools):
            return json.dumps({"final_answer": arguments.get("answer", "")}, ensure_ascii=False)
        return tool_calls_action(name, arguments)

    def function_calling_prompt(self) -> str:
        if self.task is None or self.episode is None:
            raise gym.error.ResetNeeded("call reset() before function_calling_prompt()")
        instruction = self.task.meta.get("instruction") or self.task.prompt
        return (
            f"{instruction}\n\nUse the tools; each tool call is one turn, at most {self.episode.max_turns}. "
            f"Finish by calling {FINAL_ANSWER}."
        )

    def end_episode(self) -> tuple[float, dict[str, Any]]:
        if self.task is None or self.episode is None:
            raise gym.error.ResetNeeded("call reset() before end_episode()")
        if self.last_verdict is None:
            self.episode.done = True
            verdict = self.episode.verdict()
            verdict.flags = sorted({*verdict.flags, UNFINISHED_FLAG})
            self.last_verdict = verdict
        info = {"task": self.task.public(), "turn": self.turn, "verdict": self.last_verdict.to_json()}
        return float(self.last_verdict.reward), copy.deepcopy(info)
