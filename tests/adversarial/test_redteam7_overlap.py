"""Red team 7, the trainer's overlapped grading (`[grpo] max_staleness = 1`): a completion that makes
the grader raise, graded in the worker thread while the next round generates.

Held (guards): the fault is confined to the completions that cause it - the rest of the round keep
their verdicts and rewards, the step learns from them - and the next step's round, graded by the
same worker, is graded normally.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from rlvr.core.types import Task, Verdict
from rlvr.graders.base import Grader
from rlvr.task_packs.registry import load_pack
from rlvr.trainer import grpo
from rlvr.trainer.config import ModelConfig, TrainConfig
from rlvr.trainer.curriculum import Curriculum
from rlvr.trainer.model import build_tiny_model, build_tokenizer, disable_dropout

PACK = load_pack("humaneval")
TASKS = [t for t in PACK.tasks()][:3]


class PoisonedGrader(Grader):
    """Raises for any batch holding a completion with an odd number of characters (a grader bug that
    some content reaches); rewards every other completion by its length."""

    def __init__(self) -> None:
        super().__init__(PACK)
        self.family = PACK.family
        self.batches = 0

    def grade_tasks(self, tasks: Sequence[Task], completions: Sequence[str]) -> list[Verdict]:
        self.batches += 1
        if any(len(c) % 2 for c in completions):
            raise RuntimeError("comparison exploded")
        return [
            Verdict(t.id, 1.0 / (1 + len(c)), passed=True) for t, c in zip(tasks, completions, strict=True)
        ]


def test_a_fault_in_the_overlapped_grading_stays_with_its_completions() -> None:
    texts = [t.prompt for t in TASKS] + ["def f(x):\n    return x\n", "x = 1\n"]
    tokenizer = build_tokenizer(texts, 300)
    model = build_tiny_model(tokenizer, ModelConfig(tiny_layers=1, tiny_hidden=32, tiny_heads=2), 0)
    disable_dropout(model)
    config = TrainConfig()
    g = config.grpo
    g.max_staleness, g.tasks_per_step, g.group_size, g.group_size_max = 1, 3, 4, 0
    g.max_new_tokens, g.micro_batch_size, g.truncation, g.num_iterations = 8, 6, "none", 1
    grader = PoisonedGrader()
    agent = grpo.Agent(tokenizer, grader, [tokenizer.eos_token_id], None)  # type: ignore[arg-type]
    overlap = grpo.GradingOverlap(agent, Curriculum(TASKS, False, 1.0, 1), random.Random(0), config, (1, 1))
    texts_of: list[list[str]] = []
    rollouts: list[Any] = []
    real_grading = grpo.timed_grading

    def spy(grader_: Grader, task_ids: list[str], completions: list[str]) -> Any:
        texts_of.append(list(completions))
        return real_grading(grader_, task_ids, completions)

    grpo.timed_grading = spy  # type: ignore[assignment]
    try:
        rollouts.append(overlap.rollout(model, last=False))
        rollouts.append(overlap.rollout(model, last=True))
    finally:
        grpo.timed_grading = real_grading  # type: ignore[assignment]
        overlap.close()
    assert len(texts_of) == 2
    for rollout, completions in zip(rollouts, texts_of, strict=True):
        assert len(rollout.verdicts) == len(completions) == 12
        by_text = {c: v for c, v in zip(completions, rollout.verdicts, strict=True)}
        for text, verdict in by_text.items():
            if len(text) % 2:  # the poisoned ones alone are grader faults, dropped from the step
                assert verdict.disrupted and verdict.fault == "grader", verdict
            else:  # every other completion keeps its own verdict
                assert not verdict.disrupted and verdict.reward == 1.0 / (1 + len(text)), verdict
    for completions in texts_of:  # each round held both kinds
        assert {len(c) % 2 for c in completions} == {0, 1}, completions
