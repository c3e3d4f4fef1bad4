"""The two-stage warm start (`[sft] clean_steps`): the first stage trains on the teacher without
mistakes, the second on the configured teacher with its own optimiser and batch order; the one-stage
path is unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import rlvr  # noqa: F401  (registers the envs)
from rlvr.graders.base import make_grader
from rlvr.task_packs.registry import load_pack
from rlvr.trainer import teachers
from rlvr.trainer import warm_start as start
from rlvr.trainer.config import ConfigError, build_config

SETTINGS = [
    "model.tiny_layers=1",
    "model.tiny_hidden=32",
    "model.tiny_heads=2",
    "model.tiny_vocab=400",
    "sft.examples=24",
    "sft.batch_size=4",
    "sft.max_difficulty=2",
    "sft.bug_rate=0.5",
    'sft.episode_mistakes=["stop_early"]',
    "run.pack='tool-worlds'",
    "run.seed=5",
]


@pytest.fixture(scope="module")
def pack() -> Any:
    return load_pack("tool-worlds")  # its procedural tasks are generated once per module


def warm_start(
    pack: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *settings: str
) -> tuple[list[Any], dict[str, Any]]:
    """Run the real warm start; record each stage's (teacher transcripts, steps, seed)."""
    config = build_config(None, [*SETTINGS, *settings])
    stages: list[Any] = []
    real_batches, real_train = start.teacher_batches, start.supervised_warm_start

    def batches(config: Any, pack: Any, tokenizer: Any, data: Any) -> Any:
        stages.append([data])
        return real_batches(config, pack, tokenizer, data)

    def train(model: Any, batches: Any, *, steps: int, seed: int, **kwargs: Any) -> list[float]:
        stages[-1] += [steps, seed]
        return real_train(model, batches, steps=steps, seed=seed, **kwargs)

    monkeypatch.setattr(start, "teacher_batches", batches)
    monkeypatch.setattr(start, "supervised_warm_start", train)
    _, _, info = start.starting_policy(
        config, tmp_path / "warm_start", pack, make_grader(pack), lambda _: None
    )
    return stages, info


def test_clean_stage_trains_on_the_teacher_without_mistakes_then_the_configured_one(
    pack: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stages, info = warm_start(pack, tmp_path, monkeypatch, "sft.steps=6", "sft.clean_steps=4")
    assert [(steps, seed) for _, steps, seed in stages] == [(4, 5), (2, 105)]
    (clean, _, _), (noisy, _, _) = stages
    assert [task.id for task, _ in clean] == [task.id for task, _ in noisy]  # the same tasks
    # every clean episode plays the whole reference; the configured teacher quits early about half the time
    full = [len(teachers.reference_turns(task)) for task, _ in clean]
    turns = [sum(m["role"] == "assistant" for m in h) for _, h in clean]
    assert turns == full
    quit_early = sum(
        sum(m["role"] == "assistant" for m in h) < n for (_, h), n in zip(noisy, full, strict=True)
    )
    assert 4 <= quit_early <= 20, quit_early
    assert (
        info["steps"] == 6
        and info["clean_steps"] == 4
        and (tmp_path / "warm_start" / "config.json").is_file()
    )


def test_without_clean_steps_the_warm_start_is_one_stage_on_the_configured_teacher(
    pack: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stages, info = warm_start(pack, tmp_path, monkeypatch, "sft.steps=3")
    assert [(steps, seed) for _, steps, seed in stages] == [(3, 5)]
    assert "clean_steps" not in info


@pytest.mark.parametrize("clean_steps", [-1, 6, 9])
def test_clean_steps_must_leave_a_second_stage(clean_steps: int) -> None:
    with pytest.raises(ConfigError, match=r"\[sft\] clean_steps must be 0 or between 1 and steps - 1"):
        build_config(None, ["sft.steps=6", f"sft.clean_steps={clean_steps}"])
