"""A short supervised warm start: next-token loss on the completion (and its EOS) only."""

from __future__ import annotations

import random
from typing import Any

import torch

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


def supervised_warm_start(
    model: Any,
    tokenizer: Any,
    pairs: list[tuple[str, str]],
    *,
    steps: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    progress: Any = None,
) -> list[float]:
    """Train on (prompt, completion) pairs for `steps` minibatches; returns the loss per step."""
    rng = random.Random(seed)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=learning_rate)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - step / max(steps, 1))
    losses: list[float] = []
    for _ in range(steps):
        batch = encode_pairs(tokenizer, rng.sample(pairs, min(batch_size, len(pairs))))
        logp, _ = completion_logprobs(model, batch, temperature=1.0)
        loss = -(logp * batch.mask).sum() / batch.mask.sum()
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
