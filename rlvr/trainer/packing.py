"""Packed batches: several episodes side by side in one row, none padded to another's length - the warm
start's teacher episodes (`[sft] packed`) and the policy update's episodes (`[grpo] packed`).

A batch of [left-padded prompt | right-padded episode] rows costs (longest prompt + longest episode) tokens
per row; for the tool demo's teacher episodes that is 2.6x the real tokens. Packing lays each episode
(prompt and turns) end to end in rows as wide as the longest one (first fit, longest first), each with its
own positions from 0 and attending only within itself, so every episode sees exactly the context and the
positions it has in the padded layout. The attention mask says so explicitly (block-diagonal and causal,
one block per episode), so this does not rest on a model noticing where positions restart. The loss is
the same masked mean over the teacher's tokens.

The policy update's rows are [left-padded prompt | completion padded after its end]; packed, each row's
real tokens lie end to end the same way, and the completion log-probs come back in the padded (N, C)
layout, so the GRPO loss reads them unchanged (padding positions: 0, never counted by the loss mask).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from rlvr.trainer.episodes import Episode
from rlvr.trainer.losses import token_entropy, token_logprobs
from rlvr.trainer.rollout import Sequences


@dataclass(frozen=True)
class PackedBatch:
    """Rows of episodes laid end to end; `targets[r, t]` is the token position t predicts and
    `mask[r, t]` says whether it counts (a teacher token, not an observation, prompt or padding)."""

    input_ids: torch.Tensor  # (R, W)
    position_ids: torch.Tensor  # (R, W): 0, 1, ... within each episode (and within the row's padding)
    targets: torch.Tensor  # (R, W): input_ids shifted left by one
    mask: torch.Tensor  # (R, W) float


def fit_rows(lengths: list[int]) -> list[list[int]]:
    """Indices of `lengths` grouped into rows as wide as the longest, first fit, longest first."""
    width = max(lengths)
    rows: list[list[int]] = []
    room: list[int] = []
    for index in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        row = next((r for r, free in enumerate(room) if free >= lengths[index]), None)
        if row is None:
            rows.append([])
            room.append(width)
            row = len(rows) - 1
        rows[row].append(index)
        room[row] -= lengths[index]
    return rows


def pack_episodes(episodes: list[Episode], pad_id: int) -> PackedBatch:
    """`episodes` (prompt and every later token each) packed into rows; the loss counts the sampled
    (teacher) tokens, each predicted from the position before it in its own episode."""
    tokens = [e.prompt_ids + e.ids for e in episodes]
    counted = [[False] * len(e.prompt_ids) + [bool(s) for s in e.sampled] for e in episodes]
    rows = fit_rows([len(t) for t in tokens])
    width = max(len(t) for t in tokens)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    position_ids = torch.zeros(len(rows), width, dtype=torch.long)
    mask = torch.zeros(len(rows), width)
    for r, members in enumerate(rows):
        start = 0
        for index in members:
            length = len(tokens[index])
            input_ids[r, start : start + length] = torch.tensor(tokens[index])
            position_ids[r, start : start + length] = torch.arange(length)
            # the token at position p is predicted at p - 1: shift each episode's flags left by one
            mask[r, start : start + length - 1] = torch.tensor(counted[index][1:], dtype=torch.float32)
            start += length
        position_ids[r, start:] = torch.arange(width - start)  # padding: a sequence of its own, never counted
    targets = torch.cat([input_ids[:, 1:], torch.full((len(rows), 1), pad_id, dtype=torch.long)], dim=1)
    return PackedBatch(input_ids, position_ids, targets, mask)


def packed_episode_batches(
    episodes: list[Episode], pad_id: int, batch_size: int
) -> Callable[[random.Random], PackedBatch]:
    """The same draws as `sft.episode_batches` (one `rng.sample` per step), packed."""
    return lambda rng: pack_episodes(rng.sample(episodes, min(batch_size, len(episodes))), pad_id)


def episode_attention(position_ids: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """(R, 1, W, W) additive mask: a token attends to the tokens before it in its own episode (an
    episode starts where the positions restart at 0)."""
    segment = (position_ids == 0).cumsum(-1)
    width = position_ids.shape[1]
    causal = torch.ones(width, width, dtype=torch.bool).tril()
    allowed = (segment.unsqueeze(-1) == segment.unsqueeze(-2)) & causal
    mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill(~allowed, torch.finfo(dtype).min)
    return mask.unsqueeze(1)


def packed_forward(model: Any, batch: PackedBatch) -> torch.Tensor:
    """The logits of every position of a packed batch, each episode attending only to itself."""
    dtype = next(model.parameters()).dtype
    return model(
        input_ids=batch.input_ids,
        attention_mask=episode_attention(batch.position_ids, dtype),
        position_ids=batch.position_ids,
        use_cache=False,
    ).logits


def packed_loss(model: Any, batch: PackedBatch) -> torch.Tensor:
    """Mean next-token loss over the counted tokens."""
    logits = packed_forward(model, batch)
    logp = token_logprobs(logits, batch.targets)
    return -(logp * batch.mask).sum() / batch.mask.sum()


def packed_completion_logprobs(
    model: Any, sequences: Sequences, temperature: float, with_entropy: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """`rollout.completion_logprobs` computed on packed rows: the same (N, C) log-probs (and entropies)
    of the completion tokens, with gradients, on the rows' real tokens only. A row's real completion
    tokens must be a prefix of its completion (padding only after the end, as rollouts build them)."""
    attention = sequences.completion_attention
    lengths = attention.sum(-1).long()
    columns = torch.arange(attention.shape[1])
    if not torch.equal(attention.bool(), columns < lengths.unsqueeze(-1)):
        raise ValueError("packed log-probs need every row's real completion tokens first, padding after")
    prompts = [
        row[keep.bool()] for row, keep in zip(sequences.prompt_ids, sequences.prompt_mask, strict=True)
    ]
    tokens = [
        torch.cat([prompt, row[:length]])
        for prompt, row, length in zip(prompts, sequences.completion_ids, lengths.tolist(), strict=True)
    ]
    rows = fit_rows([len(t) for t in tokens])
    width = max(len(t) for t in tokens)
    input_ids = torch.zeros(len(rows), width, dtype=torch.long)
    position_ids = torch.zeros(len(rows), width, dtype=torch.long)
    # where each completion token is predicted: (packed row, column before it) -> (sequence row, column)
    from_row, from_column, to_row, to_column = [], [], [], []
    for r, members in enumerate(rows):
        start = 0
        for index in members:
            size, completion = len(tokens[index]), int(lengths[index])
            input_ids[r, start : start + size] = tokens[index]
            position_ids[r, start : start + size] = torch.arange(size)
            first = start + size - completion  # the first completion token's column
            from_row += [r] * completion
            from_column += range(first - 1, first - 1 + completion)
            to_row += [index] * completion
            to_column += range(completion)
            start += size
        position_ids[r, start:] = torch.arange(width - start)  # padding: a sequence of its own
    dtype = next(model.parameters()).dtype
    logits = model(
        input_ids=input_ids,
        attention_mask=episode_attention(position_ids, dtype),
        position_ids=position_ids,
        use_cache=False,
    ).logits[from_row, from_column]
    where = (torch.tensor(to_row, dtype=torch.long), torch.tensor(to_column, dtype=torch.long))
    targets = sequences.completion_ids[where]
    logp = torch.zeros(sequences.completion_ids.shape, dtype=torch.float32)
    logp = logp.index_put(where, token_logprobs(logits, targets, temperature))
    entropy = None
    if with_entropy:
        with torch.no_grad():
            entropy = torch.zeros(sequences.completion_ids.shape, dtype=torch.float32)
            entropy = entropy.index_put(where, token_entropy(logits, temperature))
    return logp, entropy
