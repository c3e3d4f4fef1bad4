"""Packed warm-start batches: several teacher episodes side by side in one row, none padded to another's
length.

A batch of [left-padded prompt | right-padded episode] rows costs (longest prompt + longest episode) tokens
per row; for the tool demo's teacher episodes that is 2.6x the real tokens. Packing lays each episode
(prompt and turns) end to end in rows as wide as the longest one (first fit, longest first), each with its
own positions from 0 and attending only within itself, so every episode sees exactly the context and the
positions it has in the padded layout. The attention mask says so explicitly (block-diagonal and causal,
one block per episode), so this does not rest on a model noticing where positions restart. The loss is
the same masked mean over the teacher's tokens.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from rlvr.trainer.episodes import Episode
from rlvr.trainer.losses import token_logprobs


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
