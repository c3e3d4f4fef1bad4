"""Warm-start step cost of `configs/tool.toml`: padded rows vs packed episodes (`[sft] packed`).

Builds the config's teacher episodes and tiny model, then runs blocks of SFT steps (forward, backward,
AdamW) alternating padded and packed, on the same batch draws; reports CPU seconds per step (the process's
CPU clock, which a busy machine disturbs less than wall time), wall seconds per step and tokens per step.

    python benchmarks/bench_sft_packing.py [--steps 20] [--rounds 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import torch

import rlvr  # noqa: F401  (registers the envs)
from rlvr.task_packs.registry import load_pack
from rlvr.trainer import model as models
from rlvr.trainer import teachers
from rlvr.trainer.agent import stop_ids
from rlvr.trainer.config import build_config
from rlvr.trainer.episodes import make_template
from rlvr.trainer.grpo import make_run_grader
from rlvr.trainer.packing import PackedBatch, packed_episode_batches
from rlvr.trainer.sft import batch_loss, episode_batches
from rlvr.trainer.warm_start import teacher_data


def tokens(batch: object) -> int:
    if isinstance(batch, PackedBatch):
        return batch.input_ids.numel()
    return batch.prompt_ids.numel() + batch.completion_ids.numel()  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/tool.toml")
    parser.add_argument("--steps", type=int, default=20, help="SFT steps per block")
    parser.add_argument("--rounds", type=int, default=3, help="blocks of each layout, alternating")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = build_config(args.config)
    pack = load_pack(config.run.pack)
    grader = make_run_grader(config, pack)
    try:
        data, texts = teacher_data(config, pack, grader, config.sft.bug_rate)
    finally:
        grader.close()
    tokenizer = models.build_tokenizer(texts, config.model.tiny_vocab, config.model.tiny_pretokenizer)
    tokenizer.padding_side = "left"
    template = make_template(tokenizer, config.model.template, stop_ids(config, tokenizer))
    episodes = [teachers.teacher_episode(template, tokenizer, t, h) for t, h in data]  # type: ignore[misc]
    model = models.build_tiny_model(tokenizer, config.model, config.run.seed)
    models.disable_dropout(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.sft.learning_rate)
    layouts = {
        "padded": episode_batches(episodes, tokenizer.pad_token_id, config.sft.batch_size),
        "packed": packed_episode_batches(episodes, tokenizer.pad_token_id, config.sft.batch_size),
    }
    cpu: dict[str, list[float]] = {name: [] for name in layouts}
    wall: dict[str, list[float]] = {name: [] for name in layouts}
    sizes: dict[str, list[int]] = {name: [] for name in layouts}
    for block in range(args.rounds):
        for name, batches in layouts.items():
            rng = random.Random(block)  # both layouts draw the same batches in a block
            for _ in range(args.steps):
                batch = batches(rng)
                started_cpu, started = time.process_time(), time.perf_counter()
                loss = batch_loss(model, batch)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                cpu[name].append(time.process_time() - started_cpu)
                wall[name].append(time.perf_counter() - started)
                sizes[name].append(tokens(batch))
    real = statistics.mean(len(e.prompt_ids) + len(e.ids) for e in episodes) * config.sft.batch_size
    print(
        f"{len(episodes)} teacher episodes, batch {config.sft.batch_size}: {real:.0f} real tokens per batch"
    )
    for name in layouts:
        print(
            f"{name}: CPU {statistics.median(cpu[name]):.3f} s/step (median), wall "
            f"{statistics.median(wall[name]):.3f} s/step, {statistics.mean(sizes[name]):.0f} tokens/step"
        )
    print(
        f"packed / padded CPU per step: {statistics.median(cpu['packed']) / statistics.median(cpu['padded']):.2f}"
    )


if __name__ == "__main__":
    main()
