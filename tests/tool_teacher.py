"""Real tool-worlds teacher episodes and a tiny model for the packing tests (SFT and GRPO): some episodes
stop early, so lengths differ and packing has something to pack."""

from __future__ import annotations

from typing import Any

from rlvr.graders.base import make_grader
from rlvr.task_packs.registry import load_pack
from rlvr.trainer import model as models
from rlvr.trainer import teachers
from rlvr.trainer.config import build_config
from rlvr.trainer.curriculum import up_to_difficulty
from rlvr.trainer.episodes import Episode, make_template


def teacher_transcripts() -> tuple[Any, list[Any]]:
    """(the tool-worlds pack, the teacher's transcripts of every 400th training task up to difficulty 2)."""
    pack = load_pack("tool-worlds")
    tasks = up_to_difficulty(pack.tasks("train"), 2)[::400]
    grader = make_grader(pack)
    try:
        data = teachers.teacher_transcripts(
            "rlvr/Tool-v0", pack, grader, tasks, True, bug_rate=0.5, seed=3, mistakes=("stop_early",)
        )
    finally:
        grader.close()
    return pack, data


def episodes_and_tiny_model(data: list[Any]) -> tuple[list[Episode], Any, Any]:
    """The transcripts as episodes of the compact template, and a tiny model (dropout off) with a
    400-word tokenizer built on them."""
    config = build_config(
        None, ["model.tiny_layers=2", "model.tiny_hidden=32", "model.tiny_heads=2", "model.tiny_vocab=400"]
    )
    tokenizer: Any = models.build_tokenizer(teachers.transcript_texts(data), 400, "words")
    tokenizer.padding_side = "left"
    template = make_template(tokenizer, "compact", [tokenizer.eos_token_id])
    episodes = [teachers.teacher_episode(template, tokenizer, t, h) for t, h in data]
    model = models.build_tiny_model(tokenizer, config.model, seed=1)
    models.disable_dropout(model)
    return episodes, model, tokenizer
