"""The GRPO math against independent per-token references written from the formulas in plain loops."""

from __future__ import annotations

import math

import pytest
import torch

from rlvr.trainer.advantages import group_advantages, zero_std_groups
from rlvr.trainer.losses import BatchNorms, aggregate, clipped_surrogate, grpo_loss, k3_kl, token_logprobs
from rlvr.trainer.masks import completion_mask, overlong_penalty

REWARDS = [0.2, 1.0, 0.6, 0.5, 0.5, 0.5, 0.0, 1.0, 0.4]
GROUPS = [0, 0, 0, 1, 1, 1, 2, 2, 2]


def reference_advantages(rewards: list[float], groups: list[int], scaling: str, eps: float) -> list[float]:
    out = []
    everything_mean = sum(rewards) / len(rewards)
    batch_std = math.sqrt(sum((r - everything_mean) ** 2 for r in rewards) / len(rewards))
    for r, g in zip(rewards, groups, strict=True):
        members = [rr for rr, gg in zip(rewards, groups, strict=True) if gg == g]
        mean = sum(members) / len(members)
        std = math.sqrt(sum((m - mean) ** 2 for m in members) / len(members))
        if scaling == "group":
            out.append((r - mean) / (std + eps))
        elif scaling == "batch":
            out.append((r - mean) / (batch_std + eps))
        else:
            out.append(r - mean)
    return out


@pytest.mark.parametrize("scaling", ["group", "batch", "none"])
def test_advantages_match_plain_loop(scaling: str) -> None:
    got = group_advantages(torch.tensor(REWARDS), torch.tensor(GROUPS), scaling, eps=1e-4)  # type: ignore[arg-type]
    want = reference_advantages(REWARDS, GROUPS, scaling, 1e-4)
    assert got.tolist() == pytest.approx(want, abs=1e-5)


def test_advantages_with_groups_of_different_sizes() -> None:
    rewards, groups = [1.0, 0.0, 0.5, 0.5, 0.25, 0.0], [7, 7, 3, 3, 3, 3]
    got = group_advantages(torch.tensor(rewards), torch.tensor(groups), "group", eps=1e-4)
    assert got.tolist() == pytest.approx(reference_advantages(rewards, groups, "group", 1e-4), abs=1e-5)


def test_zero_std_groups_are_found() -> None:
    flags = zero_std_groups(torch.tensor(REWARDS), torch.tensor(GROUPS))
    assert flags.tolist() == [False, True, False]
    advantages = group_advantages(torch.tensor(REWARDS), torch.tensor(GROUPS))
    assert advantages[3:6].abs().max().item() == 0.0


def test_bad_scaling_is_an_error() -> None:
    with pytest.raises(ValueError, match="scaling"):
        group_advantages(torch.tensor([1.0]), torch.tensor([0]), "groups")  # type: ignore[arg-type]


def test_completion_mask_includes_eos_and_hides_padding() -> None:
    eos = 2
    ids = torch.tensor([[5, 6, 2, 0, 0], [5, 2, 2, 0, 0], [5, 6, 7, 8, 9], [2, 0, 0, 0, 0]])
    mask, truncated = completion_mask(ids, eos)
    want_mask, want_truncated = [], []
    for row in ids.tolist():
        seen_eos, row_mask = False, []
        for token in row:
            row_mask.append(0.0 if seen_eos else 1.0)
            seen_eos = seen_eos or token == eos
        want_mask.append(row_mask)
        want_truncated.append(not seen_eos)
    assert mask.tolist() == want_mask
    assert truncated.tolist() == want_truncated == [False, False, True, False]


def test_overlong_penalty_is_dapo_piecewise() -> None:
    lengths = torch.tensor([3, 12, 13, 14, 16, 20])
    max_length, buffer = 16, 4
    want = []
    for n in lengths.tolist():
        if n <= max_length - buffer:
            want.append(0.0)
        elif n <= max_length:
            want.append(((max_length - buffer) - n) / buffer)
        else:
            want.append(-1.0)
    assert overlong_penalty(lengths, max_length, buffer).tolist() == pytest.approx(want)


def fixed_batch() -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    rows, length, vocab = 4, 5, 7
    logits = torch.randn(rows, length, vocab, generator=generator)
    tokens = torch.randint(0, vocab, (rows, length), generator=generator)
    old = token_logprobs(logits, tokens) + 0.3 * torch.randn(rows, length, generator=generator)
    ref = token_logprobs(logits, tokens) + 0.5 * torch.randn(rows, length, generator=generator)
    mask = torch.tensor(
        [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0], [1, 1, 1, 1, 0]], dtype=torch.float32
    )
    advantages = torch.tensor([1.5, -0.7, 0.0, -1.2])
    return {
        "logits": logits,
        "tokens": tokens,
        "old": old,
        "ref": ref,
        "mask": mask,
        "advantages": advantages,
    }


