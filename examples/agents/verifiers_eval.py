"""Evaluate a model served behind any OpenAI-compatible endpoint (vLLM, SGLang, ...) on an rlvr agent pack
with verifiers; the rubric is rlvr's verdict.

    vllm serve Qwen/Qwen2.5-1.5B-Instruct --enable-auto-tool-choice --tool-call-parser hermes &
    python examples/agents/verifiers_eval.py --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-1.5B-Instruct
"""

from __future__ import annotations

import argparse
import asyncio

from openai import AsyncOpenAI
from verifiers.legacy.clients.openai_chat_completions_client import OpenAIChatCompletionsClient

from rlvr.integrations.verifiers import load_environment


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--pack", default="tool-worlds")
    parser.add_argument("--split", default="test")
    parser.add_argument("--examples", type=int, default=20)
    args = parser.parse_args()
    env = load_environment(pack=args.pack, split=args.split, num_examples=args.examples)
    client = OpenAIChatCompletionsClient(AsyncOpenAI(base_url=args.base_url, api_key="local"))
    results = asyncio.run(env.evaluate(client, model=args.model))
    rewards = [output["reward"] for output in results["outputs"]]
    print(f"mean reward {sum(rewards) / len(rewards):.3f} over {len(rewards)} episodes")


if __name__ == "__main__":
    main()
