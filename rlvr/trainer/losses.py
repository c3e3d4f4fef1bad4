"""The GRPO objective per token, and how per-token terms are averaged into one loss.

Every function here works on a (micro-)batch of completions laid out as (rows, completion tokens)
with a float mask; the normalisers of `aggregate` are taken from the whole optimiser batch so that
summing micro-batch losses gives exactly the full-batch loss (and gradient).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from rlvr.trainer.options import KL_ESTIMATORS, LOSS_TYPES, KLEstimator, LossType


def token_logprobs(logits: torch.Tensor, tokens: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """log pi(token) under the sampling distribution softmax(logits / temperature), at the sampled ids."""
    logprobs = torch.log_softmax(logits.float() / temperature, dim=-1)
    return logprobs.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


def token_entropy(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Entropy of the sampling distribution at every position."""
    logprobs = torch.log_softmax(logits.float() / temperature, dim=-1)
    return -(logprobs.exp() * logprobs).sum(-1)


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimator of KL(pi || pi_ref) on the sampled tokens: exp(d) - d - 1 with
    d = log pi_ref - log pi. Unbiased, always >= 0."""
    delta = ref_logp - logp
    return torch.exp(delta) - delta - 1.0


@dataclass(frozen=True)
class ClippedSurrogate:
    loss: torch.Tensor  # per token, to minimise: -min(ratio * A, clip(ratio) * A)
    ratio: torch.Tensor
    low_clipped: torch.Tensor  # bool: ratio < 1 - eps_low where A < 0 (the clip is what acts)
    high_clipped: torch.Tensor  # bool: ratio > 1 + eps_high where A > 0


def clipped_surrogate(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    epsilon_low: float,
    epsilon_high: float,
) -> ClippedSurrogate:
    """PPO's clipped surrogate with separate lower/upper clip ranges (DAPO's clip-higher).

    `old_logp` are the log-probs of the policy that sampled the completions, computed once per
    rollout before any update: at the first inner iteration ratio == 1 exactly (and its gradient
    is the policy gradient); from the second on the ratio moves and clipping can act.
    """
    advantages = advantages.unsqueeze(-1) if advantages.ndim == logp.ndim - 1 else advantages
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 1.0 - epsilon_low, 1.0 + epsilon_high)
    loss = -torch.min(ratio * advantages, clipped * advantages)
    return ClippedSurrogate(
        loss=loss,
        ratio=ratio,
        low_clipped=(ratio < 1.0 - epsilon_low) & (advantages < 0),
        high_clipped=(ratio > 1.0 + epsilon_high) & (advantages > 0),
    )


@dataclass(frozen=True)
class BatchNorms:
    """Normalisers of the whole optimiser batch, so micro-batch losses add up to the batch loss."""

    sequences: int  # every completion in the batch (dr_grpo's constant)
    sequences_with_tokens: int  # completions with at least one unmasked token (grpo's mean)
    tokens: float  # unmasked tokens in the batch (bnpo/dapo)
    max_completion_length: int  # the generation budget (dr_grpo's constant)

    @classmethod
    def of(cls, mask: torch.Tensor, max_completion_length: int) -> BatchNorms:
        return cls(
            sequences=int(mask.shape[0]),
            sequences_with_tokens=int((mask.sum(-1) > 0).sum()),
            tokens=float(mask.sum()),
            max_completion_length=max_completion_length,
        )


def aggregate(
    per_token: torch.Tensor, mask: torch.Tensor, loss_type: LossType, norms: BatchNorms
) -> torch.Tensor:
    """Average per-token terms into one scalar.

    grpo: mean over each sequence's tokens, then mean over sequences (long answers weigh less per
    token). bnpo / dapo: one mean over every token of the batch (DAPO's token-level loss; the two
    differ only in multi-process reduction, which this trainer does not do). dr_grpo: token sum
    divided by a constant (sequences x generation budget), Dr. GRPO's length-unbiased form.
    """
    masked = per_token * mask
    if loss_type == "grpo":
        per_sequence = masked.sum(-1) / mask.sum(-1).clamp(min=1.0)
        return per_sequence.sum() / max(norms.sequences_with_tokens, 1)
    if loss_type in ("bnpo", "dapo"):
        return masked.sum() / max(norms.tokens, 1.0)
    if loss_type == "dr_grpo":
        return masked.sum() / (norms.sequences * norms.max_completion_length)
    raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")


@dataclass(frozen=True)
class GRPOLoss:
    loss: torch.Tensor
    policy_loss: torch.Tensor
    kl: torch.Tensor | None  # per token, or None when beta == 0
    surrogate: ClippedSurrogate


def grpo_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor | None,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    norms: BatchNorms,
    loss_type: LossType = "grpo",
    epsilon_low: float = 0.2,
    epsilon_high: float = 0.2,
    beta: float = 0.0,
    kl_estimator: KLEstimator = "k3",
) -> GRPOLoss:
    """The per-micro-batch GRPO loss: clipped surrogate + beta * KL, aggregated.

    kl_estimator "k3": Schulman's k3 on the sampled tokens. "k3_unbiased": k3 weighted by the
    importance ratio pi / pi_old (DeepSeek-V3.2's form): the tokens were sampled by the old policy,
    so from the second pass over a rollout on, plain k3 estimates the KL of the wrong distribution.
    The ratio is not detached: its gradient is part of the KL's gradient."""
    surrogate = clipped_surrogate(logp, old_logp, advantages, epsilon_low, epsilon_high)
    per_token = surrogate.loss
    kl = None
    if beta != 0.0:
        if ref_logp is None:
            raise ValueError("beta != 0 needs reference log-probs")
        kl = k3_kl(logp, ref_logp)
        if kl_estimator == "k3_unbiased":
            kl = surrogate.ratio * kl
        elif kl_estimator != "k3":
            raise ValueError(f"kl_estimator must be one of {KL_ESTIMATORS}, got {kl_estimator!r}")
        per_token = per_token + beta * kl
    return GRPOLoss(
        loss=aggregate(per_token, mask, loss_type, norms),
        policy_loss=aggregate(surrogate.loss, mask, loss_type, norms).detach(),
        kl=kl,
        surrogate=surrogate,
    )
