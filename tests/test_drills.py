"""Copying drills in the warm start: the completion repeats the prompt's items, only its tokens count in
the loss, batches hold the configured fraction of them, and a run without drills keeps its exact batches."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
import torch

from rlvr.core.types import Task
from rlvr.trainer.config import ConfigError, build_config
from rlvr.trainer.drills import MAX_ITEMS, MIN_ITEMS, copy_drill, drill_episode
from rlvr.trainer.episodes import Episode, PlainTemplate, episode_sequences
from rlvr.trainer.model import build_tokenizer
from rlvr.trainer.sft import encode_pairs, episode_batches, pair_batches

TEXTS = [f"Delete the file /notes/alpha{i}.txt then answer {i * 37}." for i in range(50)]


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    tok = build_tokenizer(TEXTS, 300, "words")
    tok.padding_side = "left"
    return tok


def teacher_episodes(tokenizer: Any, count: int) -> list[Episode]:
    template = PlainTemplate(tokenizer)
    episodes = []
    for i in range(count):
        episode = Episode(Task(id=f"t{i}", prompt=TEXTS[i]), template.prompt_ids(TEXTS[i]))
        episode.add(
            tokenizer(f'{{"final_answer": "{i}"}}', add_special_tokens=False)["input_ids"], sampled=True
        )
        episode.add(tokenizer(" -> ok", add_special_tokens=False)["input_ids"], sampled=False)
        episodes.append(episode)
    return episodes


def test_a_drill_repeats_its_items_in_order() -> None:
    rng = random.Random(0)
    kinds = set()
    for _ in range(300):
        prompt, completion = copy_drill(rng)
        assert prompt == "Copy: " + completion
        items = completion.split(" ")
        assert MIN_ITEMS <= len(items) <= MAX_ITEMS
        for item in items:
            kinds.add(
                "number"
                if item.isdigit()
                else "decimal"
                if re.fullmatch(r"\d+\.\d\d", item)
                else "path"
                if item.startswith("/")
                else "id"
                if re.fullmatch(r"[A-Z]+-\d{3}", item)
                else "word"
                if item.isalpha()
                else item
            )
    assert kinds == {"number", "decimal", "path", "id", "word"}
    assert copy_drill(random.Random(5)) == copy_drill(random.Random(5))


def test_only_the_drill_completion_and_its_eos_count_in_the_loss(tokenizer: Any) -> None:
    episode = drill_episode(random.Random(3), PlainTemplate(tokenizer), tokenizer)
    prompt, completion = copy_drill(random.Random(3))
    assert tokenizer.decode(episode.prompt_ids) == prompt
    assert episode.ids[-1] == tokenizer.eos_token_id and all(episode.sampled)
    assert tokenizer.decode(episode.ids[:-1]) == completion


def test_batches_hold_the_configured_fraction_of_drills(tokenizer: Any) -> None:
    episodes = teacher_episodes(tokenizer, 40)
    template = PlainTemplate(tokenizer)
    batches = episode_batches(
        episodes, tokenizer.pad_token_id, 16, 0.25, lambda r: drill_episode(r, template, tokenizer)
    )
    rng = random.Random(0)
    copy_prefix = tokenizer("Copy", add_special_tokens=False)["input_ids"][0]
    counts = []
    for _ in range(200):
        batch = batches(rng)
        assert batch.prompt_ids.shape[0] == 16
        counts.append(int((batch.prompt_ids == copy_prefix).any(dim=1).sum()))
    assert 3.6 < sum(counts) / len(counts) < 4.4  # 16 x 0.25, sd of the mean ~0.12
    assert max(counts) > min(counts)  # drawn per row, not a fixed share

    pairs = [(t, f" answer {i}") for i, t in enumerate(TEXTS)]
    batch = pair_batches(tokenizer, pairs, 16, 0.5)(random.Random(1))
    rows = [
        tokenizer.decode(row[mask.bool()])
        for row, mask in zip(batch.prompt_ids, batch.prompt_mask, strict=True)
    ]
    assert 2 <= sum(row.startswith("Copy: ") for row in rows) <= 14


def test_without_drills_the_batches_are_exactly_the_plain_ones(tokenizer: Any) -> None:
    episodes = teacher_episodes(tokenizer, 40)
    plain, mixed = random.Random(7), random.Random(7)
    batches = episode_batches(episodes, tokenizer.pad_token_id, 16, 0.0, None)
    for _ in range(5):
        want = episode_sequences(plain.sample(episodes, 16), tokenizer.pad_token_id)
        got = batches(mixed)
        assert torch.equal(want.completion_ids, got.completion_ids) and torch.equal(want.mask, got.mask)
    pairs = [(t, f" answer {i}") for i, t in enumerate(TEXTS)]
    plain, mixed = random.Random(7), random.Random(7)
    want = encode_pairs(tokenizer, plain.sample(pairs, 16))
    assert torch.equal(want.completion_ids, pair_batches(tokenizer, pairs, 16)(mixed).completion_ids)
    with pytest.raises(ValueError, match="drill maker"):
        episode_batches(episodes, tokenizer.pad_token_id, 16, 0.25, None)


@pytest.mark.parametrize("value", ["-0.1", "1.0"])
def test_copy_drills_outside_zero_to_one_is_a_config_error(value: str) -> None:
    with pytest.raises(ConfigError, match="copy_drills"):
        build_config(None, [f"sft.copy_drills={value}"])
