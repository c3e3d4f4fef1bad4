"""A short supervised warm start: next-token loss on the completion (and its EOS) only, or on a
teacher episode's assistant turns only."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import torch

from rlvr.trainer.episodes import Episode, episode_sequences
from rlvr.trainer.packing import PackedBatch, packed_loss
from rlvr.trainer.rollout import Sequences, completion_logprobs, encode_prompts


def encode_pairs(tokenizer: Any, pairs: list[tuple[str, str]]) -> Sequences:
    """Prompts left padded, completions (+EOS) right padded, in the same layout as rollouts so the
    warm start and GRPO see identical positions."""
    prompt_ids, prompt_mask = encode_prompts(tokenizer, [p for p, _ in pairs])
    bodies = [
        tokenizer(c, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id] for _, c in pairs
    ]
    width = max(len(b) for b in bodies)
    completion_ids = torch.full((len(pairs), width), tokenizer.pad_token_id, dtype=torch.long)
    mask = torch.zeros(len(pairs), width)
    for i, body in enumerate(bodies):
        completion_ids[i, : len(body)] = torch.tensor(body)
        mask[i, : len(body)] = 1.0
    return Sequences(prompt_ids, prompt_mask, completion_ids, mask, torch.zeros(len(pairs), dtype=torch.bool))


def pair_batches(
    tokenizer: Any, pairs: list[tuple[str, str]], batch_size: int
) -> Callable[[random.Random], Sequences]:
    """Minibatches of (prompt, completion) pairs."""
    return lambda rng: encode_pairs(tokenizer, rng.sample(pairs, min(batch_size, len(pairs))))


def episode_batches(
    episodes: list[Episode], pad_id: int, batch_size: int
) -> Callable[[random.Random], Sequences]:
    """Minibatches of teacher episodes (the loss counts the teacher's turns, not the observations)."""
    return lambda rng: episode_sequences(rng.sample(episodes, min(batch_size, len(episodes))), pad_id)


def batch_loss(model: Any, batch: Sequences | PackedBatch) -> torch.Tensor:
    """Mean next-token loss over the tokens a batch counts (padded rows, or packed episodes)."""
    if isinstance(batch, PackedBatch):
        return packed_loss(model, batch)
    logp, _ = completion_logprobs(model, batch, temperature=1.0)
    return -(logp * batch.mask).sum() / batch.mask.sum()


def supervised_warm_start(
    model: Any,
    batches: Callable[[random.Random], Sequences | PackedBatch],
    *,
    steps: int,
    learning_rate: float,
    seed: int,
    progress: Any = None,
) -> list[float]:
    """Train on `steps` minibatches drawn by `batches` (the loss counts only `mask` tokens: a
    completion, or an episode's assistant turns); returns the loss per step."""
    rng = random.Random(seed)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=learning_rate)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - step / max(steps, 1))
    losses: list[float] = []
    for _ in range(steps):
        loss = batch_loss(model, batches(rng))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if progress is not None:
            progress.update(1)
            progress.set_postfix(loss=f"{loss.item():.3f}")
    return losses
