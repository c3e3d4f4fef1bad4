"""One rlvr episode through SkyRL-Gym's API (`skyrl_gym.make("rlvr-tool")`), with scripted model turns.

    python examples/agents/skyrl_episode.py

In a SkyRL training config: dataset rows with `env_class: rlvr-tool` (or `rlvr-repo`) and
`env_extras: {task_id: ...}`; `import rlvr.integrations.skyrl` in the entry point registers the envs.
"""

from __future__ import annotations

import json

import skyrl_gym

import rlvr.integrations.skyrl  # noqa: F401  (registers rlvr-tool and rlvr-repo)


def call(name: str, arguments: dict) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def main() -> None:
    env = skyrl_gym.make("rlvr-tool", env_config={"split": "train"}, extras={"task_id": "tool/reprice/0"})
    prompt, meta = env.init([])
    print(prompt[-1]["content"])
    for turn in (
        call("check_stock", {"sku": "SKU-102"}),
        call("set_price", {"sku": "SKU-102", "price": 13.58}),
        call("final_answer", {"answer": "repriced"}),
    ):
        out = env.step(turn)
        print("done" if out["done"] else out["observations"][0]["content"][:120], "reward", out["reward"])
        if out["done"]:
            break
    env.close()


if __name__ == "__main__":
    main()