def test_token_logprobs_gather_the_sampled_ids_at_temperature() -> None:
    batch = fixed_batch()
    temperature = 0.7
    got = token_logprobs(batch["logits"], batch["tokens"], temperature)
    for i in range(4):
        for t in range(5):
            row = [v / temperature for v in batch["logits"][i, t].tolist()]
            log_z = math.log(sum(math.exp(v) for v in row))
            assert got[i, t].item() == pytest.approx(row[int(batch["tokens"][i, t])] - log_z, abs=1e-5)


def test_k3_matches_formula_and_is_nonnegative() -> None:
    batch = fixed_batch()
    logp = token_logprobs(batch["logits"], batch["tokens"])
    got = k3_kl(logp, batch["ref"])
    for i in range(4):
        for t in range(5):
            d = batch["ref"][i, t].item() - logp[i, t].item()
            assert got[i, t].item() == pytest.approx(math.exp(d) - d - 1, abs=1e-6)
    assert (got >= 0).all()


def reference_loss(
    batch: dict[str, torch.Tensor], loss_type: str, eps_low: float, eps_high: float, beta: float
) -> float:
    logp = token_logprobs(batch["logits"], batch["tokens"]).tolist()
    old, ref, mask = batch["old"].tolist(), batch["ref"].tolist(), batch["mask"].tolist()
    advantages, max_len = batch["advantages"].tolist(), 5
    per_token: list[list[float]] = []
    for i in range(4):
        row = []
        for t in range(5):
            ratio = math.exp(logp[i][t] - old[i][t])
            clipped = min(max(ratio, 1 - eps_low), 1 + eps_high)
            term = -min(ratio * advantages[i], clipped * advantages[i])
            d = ref[i][t] - logp[i][t]
            term += beta * (math.exp(d) - d - 1)
            row.append(term)
        per_token.append(row)
    if loss_type == "grpo":
        means = [
            sum(per_token[i][t] * mask[i][t] for t in range(5)) / sum(mask[i])
            for i in range(4)
            if sum(mask[i]) > 0
        ]
        return sum(means) / len(means)
    token_sum = sum(per_token[i][t] * mask[i][t] for i in range(4) for t in range(5))
    if loss_type in ("bnpo", "dapo"):
        return token_sum / sum(sum(row) for row in mask)
    return token_sum / (4 * max_len)


@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dapo", "dr_grpo"])
@pytest.mark.parametrize("beta", [0.0, 0.04])
def test_grpo_loss_matches_plain_loop(loss_type: str, beta: float) -> None:
    batch = fixed_batch()
    logp = token_logprobs(batch["logits"], batch["tokens"])
    out = grpo_loss(
        logp,
        batch["old"],
        batch["ref"],
        batch["advantages"],
        batch["mask"],
        norms=BatchNorms.of(batch["mask"], 5),
        loss_type=loss_type,  # type: ignore[arg-type]
        epsilon_low=0.2,
        epsilon_high=0.28,
        beta=beta,
    )
    assert out.loss.item() == pytest.approx(reference_loss(batch, loss_type, 0.2, 0.28, beta), abs=1e-5)
    assert (out.kl is None) == (beta == 0.0)


def test_clip_flags_follow_the_sign_of_the_advantage() -> None:
    logp = torch.log(torch.tensor([[1.5, 0.5, 1.5, 0.5, 1.0]]))
    old = torch.zeros(1, 5)
    for advantage, want_low, want_high in [
        (1.0, [False] * 5, [True, False, True, False, False]),
        (-1.0, [False, True, False, True, False], [False] * 5),
    ]:
        out = clipped_surrogate(logp, old, torch.tensor([advantage]), 0.2, 0.28)
        assert out.low_clipped[0].tolist() == want_low
        assert out.high_clipped[0].tolist() == want_high


def test_clipped_tokens_get_no_gradient() -> None:
    logp = torch.log(torch.tensor([[1.5, 1.1]])).requires_grad_(True)
    out = clipped_surrogate(logp, torch.zeros(1, 2), torch.tensor([1.0]), 0.2, 0.2)
    out.loss.sum().backward()
    assert logp.grad is not None
    assert logp.grad[0, 0].item() == 0.0  # ratio 1.5 > 1.2 with A > 0: clipped, no push further
    assert logp.grad[0, 1].item() == pytest.approx(-1.1)  # d(-ratio*A)/dlogp = -ratio


def test_micro_batches_sum_to_the_full_batch_loss() -> None:
    batch = fixed_batch()
    logp = token_logprobs(batch["logits"], batch["tokens"])
    norms = BatchNorms.of(batch["mask"], 5)
    for loss_type in ("grpo", "bnpo", "dr_grpo"):
        full = aggregate(logp, batch["mask"], loss_type, norms)  # type: ignore[arg-type]
        parts = sum(
            aggregate(logp[s], batch["mask"][s], loss_type, norms)  # type: ignore[arg-type]
            for s in (slice(0, 1), slice(1, 3), slice(3, 4))
        )
        assert float(parts) == pytest.approx(full.item(), abs=1e-6)
