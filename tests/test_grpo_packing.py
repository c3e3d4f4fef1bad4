"""Packed policy-update forward passes (`[grpo] packed`): the same completion log-probs, GRPO loss and
gradients as the padded [prompt | completion] layout, on the rows' real tokens only."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch

import rlvr  # noqa: F401  (registers the envs)
from rlvr.core.types import Verdict
from rlvr.trainer import grpo
from rlvr.trainer import model as models
from rlvr.trainer.config import TrainConfig
from rlvr.trainer.episodes import Episode, episode_sequences
from rlvr.trainer.losses import BatchNorms, grpo_loss
from rlvr.trainer.packing import packed_completion_logprobs
from rlvr.trainer.rollout import Sequences, completion_logprobs
from tests.tool_teacher import episodes_and_tiny_model, teacher_transcripts


@pytest.fixture(scope="module")
def episodes_and_model() -> tuple[list[Episode], Any, Any]:
    """Real tool-worlds teacher episodes (some stop early, so lengths differ) and a tiny model."""
    _, data = teacher_transcripts()
    return episodes_and_tiny_model(data)


def single_turn_sequences(pad_id: int, eos_id: int) -> Sequences:
    """Left-padded prompts of different lengths; completions ended by EOS then padded, one truncated."""
    generator = torch.Generator().manual_seed(0)
    prompt_lengths, completion_lengths = [3, 7, 5, 1], [4, 9, 2, 9]
    prompt_ids = torch.full((4, 7), pad_id)
    prompt_mask = torch.zeros(4, 7, dtype=torch.long)
    completion_ids = torch.full((4, 9), pad_id)
    mask = torch.zeros(4, 9)
    for row, (p, c) in enumerate(zip(prompt_lengths, completion_lengths, strict=True)):
        prompt_ids[row, 7 - p :] = torch.randint(3, 300, (p,), generator=generator)
        prompt_mask[row, 7 - p :] = 1
        completion_ids[row, :c] = torch.randint(3, 300, (c,), generator=generator)
        if row != 3:  # row 3 ran out of budget: no EOS
            completion_ids[row, c - 1] = eos_id
        mask[row, :c] = 1.0
    truncated = torch.tensor([False, False, False, True])
    return Sequences(prompt_ids, prompt_mask, completion_ids, mask, truncated)


def loss_of(model: Any, sequences: Sequences, logprobs: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """The GRPO loss (clipped ratio and k3 KL against fixed old / reference log-probs) and the
    log-probs it was computed from."""
    logp, _ = logprobs(model, sequences, 0.7)
    generator = torch.Generator().manual_seed(1)
    old = logp.detach() + 0.3 * torch.randn(logp.shape, generator=generator)  # some ratios clip
    ref = logp.detach() - 0.2 * torch.rand(logp.shape, generator=generator)
    advantages = torch.linspace(-1.0, 1.0, logp.shape[0])
    out = grpo_loss(
        logp,
        old,
        ref,
        advantages,
        sequences.mask,
        norms=BatchNorms.of(sequences.mask, sequences.mask.shape[1]),
        beta=0.05,
    )
    return out.loss, logp


def gradients(model: Any, loss: torch.Tensor) -> list[torch.Tensor]:
    model.zero_grad(set_to_none=True)
    loss.backward()
    return [p.grad.clone() for p in model.parameters() if p.grad is not None]


def assert_same_update(model: Any, sequences: Sequences) -> None:
    padded_loss, padded_logp = loss_of(model, sequences, completion_logprobs)
    packed_loss, packed_logp = loss_of(model, sequences, packed_completion_logprobs)
    counted = sequences.mask.bool()
    assert torch.allclose(packed_logp[counted], padded_logp[counted], atol=1e-5, rtol=1e-5)
    assert packed_loss.item() == pytest.approx(padded_loss.item(), rel=1e-5)
    padded_grads, packed_grads = gradients(model, padded_loss), gradients(model, packed_loss)
    assert len(padded_grads) == len(packed_grads) > 0
    for a, b in zip(padded_grads, packed_grads, strict=True):
        assert torch.allclose(a, b, atol=1e-6, rtol=1e-4)


def test_multi_turn_logprobs_loss_and_gradients_equal_the_padded_layout(episodes_and_model: Any) -> None:
    episodes, model, tokenizer = episodes_and_model
    sequences = episode_sequences(episodes, tokenizer.pad_token_id)
    lengths = sequences.completion_attention.sum(-1)
    assert len(set(lengths.tolist())) > 3  # episodes of really different lengths
    assert (sequences.mask < sequences.completion_attention).any()  # observations: context, not loss
    assert_same_update(model, sequences)
    padded_entropy = completion_logprobs(model, sequences, 0.7, with_entropy=True)[1]
    packed_entropy = packed_completion_logprobs(model, sequences, 0.7, with_entropy=True)[1]
    assert padded_entropy is not None and packed_entropy is not None
    counted = sequences.mask.bool()
    assert torch.allclose(packed_entropy[counted], padded_entropy[counted], atol=1e-5, rtol=1e-5)


def test_single_turn_logprobs_loss_and_gradients_equal_the_padded_layout(episodes_and_model: Any) -> None:
    _, model, tokenizer = episodes_and_model
    assert_same_update(model, single_turn_sequences(tokenizer.pad_token_id, tokenizer.eos_token_id))


def test_an_episode_is_not_seen_by_the_episodes_packed_beside_it(episodes_and_model: Any) -> None:
    """Changing one sequence's tokens changes no other sequence's log-probs."""
    episodes, model, tokenizer = episodes_and_model
    sequences = episode_sequences(episodes, tokenizer.pad_token_id)
    changed = copy.deepcopy(sequences)
    changed.completion_ids[0, : int(changed.completion_attention[0].sum())] = 7
    with torch.no_grad():
        before = packed_completion_logprobs(model, sequences, 1.0)[0]
        after = packed_completion_logprobs(model, changed, 1.0)[0]
    assert not torch.allclose(before[0], after[0])
    assert torch.equal(before[1:], after[1:])


def test_real_tokens_after_padding_are_refused(episodes_and_model: Any) -> None:
    _, model, tokenizer = episodes_and_model
    sequences = single_turn_sequences(tokenizer.pad_token_id, tokenizer.eos_token_id)
    sequences.mask[0, 6] = 1.0  # a counted token after the row's padding began
    with pytest.raises(ValueError, match="padding after"):
        packed_completion_logprobs(model, sequences, 1.0)


def test_grpo_packed_setting_gives_the_padded_update(
    episodes_and_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`[grpo] packed` through `policy_update` (mu = 2, a KL reference, two micro-batches): the same
    weights after the update as the padded layout, and the packed passes are the ones that ran."""
    episodes, model, tokenizer = episodes_and_model
    calls: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor | None]:
        calls.append(1)
        return packed_completion_logprobs(*args, **kwargs)

    monkeypatch.setattr(grpo, "packed_completion_logprobs", counted)
    sequences = episode_sequences(episodes, tokenizer.pad_token_id)
    count = sequences.prompt_ids.shape[0]
    weights, stats = [], []
    for packed in (False, True):
        policy = copy.deepcopy(model)
        config = TrainConfig()
        g = config.grpo
        g.packed, g.num_iterations, g.beta, g.micro_batch_size = packed, 2, 0.1, (count + 1) // 2
        rewards = torch.tensor([float(i % 3 == 0) for i in range(count)])
        rollout = grpo.Rollout(
            sequences,
            torch.arange(count) // 4,
            [Verdict("t", float(r)) for r in rewards],
            rewards,
            torch.ones(count, dtype=torch.bool),
            episodes,
        )
        reference = models.ReferencePolicy(copy.deepcopy(model), uses_lora=False)
        optimizer = torch.optim.SGD(policy.parameters(), lr=3.0)  # (Adam would magnify float noise)
        stats.append(grpo.policy_update(policy, reference, optimizer, rollout, config))
        weights.append([p.detach().clone() for p in policy.parameters()])
    assert len(calls) == 2 * 4  # two micro-batches x (old, reference, two gradient passes)
    assert stats[0]["loss"] != 0.0 and stats[0]["grad_norm"] > 0
    assert stats[1]["loss"] == pytest.approx(stats[0]["loss"], rel=1e-4, abs=1e-7)
    for a, b in zip(*weights, strict=True):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4)
