"""Play a task's reference solution against `rlvr serve --protocol openenv` with the OpenEnv client.

rlvr serve --protocol openenv --pack tool-worlds --port 8000 &
python examples/agents/openenv_client.py --url http://127.0.0.1:8000 --task tool/reprice/0
"""

from __future__ import annotations

import argparse

from rlvr.integrations.openenv import RlvrAction, RlvrEnvClient
from rlvr.task_packs.registry import load_pack


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--pack", default="tool-worlds")
    parser.add_argument("--task", default="tool/reprice/0")
    args = parser.parse_args()
    reference = (
        load_pack(args.pack).get(args.task).hidden["reference"]
    )  # the client side knows the answer here
    with RlvrEnvClient(base_url=args.url) as env:
        first = env.reset(task_id=args.task)
        print(first.observation.prompt)
        print("tools:", [tool["function"]["name"] for tool in first.observation.tools or []])
        for turn in reference:
            for call in turn if isinstance(turn, list) else []:
                step = env.step(RlvrAction(tool=call["name"], arguments=call.get("arguments") or {}))
                print(f"{call['name']} -> {step.observation.text[:120]}")
        answer = next((t for t in reference if not isinstance(t, list)), "done")
        last = env.step(RlvrAction(tool="final_answer", arguments={"answer": str(answer)}))
        print(
            "reward", last.reward, "passed", last.observation.verdict and last.observation.verdict["passed"]
        )


if __name__ == "__main__":
    main()
