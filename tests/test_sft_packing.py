"""Packed warm-start batches (`[sft] packed`): the same loss and gradients as the padded layout, on
fewer tokens; episodes packed side by side never see each other."""

from __future__ import annotations

import random
from typing import Any

import pytest
import torch

import rlvr  # noqa: F401  (registers the envs)
from rlvr.trainer.config import build_config
from rlvr.trainer.episodes import Episode, episode_sequences
from rlvr.trainer.packing import PackedBatch, fit_rows, pack_episodes, packed_episode_batches, packed_forward
from rlvr.trainer.sft import batch_loss, episode_batches
from rlvr.trainer.warm_start import teacher_batches
from tests.tool_teacher import episodes_and_tiny_model, teacher_transcripts


@pytest.fixture(scope="module")
def teacher() -> tuple[Any, list[Any]]:
    """tool-worlds and real teacher transcripts of it (some stop early, so lengths differ)."""
    return teacher_transcripts()


@pytest.fixture(scope="module")
def episodes_and_model(teacher: tuple[Any, list[Any]]) -> tuple[list[Episode], Any, Any]:
    """The teacher's episodes and a tiny model."""
    return episodes_and_tiny_model(teacher[1])


def gradients(model: Any, loss: torch.Tensor) -> list[torch.Tensor]:
    model.zero_grad(set_to_none=True)
    loss.backward()
    return [p.grad.clone() for p in model.parameters() if p.grad is not None]


def test_packed_loss_and_gradients_equal_the_padded_layout(episodes_and_model: Any) -> None:
    episodes, model, tokenizer = episodes_and_model
    assert len({len(e.prompt_ids) + len(e.ids) for e in episodes}) > 3  # lengths that really differ
    padded = episode_sequences(episodes, tokenizer.pad_token_id)
    packed = pack_episodes(episodes, tokenizer.pad_token_id)
    assert packed.mask.sum() == padded.mask.sum()  # the same teacher tokens counted
    assert packed.input_ids.numel() < padded.prompt_ids.numel() + padded.completion_ids.numel()
    padded_loss, packed_loss = batch_loss(model, padded), batch_loss(model, packed)
    assert packed_loss.item() == pytest.approx(padded_loss.item(), rel=1e-5)
    for a, b in zip(gradients(model, padded_loss), gradients(model, packed_loss), strict=True):
        assert torch.allclose(a, b, atol=1e-6, rtol=1e-4)


def test_packed_episodes_do_not_attend_to_each_other(episodes_and_model: Any) -> None:
    """Changing one episode changes no other episode's logits in the same row."""
    episodes, model, tokenizer = episodes_and_model

    def size(e: Episode) -> int:
        return len(e.prompt_ids) + len(e.ids)

    by_length = sorted(episodes, key=size)
    first, second, longest = by_length[1], by_length[0], by_length[-1]
    assert size(first) + size(second) <= size(longest)
    batch = pack_episodes([longest, first, second], tokenizer.pad_token_id)
    assert batch.input_ids.shape[0] == 2  # the longest alone, then first and second side by side
    altered = Episode(first.task, list(reversed(first.prompt_ids)), list(first.ids), list(first.sampled))
    other = pack_episodes([longest, altered, second], tokenizer.pad_token_id)
    with torch.no_grad():
        logits, changed = packed_forward(model, batch)[1], packed_forward(model, other)[1]
    start, end = size(first), size(first) + size(second)
    assert torch.allclose(logits[start:end], changed[start:end], atol=1e-5)
    assert not torch.allclose(logits[:start], changed[:start], atol=1e-5)


def test_packed_batches_draw_the_same_episodes() -> None:
    """The same rng draws as the padded batches, so a packed warm start sees the same examples."""
    episodes = [Episode(None, [1] * (i % 5 + 1), [2] * (i % 7 + 1), [True] * (i % 7 + 1)) for i in range(40)]  # type: ignore[arg-type]
    padded, packed = episode_batches(episodes, 0, 8), packed_episode_batches(episodes, 0, 8)
    rng_a, rng_b = random.Random(4), random.Random(4)
    for _ in range(3):
        assert padded(rng_a).mask.sum() == packed(rng_b).mask.sum()
    assert rng_a.random() == rng_b.random()


def test_the_packed_setting_chooses_packed_batches(
    teacher: tuple[Any, list[Any]], episodes_and_model: Any
) -> None:
    pack, data = teacher
    _, _, tokenizer = episodes_and_model
    settings = [
        "model.template='compact'",
        "model.short_prompts=true",
        "sft.batch_size=4",
        "run.pack='tool-worlds'",
    ]
    padded = teacher_batches(build_config(None, settings), pack, tokenizer, data)(random.Random(0))
    packed = teacher_batches(build_config(None, [*settings, "sft.packed=true"]), pack, tokenizer, data)(
        random.Random(0)
    )
    assert isinstance(packed, PackedBatch) and not isinstance(padded, PackedBatch)
    assert packed.mask.sum() == padded.mask.sum()  # the same four episodes


def test_fit_rows_keeps_every_episode_once_within_the_width() -> None:
    lengths = [9, 3, 5, 2, 7, 1, 4]
    rows = fit_rows(lengths)
    assert sorted(i for row in rows for i in row) == list(range(len(lengths)))
    assert all(sum(lengths[i] for i in row) <= max(lengths) for row in rows)
    assert len(rows) == 4  # 9 | 7+2 | 5+4 | 3+1 (first fit, longest first)
