"""What the rollout samples with: the tokenizer, the ids that end a turn, the grader, and for a
multi-turn pack the runner that plays episodes through the family's registered env."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.envs.training import Grader, env_id_for_family
from rlvr.trainer.config import ConfigError, TrainConfig
from rlvr.trainer.episodes import EpisodeRunner, make_template

# Families whose tasks are played turn by turn when `[grpo] rollout = "auto"`; every other family is
# one completion per sample, graded in one batch per step.
MULTI_TURN_FAMILIES = frozenset({"tool"})


@dataclass
class Agent:
    """What the rollout samples with: the tokenizer, the stop ids, and for episodes their runner."""

    tokenizer: Any
    grader: Grader
    stop_ids: list[int]
    runner: EpisodeRunner | None  # None: single-turn completions, graded in one batch per step


def uses_episodes(config: TrainConfig, pack: TaskPack) -> bool:
    kind = config.grpo.rollout
    return kind == "episodes" or (kind == "auto" and pack.family in MULTI_TURN_FAMILIES)


def env_id_for(config: TrainConfig, pack: TaskPack) -> str:
    """`[run] env`, else the registered env of the pack's family."""
    env_id = config.run.env or env_id_for_family(pack.family)
    if not env_id:
        raise ConfigError(f"no environment for the {pack.family} family; set [run] env to a Gymnasium env id")
    return env_id


def stop_ids(config: TrainConfig, tokenizer: Any) -> list[int]:
    """EOS and every `[model] stop_tokens` entry, as token ids."""
    ids = [int(tokenizer.eos_token_id)]
    for token in config.model.stop_tokens:
        token_id = tokenizer.convert_tokens_to_ids(token)
        if token_id is None or token_id == tokenizer.unk_token_id:
            raise ConfigError(f"[model] stop_tokens: {token!r} is not a token of this tokenizer")
        ids.append(int(token_id))
    return list(dict.fromkeys(ids))


def check_rollout(config: TrainConfig, pack: TaskPack) -> None:
    """The rollout settings that depend on the pack's family."""
    if uses_episodes(config, pack):
        env_id_for(config, pack)  # a family with no registered env needs [run] env
        if config.grpo.max_staleness:
            raise ConfigError(
                "[grpo] max_staleness = 1 overlaps the grading of single-turn completions; an episode is graded "
                "by its env turn by turn - set [grpo] episode_lanes = 2 to overlap its env steps with sampling"
            )


def make_agent(config: TrainConfig, pack: TaskPack, grader: Grader, tokenizer: Any) -> Agent:
    check_rollout(config, pack)
    stops = stop_ids(config, tokenizer)
    runner = None
    if uses_episodes(config, pack):
        runner = EpisodeRunner(
            env_id_for(config, pack),
            pack,
            grader,
            tokenizer,
            make_template(tokenizer, config.model.template, stops),
            max_turns=config.grpo.max_turns,
            stop_ids=stops,
            short_prompts=config.model.short_prompts,
            lanes=config.grpo.episode_lanes,
        )
    return Agent(tokenizer, grader, stops, runner)
