"""rlvr agent episodes in OpenRLHF's multi-turn agent API (`--agent_func_path`).

    RLVR_PACK=tool-worlds RLVR_SPLIT=train python -m openrlhf.cli.train_ppo_ray ... \\
        --agent_func_path $(python -c "import rlvr.integrations.openrlhf_agent as m; print(m.__file__)") \\
        --prompt_data train.jsonl --input_key prompt --label_key label --apply_chat_template

`write_dataset(pack, split, path)` writes the prompts (the env's own first observation: the task, its tools
and the turn format) with the task id as the label. OpenRLHF builds one `AgentInstance` per rollout;
`step` runs the generated turn (`<tool_call>` blocks or a JSON turn) in an rlvr session and answers the
tool results as the next user turn (`RLVR_FEEDBACK_TEMPLATE`, ChatML by default); the last step's reward
is the trusted verdict's. Options: `RLVR_PACK`, `RLVR_SPLIT`, `RLVR_OPTIONS` (JSON: the env's and the
grader's options). All rollouts of a process share one grader.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import torch
from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor

from rlvr.core.pack import TaskPack
from rlvr.integrations.session import Session, Sessions
from rlvr.integrations.tool_text import run_text_turn

CHATML_FEEDBACK = "\n<|im_start|>user\n{observation}<|im_end|>\n<|im_start|>assistant\n"

_sessions: Sessions | None = None
_lock = threading.Lock()


def shared_sessions() -> Sessions:
    global _sessions
    with _lock:
        if _sessions is None:
            options = json.loads(os.environ.get("RLVR_OPTIONS") or "{}")
            if not isinstance(options, dict):
                raise ValueError("RLVR_OPTIONS must be a JSON object of env and grader options")
            _sessions = Sessions(
                os.environ.get("RLVR_PACK", "tool-worlds"),
                split=os.environ.get("RLVR_SPLIT") or None,
                **options,
            )
        return _sessions


class AgentInstance(AgentInstanceBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.session: Session = shared_sessions().open()
        self.feedback = os.environ.get("RLVR_FEEDBACK_TEMPLATE", CHATML_FEEDBACK)

    async def reset(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        label = states.get("label")
        if not isinstance(label, str):
            raise ValueError("the rlvr agent needs the task id as each prompt's label (--label_key)")
        self.session.start(label)
        return {"observation": states["observation"]}

    async def step(self, state_dict: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        states = state_dict
        output = run_text_turn(self.session, str(states["action_text"]))
        if not output.done:
            return {
                "rewards": torch.tensor(0.0),
                "scores": torch.tensor(0.0),
                "environment_feedback": self.feedback.format(observation=output.text),
                "done": False,
                "sampling_params": states.get("sampling_params"),
                "extra_logs": {},
            }
        result = self.session.finish()
        self.session.close()
        return {
            "rewards": torch.tensor(result.reward),
            "scores": torch.tensor(result.reward),
            "environment_feedback": "",
            "done": True,
            "sampling_params": states.get("sampling_params"),
            "extra_logs": {
                "passed": torch.tensor(float(result.passed)),
                "turns": torch.tensor(float(result.turns)),
            },
        }


class AgentExecutor(MultiTurnAgentExecutor):
    def __init__(self) -> None:
        super().__init__(AgentInstance)


def write_dataset(pack: str | TaskPack, split: str | None, path: str | Path, **options: Any) -> int:
    """One JSONL line per task: `{"prompt": [user message], "label": task id}`; returns the count."""
    with Sessions(pack, split=split, **options) as sessions, open(path, "w", encoding="utf-8") as out:
        session = sessions.open()
        try:
            for task in sessions.tasks:
                start = session.start(task.id)
                line = {"prompt": [{"role": "user", "content": start.observation}], "label": task.id}
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
        finally:
            session.close()
        return len(sessions.tasks)
