"""GRPO with TRL on an rlvr agent pack: the rollouts call the env's tools, the reward is rlvr's verdict.

    python examples/agents/trl_grpo.py --model Qwen/Qwen2.5-0.5B-Instruct --pack tool-worlds --steps 10

Needs `pip install 'rlvr[trl]'` and a chat model whose template supports tool calling (Qwen2.5/3, Llama 3.1, ...).
"""

from __future__ import annotations

import argparse

from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

from rlvr.integrations import trl as rlvr_trl


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", required=True, help="a local path or hub id of a tool-calling chat model")
    parser.add_argument("--pack", default="tool-worlds")
    parser.add_argument("--split", default="train")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--out", default="runs/trl-agent")
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model)
    config = GRPOConfig(
        output_dir=args.out,
        max_steps=args.steps,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=512,
        max_tool_calling_iterations=8,
        logging_steps=1,
        report_to=[],
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=config,
        environment_factory=rlvr_trl.environment_factory(args.pack, split=args.split),
        train_dataset=rlvr_trl.dataset(args.pack, args.split).shuffle(seed=0),
    )
    trainer.train()


if __name__ == "__main__":
    main()
