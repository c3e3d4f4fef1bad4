"""Which completion tokens count: everything up to and including the first EOS; nothing after it.

A completion with no EOS within the token budget is *truncated*: it is flagged, and depending on
the option either kept as is, dropped from the loss (overlong filtering), or its reward is reduced
by the soft overlong penalty of DAPO.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def completion_mask(
    completion_ids: torch.Tensor, stop_ids: int | Sequence[int]
) -> tuple[torch.Tensor, torch.Tensor]:
    """(mask, truncated): mask[i, t] = 1 for tokens up to and including the first stop token (EOS
    or any of `stop_ids`) of row i; truncated[i] = True when row i has none (every generated token
    counts then)."""
    stops = torch.tensor([stop_ids] if isinstance(stop_ids, int) else list(stop_ids))
    is_eos = torch.isin(completion_ids, stops)
    truncated = ~is_eos.any(dim=1)
    length = completion_ids.shape[1]
    first_eos = torch.where(truncated, length - 1, is_eos.int().argmax(dim=1))
    positions = torch.arange(length).unsqueeze(0)
    mask = (positions <= first_eos.unsqueeze(1)).to(torch.float32)
    return mask, truncated


def overlong_penalty(
    lengths: torch.Tensor, max_length: int, buffer: int, factor: float = 1.0
) -> torch.Tensor:
    """DAPO's soft overlong punishment, a reward term <= 0: zero up to `max_length - buffer`
    tokens, then falling linearly to `-factor` at `max_length`."""
    if buffer <= 0:
        return torch.where(lengths >= max_length, -factor, 0.0).to(torch.float32)
    start = max_length - buffer
    over = (lengths.to(torch.float32) - start).clamp(min=0.0) / buffer
    return -factor * over.clamp(max=1.0)
