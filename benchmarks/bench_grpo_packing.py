"""Policy-update cost of `configs/tool.toml`: padded rows vs packed episodes (`[grpo] packed`).

Loads a warm start (a run's `warm_start/` directory), plays `--steps` rollouts of the config's
tasks_per_step x group_size training episodes through the env, then runs `grpo.policy_update` on each
rollout with the padded and the packed layout in turn, each from the same weights (a fresh copy of the
warm start, its own AdamW, the KL reference, mu and micro-batches of the config). Reports CPU seconds per
update (the process's CPU clock, which a busy machine disturbs less than wall time), wall seconds and
tokens per forward pass, and the largest weight difference between the two layouts after the update.

    python benchmarks/bench_grpo_packing.py --warm-start RUN/warm_start [--steps 6] [--set ...]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import time
from typing import Any

import torch

import rlvr  # noqa: F401  (registers the envs)
from rlvr.task_packs.registry import load_pack
from rlvr.trainer import grpo
from rlvr.trainer import model as models
from rlvr.trainer.agent import make_agent
from rlvr.trainer.config import build_config
from rlvr.trainer.curriculum import up_to_difficulty
from rlvr.trainer.packing import fit_rows


def token_counts(sequences: Any) -> tuple[int, int, int]:
    """(real tokens, padded layout's tokens, packed layout's tokens) of one forward pass over every row."""
    lengths = (sequences.prompt_mask.sum(-1) + sequences.completion_attention.sum(-1)).long().tolist()
    rows, width = len(fit_rows(lengths)), max(lengths)
    padded = sequences.prompt_ids.numel() + sequences.completion_ids.numel()
    return sum(lengths), padded, rows * width


def timed_update(model: Any, rollout: grpo.Rollout, config: Any, packed: bool) -> tuple[float, float, list]:
    policy = copy.deepcopy(model)
    reference = models.ReferencePolicy(policy, uses_lora=False)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=config.grpo.learning_rate)
    config.grpo.packed = packed
    cpu, wall = time.process_time(), time.perf_counter()
    grpo.policy_update(policy, reference, optimizer, rollout, config)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu, wall, [p.detach().clone() for p in policy.parameters()]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--config", default="configs/tool.toml")
    parser.add_argument("--set", action="append", default=[], dest="assignments")
    parser.add_argument("--warm-start", required=True)
    parser.add_argument("--steps", type=int, default=6, help="rollouts (one update of each layout each)")
    args = parser.parse_args()
    config = build_config(args.config, args.assignments)
    torch.set_num_threads(config.run.threads)
    torch.manual_seed(config.run.seed)
    pack = load_pack(config.run.pack)
    grader = grpo.make_run_grader(config, pack)
    model, tokenizer = models.load_pretrained(args.warm_start)
    models.disable_dropout(model)
    agent = make_agent(config, pack, grader, tokenizer)
    g = config.grpo
    tasks = up_to_difficulty(pack.tasks(config.run.train_split), g.max_difficulty)
    rng = random.Random(config.run.seed)
    results: dict[str, list[float]] = {
        "padded_cpu": [],
        "packed_cpu": [],
        "padded_wall": [],
        "packed_wall": [],
    }
    tokens: list[tuple[int, int, int]] = []
    differences: list[float] = []
    try:
        for step in range(args.steps):
            drawn = rng.sample(tasks, g.tasks_per_step)
            with torch.no_grad():
                sequences, verdicts, rewards, episodes = grpo.play(
                    model, agent, [t for t in drawn for _ in range(g.group_size)], config
                )
            group_ids = torch.arange(len(drawn)).repeat_interleave(g.group_size)
            keep = torch.ones(len(verdicts), dtype=torch.bool)
            rollout = grpo.Rollout(sequences, group_ids, verdicts, rewards, keep, episodes)
            tokens.append(token_counts(sequences))
            weights = {}
            for packed in (step % 2 == 0, step % 2 != 0):  # alternate which layout goes first
                cpu, wall, weights[packed] = timed_update(model, rollout, config, packed)
                name = "packed" if packed else "padded"
                results[f"{name}_cpu"].append(cpu)
                results[f"{name}_wall"].append(wall)
            differences.append(
                max(float((a - b).abs().max()) for a, b in zip(weights[True], weights[False], strict=True))
            )
            print(json.dumps({"step": step, **{k: round(v[-1], 3) for k, v in results.items()}}), flush=True)
    finally:
        if agent.runner is not None:
            agent.runner.close()
        grader.close()
    summary: dict[str, Any] = {k: round(statistics.median(v), 3) for k, v in results.items()}
    summary["packed_over_padded_cpu"] = round(summary["packed_cpu"] / summary["padded_cpu"], 3)
    summary["tokens_real_padded_packed"] = [round(statistics.mean(t[i] for t in tokens)) for i in range(3)]
    summary["max_weight_difference"] = max(differences)
    summary["episodes_per_update"] = g.tasks_per_step * g.group_size
    summary["threads"] = config.run.threads
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
