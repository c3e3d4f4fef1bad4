"""Copying drills for a warm start from scratch.

A model trained from scratch on a pack's teacher episodes learns the pack's names by heart long before it
learns to copy a name it has never seen from the instruction into a tool call, and whether that copying
forms within the warm start decides whether the run can generalise to held-out worlds. A copying drill
is a prompt of random items - made-up words, numbers, decimals, ids and paths, none drawn from any pack -
and a completion that repeats them in order: the skill alone, with nothing to memorise. `[sft]
copy_drills` is the fraction of each warm-start batch they take.
"""

from __future__ import annotations

import random
import string
from typing import Any

from rlvr.core.types import Task
from rlvr.trainer.episodes import Episode, TurnTemplate

MIN_ITEMS, MAX_ITEMS = 2, 6
DRILL_TASK = Task(id="copy-drill", prompt="", family="drill", split="train")


def _word(rng: random.Random, low: int, high: int) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(low, high)))


def drill_item(rng: random.Random) -> str:
    """One thing to copy: a made-up word, a number of 1-6 digits, a decimal, an id or a path."""
    kind = rng.random()
    if kind < 0.35:
        return _word(rng, 3, 9)
    if kind < 0.7:
        return str(rng.randint(0, 10 ** rng.randint(1, 6) - 1))
    if kind < 0.8:
        return f"{rng.randint(0, 99)}.{rng.randint(0, 99):02d}"
    if kind < 0.9:
        return f"{_word(rng, 2, 4).upper()}-{rng.randint(100, 999)}"
    return f"/{_word(rng, 3, 7)}/{_word(rng, 3, 8)}{rng.choice(['.txt', '.md', '.log'])}"


def copy_drill(rng: random.Random) -> tuple[str, str]:
    """(prompt, completion): `Copy: <items>` and the same items, in order."""
    items = " ".join(drill_item(rng) for _ in range(rng.randint(MIN_ITEMS, MAX_ITEMS)))
    return f"Copy: {items}", items


def drill_episode(rng: random.Random, template: TurnTemplate, tokenizer: Any) -> Episode:
    """A copying drill in the episode layout: the prompt rendered as a task's first message, the
    completion (and its EOS) the only tokens the loss counts."""
    prompt, completion = copy_drill(rng)
    episode = Episode(DRILL_TASK, template.prompt_ids(prompt))
    ids = tokenizer(completion, add_special_tokens=False)["input_ids"]
    episode.add([*ids, tokenizer.eos_token_id], sampled=True)
    return episode
