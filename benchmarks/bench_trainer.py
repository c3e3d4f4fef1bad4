"""Trainer benchmarks (recorded in benchmarks/RESULTS.md, "## Trainer").

1. Step time: one rlvr GRPO step vs one TRL `GRPOTrainer` step on the same tiny model, tokenizer,
   prompts, reward function and settings (G, completions per step, max completion length,
   temperature, mu = 1, beta = 0, loss "grpo", group scaling). TRL is timed twice: with its GRPO
   default (gradient checkpointing on) and with checkpointing off (the same computation as rlvr).
   Blocks of steps alternate between the trainers so machine load hits all alike; the figures are
   ratios of medians.
2. Peak memory: one GRPO update (policy + frozen reference + AdamW) vs one PPO update with a value
   head (policy + reference + critic of the same size + AdamW for both, GAE), each in a fresh
   subprocess, as the peak resident-set growth over the process's state before the models exist.

    .venv/bin/python benchmarks/bench_trainer.py [--steps 4] [--rounds 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import torch

PROMPTS_PER_STEP, GROUP, MAX_NEW, LR = 8, 8, 20, 1e-3


def cheap_reward(text: str) -> float:
    """The same deterministic reward for both trainers, cheap so the trainers' own cost is measured."""
    return min(1.0, 0.5 * ("return" in text) + 0.05 * len(set(text.split())))


def tiny_setup(threads: int) -> tuple[Any, Any, list[str]]:
    from rlvr.task_packs.tiny_functions import sft_examples
    from rlvr.trainer.config import ModelConfig
    from rlvr.trainer.model import build_tiny_model, build_tokenizer, disable_dropout

    torch.set_num_threads(threads)
    pairs = sft_examples(2000, seed=0)
    tokenizer = build_tokenizer([p + c for p, c in pairs], 320)
    tokenizer.padding_side = "left"
    model = build_tiny_model(tokenizer, ModelConfig(), seed=0)
    disable_dropout(model)
    prompts = sorted({p for p, _ in pairs})[:64]
    return model, tokenizer, prompts


# --------------------------------------------------------------------------- step time
def rlvr_steps(model: Any, tokenizer: Any, prompts: list[str], steps: int) -> list[float]:
    import random

    from rlvr.core.pack import StaticPack
    from rlvr.core.types import Task, Verdict
    from rlvr.graders.base import Grader
    from rlvr.trainer.config import TrainConfig
    from rlvr.trainer.curriculum import Curriculum
    from rlvr.trainer.grpo import Agent, collect_rollout, policy_update

    class CheapGrader(Grader):
        def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
            return [
                Verdict(t.id, cheap_reward(c), cheap_reward(c) >= 1.0)
                for t, c in zip(tasks, completions, strict=True)
            ]

    tasks = [Task(id=f"p{i}", prompt=p, split="train") for i, p in enumerate(prompts)]
    config = TrainConfig()
    g = config.grpo
    g.tasks_per_step, g.group_size, g.group_size_max, g.max_new_tokens = PROMPTS_PER_STEP, GROUP, 0, MAX_NEW
    g.num_iterations, g.beta, g.loss_type, g.truncation, g.micro_batch_size = 1, 0.0, "grpo", "none", 64
    grader = CheapGrader(StaticPack("bench", tasks))
    agent = Agent(tokenizer, grader, [tokenizer.eos_token_id], None)
    curriculum = Curriculum(tasks, False, 1.0, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR)
    rng = random.Random(0)
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        rollout = collect_rollout(model, agent, curriculum, rng, config, (1, 1))
        policy_update(model, None, optimizer, rollout, config)
        times.append(time.perf_counter() - started)
    return times


def trl_steps(model: Any, tokenizer: Any, prompts: list[str], steps: int, checkpointing: bool) -> list[float]:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    times: list[float] = []

    class Timer(TrainerCallback):
        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.started = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            times.append(time.perf_counter() - self.started)

    def reward(completions: list[str], **kwargs: Any) -> list[float]:
        return [cheap_reward(c) for c in completions]

    with tempfile.TemporaryDirectory() as out:
        args = GRPOConfig(
            output_dir=out,
            per_device_train_batch_size=PROMPTS_PER_STEP * GROUP,
            num_generations=GROUP,
            max_completion_length=MAX_NEW,
            temperature=1.0,
            top_k=0,
            num_iterations=1,
            beta=0.0,
            loss_type="grpo",
            scale_rewards="group",
            learning_rate=LR,
            max_steps=steps,
            logging_steps=1000,
            save_strategy="no",
            report_to=[],
            use_cpu=True,
            bf16=False,
            seed=0,
            disable_tqdm=True,
            gradient_checkpointing=checkpointing,  # TRL's GRPO default is True; rlvr does not recompute
        )
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=reward,
            args=args,
            train_dataset=Dataset.from_list([{"prompt": p} for p in prompts]),
            processing_class=tokenizer,
            callbacks=[Timer()],
        )
        trainer.train()
    return times


