"""The policy GRPO starts from (also its KL reference): the base model, warm-started by supervised
steps on a teacher when configured.

    single-turn pack: the pack's teacher completions (`sft_examples`), noisy at `[sft] bug_rate`
    multi-turn pack: teacher episodes played through the env (`teachers.teacher_transcripts`)
    `[sft] clean_steps`: a first stage on the teacher without mistakes, then the configured one
    no `[model] path`: the tiny demo model, its tokenizer trained on the teacher's texts

The result is saved to the run's warm_start/ so a resumed run rebuilds exactly the same start.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.envs.training import Grader
from rlvr.trainer import model as models
from rlvr.trainer import teachers
from rlvr.trainer.agent import env_id_for, stop_ids, uses_episodes
from rlvr.trainer.config import TrainConfig
from rlvr.trainer.curriculum import up_to_difficulty
from rlvr.trainer.episodes import make_template
from rlvr.trainer.packing import packed_episode_batches
from rlvr.trainer.sft import episode_batches, pair_batches, supervised_warm_start

TeacherData = list[tuple[Task, list[dict[str, str]]]] | list[tuple[str, str]]


def spread_sample(tasks: list[Task], count: int, seed: int) -> list[Task]:
    """At most `count` of `tasks`, drawn uniformly from the seed and kept in their order: a pack lists
    its tasks template by template, so a prefix would drop whole templates."""
    if len(tasks) <= count:
        return tasks
    keep = sorted(random.Random(f"sft-tasks/{seed}").sample(range(len(tasks)), count))
    return [tasks[i] for i in keep]


def teacher_data(
    config: TrainConfig, pack: TaskPack, grader: Grader, bug_rate: float
) -> tuple[TeacherData, list[str]]:
    """The warm start's teacher examples at `bug_rate` and their texts (for the tiny tokenizer):
    episodes played through the env for a multi-turn pack, (prompt, completion) pairs otherwise."""
    if not uses_episodes(config, pack):
        pairs = pack.sft_examples(config.sft.examples, config.run.seed, bug_rate)  # type: ignore[attr-defined]
        return pairs, [p + c for p, c in pairs]
    tasks = up_to_difficulty(pack.tasks(config.run.train_split), config.sft.max_difficulty)
    tasks = spread_sample(tasks, config.sft.examples, config.run.seed)
    transcripts = teachers.teacher_transcripts(
        env_id_for(config, pack),
        pack,
        grader,
        tasks,
        config.model.short_prompts,
        bug_rate=bug_rate,
        seed=config.run.seed,
        mistakes=tuple(config.sft.episode_mistakes),
    )
    return transcripts, teachers.transcript_texts(transcripts)


def teacher_batches(
    config: TrainConfig, pack: TaskPack, tokenizer: Any, data: TeacherData
) -> Callable[[random.Random], Any]:
    if not uses_episodes(config, pack):
        return pair_batches(tokenizer, data, config.sft.batch_size)  # type: ignore[arg-type]
    template = make_template(tokenizer, config.model.template, stop_ids(config, tokenizer))
    episodes = [teachers.teacher_episode(template, tokenizer, t, h) for t, h in data]  # type: ignore[misc]
    if config.sft.packed:
        return packed_episode_batches(episodes, tokenizer.pad_token_id, config.sft.batch_size)
    return episode_batches(episodes, tokenizer.pad_token_id, config.sft.batch_size)


def starting_policy(
    config: TrainConfig,
    directory: Path,
    pack: TaskPack,
    grader: Grader,
    log: Callable[[str], None],
) -> tuple[Any, Any, dict[str, Any]]:
    """(model, tokenizer, what the warm start did), reusing `directory` when it holds a warm start."""
    if (directory / "config.json").is_file():
        model, tokenizer = models.load_pretrained(str(directory))
        return model, tokenizer, {"reused": True}
    sft_steps, clean_steps = config.sft_steps, config.sft.clean_steps
    data: TeacherData = []
    texts: list[str] = []
    if sft_steps > 0 or not config.model.path:
        data, texts = teacher_data(config, pack, grader, config.sft.bug_rate)
    tokenizer: Any
    if config.model.path:
        model, tokenizer = models.load_pretrained(config.model.path, config.model.dtype)
    else:
        tokenizer = models.build_tokenizer(
            texts,
            config.model.tiny_vocab,
            config.model.tiny_pretokenizer,
            config.model.tiny_max_token_length,
        )
        tokenizer.padding_side = "left"
        model = models.build_tiny_model(tokenizer, config.model, config.run.seed)
    models.disable_dropout(model)
    info: dict[str, Any] = {"steps": sft_steps, "examples": len(data)}
    if sft_steps > 0:
        # (teacher data, SFT steps, batch-order seed) per stage; each stage has its own optimiser
        stages = [(data, sft_steps, config.run.seed)]
        if clean_steps:
            clean, _ = teacher_data(config, pack, grader, bug_rate=0.0)
            stages = [
                (clean, clean_steps, config.run.seed),
                (data, sft_steps - clean_steps, config.run.seed + 100),
            ]
            info["clean_steps"] = clean_steps
        log(
            f"warm start: {sft_steps} SFT steps on {len(data)} teacher examples"
            + (f", the first {clean_steps} without mistakes" if clean_steps else "")
        )
        started = time.perf_counter()
        losses: list[float] = []
        with tqdm(total=sft_steps, desc="sft", leave=False, disable=None) as bar:
            for stage_data, steps, seed in stages:
                losses += supervised_warm_start(
                    model,
                    teacher_batches(config, pack, tokenizer, stage_data),
                    steps=steps,
                    learning_rate=config.sft.learning_rate,
                    seed=seed,
                    progress=bar,
                )
        info.update(seconds=time.perf_counter() - started, first_loss=losses[0], final_loss=losses[-1])
    if sft_steps > 0 or not config.model.path:
        model.save_pretrained(directory)
        tokenizer.save_pretrained(directory)
    return model, tokenizer, info
