"""The trainer's choice-valued settings, as types: what `[grpo]` and `[sft]` accept. Kept apart from the
modules that implement them (which import torch), so reading and checking a config imports no model code."""

from __future__ import annotations

from typing import Literal, get_args

RewardScaling = Literal["group", "batch", "none"]
LossType = Literal["grpo", "bnpo", "dapo", "dr_grpo"]
KLEstimator = Literal["k3", "k3_unbiased"]
TruncationHandling = Literal["none", "mask", "penalty"]
# The episode teacher's kinds of mistake: a wrong argument in the last tool turn (another entity of
# the world, a nearby number), a wrong final answer, or the episode ended before its last tool turn.
EpisodeMistake = Literal["argument", "answer", "stop_early"]

SCALINGS: tuple[str, ...] = get_args(RewardScaling)
LOSS_TYPES: tuple[str, ...] = get_args(LossType)
KL_ESTIMATORS: tuple[str, ...] = get_args(KLEstimator)
TRUNCATION_HANDLING: tuple[str, ...] = get_args(TruncationHandling)
EPISODE_MISTAKES: tuple[EpisodeMistake, ...] = get_args(EpisodeMistake)