def step_time(steps: int, rounds: int, threads: int) -> dict[str, Any]:
    model, tokenizer, prompts = tiny_setup(threads)
    import copy

    ours: list[float] = []
    trl_default: list[float] = []
    trl_plain: list[float] = []
    for _ in range(rounds):  # the first step of each block warms up and is not counted
        ours += rlvr_steps(copy.deepcopy(model), tokenizer, prompts, steps)[1:]
        trl_default += trl_steps(copy.deepcopy(model), tokenizer, prompts, steps, checkpointing=True)[1:]
        trl_plain += trl_steps(copy.deepcopy(model), tokenizer, prompts, steps, checkpointing=False)[1:]
    median = statistics.median
    return {
        "rlvr_median_seconds": median(ours),
        "trl_default_median_seconds": median(trl_default),
        "trl_no_checkpointing_median_seconds": median(trl_plain),
        "ratio_rlvr_over_trl_default": median(ours) / median(trl_default),
        "ratio_rlvr_over_trl_no_checkpointing": median(ours) / median(trl_plain),
        "steps_measured_each": len(ours),
        "completions_per_step": PROMPTS_PER_STEP * GROUP,
        "parameters": sum(p.numel() for p in model.parameters()),
        "torch_threads": threads,
    }


# --------------------------------------------------------------------------- memory
def _rss_kib() -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def memory_child(mode: str, hidden: int, layers: int) -> None:
    from transformers import LlamaConfig, LlamaForCausalLM, LlamaModel

    from rlvr.trainer.losses import BatchNorms, grpo_loss, k3_kl, token_logprobs

    torch.manual_seed(0)
    torch.set_num_threads(1)
    config = LlamaConfig(
        vocab_size=8000,
        hidden_size=hidden,
        intermediate_size=hidden * 3,
        num_hidden_layers=layers,
        num_attention_heads=8,
        num_key_value_heads=8,
        tie_word_embeddings=False,
    )
    rows, prompt, completion = 16, 48, 48
    ids = torch.randint(0, 8000, (rows, prompt + completion))
    mask = torch.ones(rows, completion)
    baseline = _rss_kib()

    def logp_of(model: Any) -> torch.Tensor:  # as the trainer does: no KV cache, completion logits only
        logits = model(input_ids=ids, use_cache=False, logits_to_keep=completion + 1).logits[:, :-1]
        return token_logprobs(logits, ids[:, prompt:])

    policy = LlamaForCausalLM(config)
    reference = LlamaForCausalLM(config).requires_grad_(False)
    params = list(policy.parameters())
    with torch.no_grad():
        old, ref = logp_of(policy), logp_of(reference)
    if mode == "grpo":
        optimizer = torch.optim.AdamW(params, lr=1e-5)
        advantages = torch.randn(rows)
        loss = grpo_loss(
            logp_of(policy), old, ref, advantages, mask, norms=BatchNorms.of(mask, completion), beta=0.04
        ).loss
        loss.backward()
        optimizer.step()
    else:
        critic = LlamaModel(config)
        value_head = torch.nn.Linear(hidden, 1)
        optimizer = torch.optim.AdamW(
            params + list(critic.parameters()) + list(value_head.parameters()), lr=1e-5
        )

        def values() -> torch.Tensor:
            return value_head(
                critic(input_ids=ids, use_cache=False).last_hidden_state[:, prompt - 1 : -1]
            ).squeeze(-1)

        with torch.no_grad():
            old_values = values()
            rewards = -0.04 * k3_kl(old, ref)
            rewards[:, -1] += torch.rand(rows)
            advantages, last = torch.zeros_like(rewards), torch.zeros(rows)
            for t in reversed(range(completion)):  # GAE, gamma = 1, lambda = 0.95
                following = old_values[:, t + 1] if t + 1 < completion else torch.zeros(rows)
                delta = rewards[:, t] + following - old_values[:, t]
                last = delta + 0.95 * last
                advantages[:, t] = last
            returns = advantages + old_values
        ratio = torch.exp(logp_of(policy) - old)
        policy_loss = -torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages).mean()
        new_values = values()
        clipped = old_values + (new_values - old_values).clamp(-0.2, 0.2)
        value_loss = 0.5 * torch.max((new_values - returns) ** 2, (clipped - returns) ** 2).mean()
        (policy_loss + 0.1 * value_loss).backward()
        optimizer.step()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(
        json.dumps(
            {
                "mode": mode,
                "peak_growth_mib": (peak - baseline) / 1024,
                "parameters": sum(p.numel() for p in params),
            }
        )
    )


def memory(hidden: int, layers: int) -> dict[str, Any]:
    out = {}
    for mode in ("grpo", "ppo"):
        result = subprocess.run(
            [
                sys.executable,
                __file__,
                "--memory-child",
                mode,
                "--hidden",
                str(hidden),
                "--layers",
                str(layers),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        out[mode] = json.loads(result.stdout.strip().splitlines()[-1])
    return {
        "grpo_peak_growth_mib": out["grpo"]["peak_growth_mib"],
        "ppo_peak_growth_mib": out["ppo"]["peak_growth_mib"],
        "ratio_grpo_over_ppo": out["grpo"]["peak_growth_mib"] / out["ppo"]["peak_growth_mib"],
        "policy_parameters": out["grpo"]["parameters"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--only", choices=["time", "memory"])
    parser.add_argument("--json")
    parser.add_argument("--memory-child", choices=["grpo", "ppo"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child, args.hidden, args.layers)
        return
    results: dict[str, Any] = {"load_average_start": list(os.getloadavg())}
    if args.only in (None, "time"):
        results["step_time"] = step_time(args.steps, args.rounds, args.threads)
    if args.only in (None, "memory"):
        results["memory"] = memory(args.hidden, args.layers)
    results["load_average_end"] = list(os.getloadavg())
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as handle:
            handle.write(text)


if __name__ == "__main__":
    main()
