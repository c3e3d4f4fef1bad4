"""Write an OpenRLHF prompt file for an rlvr agent pack and print the training flags that run it.

    python examples/agents/openrlhf_agent.py --pack tool-worlds --split train --out train.jsonl

OpenRLHF itself needs a CUDA machine (vLLM, DeepSpeed, flash-attn).
"""

from __future__ import annotations

import argparse

from rlvr.integrations import openrlhf_agent


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pack", default="tool-worlds")
    parser.add_argument("--split", default="train")
    parser.add_argument("--out", default="train.jsonl")
    args = parser.parse_args()
    count = openrlhf_agent.write_dataset(args.pack, args.split, args.out)
    print(f"wrote {count} prompts to {args.out}; then:\n")
    print(
        f"RLVR_PACK={args.pack} RLVR_SPLIT={args.split} python -m openrlhf.cli.train_ppo_ray \\\n"
        f"  --agent_func_path {openrlhf_agent.__file__} \\\n"
        f"  --prompt_data {args.out} --input_key prompt --label_key label --apply_chat_template ..."
    )


if __name__ == "__main__":
    main()
