"""Held-out evaluation: pass rate and mean reward of the policy on a split it never trained on."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import torch

from rlvr.core.types import Task, Verdict
from rlvr.graders.base import Grader
from rlvr.trainer.rollout import decode, generate


def _summarise(tasks: list[Task], verdicts: list[Verdict]) -> dict[str, Any]:
    by_template: dict[str, list[bool]] = defaultdict(list)
    for task, verdict in zip(tasks, verdicts, strict=True):
        by_template[str(task.meta.get("template", task.difficulty))].append(verdict.passed)
    return {
        "pass_rate": sum(v.passed for v in verdicts) / max(len(verdicts), 1),
        "mean_reward": sum(v.reward for v in verdicts) / max(len(verdicts), 1),
        "grading_errors": sum(v.error is not None for v in verdicts),
        "by_template": {name: sum(ok) / len(ok) for name, ok in sorted(by_template.items())},
    }


def evaluate(
    model: Any,
    tokenizer: Any,
    grader: Grader,
    tasks: list[Task],
    *,
    samples: int,
    temperature: float,
    max_new_tokens: int,
    seed: int,
    batch_size: int = 64,
) -> dict[str, Any]:
    """`pass_rate`/`mean_reward`: over `samples` completions per task sampled at the training
    temperature (pass@1 estimated from several samples); `greedy`: one greedy completion per task.
    Runs under its own RNG seed, so it neither depends on nor disturbs the training stream."""

    def run(prompts_tasks: list[Task], greedy: bool) -> list[Verdict]:
        verdicts: list[Verdict] = []
        for start in range(0, len(prompts_tasks), batch_size):
            chunk = prompts_tasks[start : start + batch_size]
            sequences = generate(
                model, tokenizer, [t.prompt for t in chunk], temperature, max_new_tokens, greedy
            )
            verdicts.extend(grader.grade_many([t.id for t in chunk], decode(tokenizer, sequences)))
        return verdicts

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        greedy = run(tasks, greedy=True)
        sampled_tasks = [t for t in tasks for _ in range(samples)]
        sampled = run(sampled_tasks, greedy=False) if samples else []
    result = _summarise(sampled_tasks, sampled) if samples else _summarise(tasks, greedy)
    result.update({"tasks": len(tasks), "samples_per_task": samples, "temperature": temperature})
    result["greedy"] = _summarise(tasks, greedy)
    return result
