"""Held-out evaluation: pass rate and mean reward of the policy on a split it never trained on."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import torch

from rlvr.core.types import Task, Verdict


def _summarise(tasks: list[Task], verdicts: list[Verdict]) -> dict[str, Any]:
    by_template: dict[str, list[bool]] = defaultdict(list)
    for task, verdict in zip(tasks, verdicts, strict=True):
        by_template[str(task.meta.get("template", task.difficulty))].append(verdict.passed)
    return {
        "pass_rate": sum(v.passed for v in verdicts) / max(len(verdicts), 1),
        "mean_reward": sum(v.reward for v in verdicts) / max(len(verdicts), 1),
        "grading_errors": sum(v.error is not None for v in verdicts),  # an empty completion counts here
        "grading_disrupted": sum(v.disrupted for v in verdicts),  # the machinery's faults only
        "by_template": {name: sum(ok) / len(ok) for name, ok in sorted(by_template.items())},
    }


def evaluate(
    play: Callable[[list[Task], bool], list[Verdict]],
    tasks: list[Task],
    *,
    samples: int,
    temperature: float,
    seed: int,
) -> dict[str, Any]:
    """`pass_rate`/`mean_reward`: over `samples` episodes per task sampled at the training
    temperature (pass@1 estimated from several samples); `greedy`: one greedy episode per task.
    `play(tasks, greedy)` runs one episode (or completion) per task and returns its verdicts.
    Runs under its own RNG seed, so it neither depends on nor disturbs the training stream."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        greedy = play(tasks, True)
        sampled_tasks = [t for t in tasks for _ in range(samples)]
        sampled = play(sampled_tasks, False) if samples else []
    result = _summarise(sampled_tasks, sampled) if samples else _summarise(tasks, greedy)
    result.update({"tasks": len(tasks), "samples_per_task": samples, "temperature": temperature})
    result["greedy"] = _summarise(tasks, greedy)
    return result
