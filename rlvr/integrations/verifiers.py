"""rlvr agent envs as verifiers environments (the `vf.MultiTurnEnv` API of verifiers' classic stack).

    from rlvr.integrations.verifiers import load_environment
    env = load_environment(pack="tool-worlds", split="train", num_examples=64)
    results = await env.evaluate(client, model="...")     # or as a prime-rl / verifiers trainer env

Each rollout is one rlvr session (rlvr/integrations/session.py): its prompt and tools (`tool_defs`) come
from the env at setup; each tool call the model makes is one session call; the rollout ends at the
episode's end (`final_answer`, `submit`, a budget) or at an assistant message without tool calls (the
state is then graded as it is, flagged `unfinished`). The rubric is rlvr's verdict: `rlvr_reward` (weight
1) plus `rlvr_passed` as a metric; `state["rlvr_verdict"]` holds the whole verdict.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import verifiers as vf
from datasets import Dataset

from rlvr.core.pack import TaskPack
from rlvr.integrations.session import EpisodeResult, Session, Sessions

PLACEHOLDER = "(the task is set when the rollout starts)"


class RlvrVerdictRubric(vf.Rubric):
    def __init__(self) -> None:
        super().__init__()
        self.add_reward_func(self.rlvr_reward, weight=1.0)
        self.add_metric(self.rlvr_passed)

    async def rlvr_reward(self, state: vf.State, **kwargs: Any) -> float:
        result: EpisodeResult | None = state.get("rlvr_result")
        return 0.0 if result is None else result.reward

    async def rlvr_passed(self, state: vf.State, **kwargs: Any) -> float:
        result: EpisodeResult | None = state.get("rlvr_result")
        return float(result is not None and result.passed)


class RlvrEnv(vf.MultiTurnEnv):
    """A verifiers multi-turn env over one pack's rlvr sessions."""

    def __init__(self, sessions: Sessions, dataset: Dataset, **kwargs: Any) -> None:
        super().__init__(dataset=dataset, rubric=RlvrVerdictRubric(), **kwargs)
        self.sessions = sessions

    async def setup_state(self, state: vf.State) -> vf.State:
        info = state.get("info") or {}
        task_id = info.get("task_id") if isinstance(info, dict) else None
        if not isinstance(task_id, str):
            raise vf.Error("rlvr rollouts need info.task_id")
        session = self.sessions.open()
        state["rlvr_session"] = session
        start = await asyncio.to_thread(session.start, task_id)
        state["prompt"] = [vf.UserMessage(content=start.prompt)]
        state["tool_defs"] = [
            vf.Tool(
                name=tool["function"]["name"],
                description=tool["function"].get("description", ""),
                parameters=tool["function"].get("parameters") or {"type": "object", "properties": {}},
            )
            for tool in start.tools
        ]
        return state

    @vf.stop
    async def episode_over(self, state: vf.State) -> bool:
        session: Session | None = state.get("rlvr_session")
        return session is not None and session.done

    @vf.stop
    async def no_tools_called(self, state: vf.State) -> bool:
        if not state["trajectory"]:
            return False
        last = state["trajectory"][-1]["completion"][-1]
        return last.role == "assistant" and not getattr(last, "tool_calls", None)

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: Any) -> vf.Messages:
        session: Session = state["rlvr_session"]
        last = messages[-1]
        replies: list[Any] = []
        for call in getattr(last, "tool_calls", None) or []:
            try:
                arguments = json.loads(call.arguments) if isinstance(call.arguments, str) else call.arguments
            except (ValueError, RecursionError) as exc:  # the model's own text: its error to see
                reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
                replies.append(
                    vf.ToolMessage(tool_call_id=call.id, content=f"error: arguments are not JSON: {reason}")
                )
                continue
            if session.done:
                replies.append(vf.ToolMessage(tool_call_id=call.id, content="error: the episode is over"))
                continue
            output = await asyncio.to_thread(session.call_tool, call.name, arguments)
            replies.append(vf.ToolMessage(tool_call_id=call.id, content=output.text))
        if session.done:
            state["final_env_response"] = replies
        return replies

    @vf.cleanup
    async def grade_and_close(self, state: vf.State) -> None:
        session: Session | None = state.pop("rlvr_session", None)
        if session is None:
            return
        try:
            if session.task_id is not None:
                result = await asyncio.to_thread(session.finish)
                state["rlvr_result"] = result
                state["rlvr_verdict"] = result.verdict
        finally:
            session.close()


def load_environment(
    pack: str | TaskPack = "tool-worlds",
    split: str | None = None,
    num_examples: int = -1,
    max_turns: int = -1,
    **options: Any,
) -> RlvrEnv:
    """A verifiers environment of `pack`'s agent episodes; `options`: the env's and the grader's."""
    sessions = Sessions(pack, split=split, **options)
    tasks = sessions.tasks if num_examples < 0 else sessions.tasks[:num_examples]
    dataset = Dataset.from_dict(
        {
            "prompt": [[{"role": "user", "content": PLACEHOLDER}] for _ in tasks],
            "info": [{"task_id": task.id} for task in tasks],
            "answer": ["" for _ in tasks],
        }
    )
    return RlvrEnv(sessions, dataset, max_turns=max_turns, env_id=f"rlvr-{sessions.pack.name}")
