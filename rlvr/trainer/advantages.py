"""Group-relative advantages: each completion's reward against the other completions of its task.

Groups are given by `group_ids` (one integer per completion, completions of one task share an id),
so groups may have different sizes (difficulty-adaptive G).
"""

from __future__ import annotations

import torch

from rlvr.trainer.options import SCALINGS, RewardScaling


def group_statistics(rewards: torch.Tensor, group_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-completion mean and population std of the rewards of its group."""
    groups, inverse = torch.unique(group_ids, return_inverse=True)
    count = torch.zeros(len(groups), dtype=rewards.dtype).index_add_(0, inverse, torch.ones_like(rewards))
    total = torch.zeros(len(groups), dtype=rewards.dtype).index_add_(0, inverse, rewards)
    mean = total / count
    squared = torch.zeros(len(groups), dtype=rewards.dtype).index_add_(
        0, inverse, (rewards - mean[inverse]) ** 2
    )
    std = (squared / count).sqrt()
    return mean[inverse], std[inverse]


def zero_std_groups(rewards: torch.Tensor, group_ids: torch.Tensor) -> torch.Tensor:
    """A bool per distinct group (in `torch.unique` order): True where every reward is equal,
    so the group carries no relative signal."""
    groups, inverse = torch.unique(group_ids, return_inverse=True)
    high = torch.full((len(groups),), -torch.inf, dtype=rewards.dtype).scatter_reduce(
        0, inverse, rewards, reduce="amax"
    )
    low = torch.full((len(groups),), torch.inf, dtype=rewards.dtype).scatter_reduce(
        0, inverse, rewards, reduce="amin"
    )
    return high == low


def informative_rows(rewards: torch.Tensor, group_ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """A bool per row: kept, and its group's kept rewards are not all equal (DAPO dynamic sampling)."""
    out = torch.zeros_like(keep)
    kept = keep.nonzero().squeeze(-1)
    if len(kept):
        _, inverse = torch.unique(group_ids[kept], return_inverse=True)
        out[kept] = ~zero_std_groups(rewards[kept], group_ids[kept])[inverse]
    return out


def group_advantages(
    rewards: torch.Tensor,
    group_ids: torch.Tensor,
    scaling: RewardScaling = "group",
    eps: float = 1e-4,
) -> torch.Tensor:
    """`A_i = (r_i - mean_group) / (std + eps)`.

    scaling="group": std of the completion's own group (GRPO); "batch": std of every reward in the
    batch (more robust when groups are small); "none": no division (Dr. GRPO, which removes the
    bias towards groups whose rewards barely differ).
    """
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {SCALINGS}, got {scaling!r}")
    if rewards.shape != group_ids.shape or rewards.ndim != 1:
        raise ValueError("rewards and group_ids must be 1-D tensors of the same length")
    rewards = rewards.to(torch.float64)
    mean, group_std = group_statistics(rewards, group_ids)
    centered = rewards - mean
    if scaling == "group":
        return (centered / (group_std + eps)).float()
    if scaling == "batch":
        return (centered / (rewards.std(unbiased=False) + eps)).float()
    return centered.float()
