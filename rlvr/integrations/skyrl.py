"""rlvr agent envs as SkyRL-Gym text envs: `rlvr-tool` (Tool-v0) and `rlvr-repo` (Repo-v0).

    import rlvr.integrations.skyrl  # registers the ids with skyrl_gym
    env = skyrl_gym.make("rlvr-tool", env_config={"pack": "tool-worlds"}, extras={"task_id": "tool/reprice/0"})
    prompt, meta = env.init([])                 # the task, and the tools (OpenAI schemas) in `meta`
    out = env.step(model_text)                  # <tool_call>{...}</tool_call> blocks, or a JSON turn

In a SkyRL dataset row: `env_class: rlvr-tool`, `env_extras: {task_id: ...}`; `env_config` (the trainer's
`environment.skyrl_gym.rlvr-tool` section) takes `pack`, `split` and the env's and grader's options.
Each step's observation is the tool results as one user message; the last step carries the verdict's
reward (`metadata["verdict"]`). All envs of one (pack, split, options) share one grader.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput, ConversationType
from skyrl_gym.envs.registration import register, registry

from rlvr.integrations.session import Session, Sessions
from rlvr.integrations.tool_text import run_text_turn

_shared: dict[str, Sessions] = {}
_shared_lock = threading.Lock()


def shared_sessions(pack: str, split: str | None, options: dict[str, Any]) -> Sessions:
    key = repr((pack, split, sorted(options.items())))
    with _shared_lock:
        if key not in _shared:
            _shared[key] = Sessions(pack, split=split, **options)
        return _shared[key]


def _plain(config: Any) -> dict[str, Any]:
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return dict(config)
    try:  # an omegaconf DictConfig, as SkyRL passes it
        from omegaconf import OmegaConf

        return dict(OmegaConf.to_container(config, resolve=True))  # type: ignore[arg-type]
    except Exception as exc:
        raise TypeError(f"env_config must be a mapping, not {type(config).__name__}") from exc


class RlvrTextEnv(BaseTextEnv):
    """One rlvr episode for SkyRL; `default_pack` is the family's pack."""

    default_pack = ""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        options = _plain(env_config)
        pack = str(options.pop("pack", self.default_pack))
        split = options.pop("split", None)
        extras = dict(extras or {})
        task_id = extras.get("task_id") or (extras.get("reward_spec") or {}).get("ground_truth")
        if not isinstance(task_id, str):
            raise ValueError(
                "rlvr SkyRL envs need env_extras.task_id (or reward_spec.ground_truth) naming the task"
            )
        self.task_id = task_id
        self.session: Session = shared_sessions(pack, split, options).open()
        self.metadata: dict[str, Any] = {}

    def init(self, prompt: ConversationType) -> tuple[ConversationType, dict[str, Any]]:
        start = self.session.start(self.task_id)
        self.max_turns = int(getattr(self.session.env.unwrapped, "max_turns", 1) or 1)
        self.turns = 0
        self.metadata = {"task_id": start.task_id, "tools": start.tools}
        system = [m for m in prompt if m.get("role") == "system"]
        return [*system, {"role": "user", "content": start.prompt}], dict(self.metadata)

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        output = run_text_turn(self.session, action)
        if not output.done:  # the env's own budgets end the episode
            return BaseTextEnvStepOutput(
                observations=[{"role": "user", "content": output.text}],
                reward=0.0,
                done=False,
                metadata={},
                postprocessed_action=None,
            )
        result = self.session.finish()
        self.metadata = {"task_id": result.task_id, "verdict": result.verdict, "disrupted": result.disrupted}
        return BaseTextEnvStepOutput(
            observations=[],
            reward=result.reward,
            done=True,
            metadata=dict(self.metadata),
            postprocessed_action=None,
        )

    def get_metrics(self) -> dict[str, Any]:
        verdict = self.metadata.get("verdict") or {}
        return {"passed": float(bool(verdict.get("passed"))), "turns": float(self.turns)}

    def close(self) -> None:
        self.session.close()


class RlvrToolTextEnv(RlvrTextEnv):
    default_pack = "tool-worlds"


class RlvrRepoTextEnv(RlvrTextEnv):
    default_pack = "repo-tasks"


ENV_IDS = {"rlvr-tool": RlvrToolTextEnv, "rlvr-repo": RlvrRepoTextEnv}


def register_envs() -> None:
    for env_id, env_class in ENV_IDS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=f"{__name__}:{env_class.__name__}")


register_envs()
