"""GRPO step time with grading overlapped with generation (`[grpo] max_staleness = 1`) against the
sequential step (generate, grade, update), in one run (recorded in benchmarks/RESULTS.md, issue 36).

    (a) the CPU demo: `tiny-functions`, its real CodeGrader (syntax, pyright types, sandboxed tests,
        perf), the demo's tiny model after a short warm start, the demo's GRPO settings
    (b) grading as costly as generation: the same, graded through a remote-style grader that holds
        each batch until it has taken as long as that step's generation (a grading service's
        latency: the work is not on this machine's CPU, which the overlap needs to gain anything)

Blocks of steps alternate between the two modes (each block restarts from the same warm start and
seed), so machine load hits both alike. Per step: generation (sampling; with overlap also the
behaviour log-probs), grading (the grader's own time, wherever it ran), update, and wall time.
Figures are medians; the goal is overlapped step <= 1.15 x max(generation + update, grading) of the
sequential step (the model's work and the grader's, which the sequential step adds up).

    .venv/bin/python benchmarks/bench_overlap.py [--steps 6] [--rounds 2] [--sft-steps 200] [--json out.json]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch


class LatencyGrader:
    """The real grader, answering no sooner than `seconds()` after a batch arrives (a remote grading
    service whose work does not compete for this machine's CPU)."""

    def __init__(self, inner: Any, seconds: Any) -> None:
        self.inner, self.seconds = inner, seconds

    def grade_many(self, task_ids: list[str], completions: list[str]) -> list[Any]:
        started = time.perf_counter()
        verdicts = self.inner.grade_many(task_ids, completions)
        left = self.seconds() - (time.perf_counter() - started)
        if left > 0:
            time.sleep(left)
        return verdicts

    def close(self) -> None:
        self.inner.close()


def run_block(
    policy: Any, agent: Any, tasks: list[Any], config: Any, steps: int, seed: int
) -> list[dict[str, float]]:
    from rlvr.trainer import grpo
    from rlvr.trainer.curriculum import Curriculum

    g = config.grpo
    torch.manual_seed(seed)
    rng = random.Random(seed)
    levels = (min(t.difficulty for t in tasks), max(t.difficulty for t in tasks))
    curriculum = Curriculum(tasks, g.curriculum, g.curriculum_threshold, g.curriculum_window)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=g.learning_rate)
    overlap = grpo.GradingOverlap(agent, curriculum, rng, config, levels) if g.max_staleness else None
    out = []
    try:
        for step in range(steps):
            started = time.perf_counter()
            if overlap is None:
                rollout = grpo.collect_rollout(policy, agent, curriculum, rng, config, levels)
            else:
                rollout = overlap.rollout(policy, last=step + 1 == steps)
            updating = time.perf_counter()
            grpo.policy_update(policy, None, optimizer, rollout, config)
            done = time.perf_counter()
            curriculum.observe(grpo.rollout_metrics(rollout)["pass_rate"])
            out.append(
                {
                    "step": done - started,
                    "generation": rollout.seconds["generation_seconds"],
                    "grading": rollout.seconds["grading_seconds"],
                    "wait": rollout.seconds["grading_wait_seconds"],
                    "update": done - updating,
                }
            )
    finally:
        if overlap is not None:
            overlap.close()
    # the first step of a block has nothing to overlap with, the last nothing to sample ahead
    return out[1:-1]


def median(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--steps", type=int, default=6, help="steps per block (the first and last are not counted)"
    )
    parser.add_argument("--rounds", type=int, default=2, help="blocks per mode, alternating")
    parser.add_argument("--sft-steps", type=int, default=200, help="warm-start steps of the tiny model")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from rlvr.envs.training import load_pack
    from rlvr.trainer import grpo
    from rlvr.trainer.agent import make_agent
    from rlvr.trainer.config import build_config
    from rlvr.trainer.warm_start import starting_policy

    config = build_config(None, [f"sft.steps={args.sft_steps}", "run.threads=1"])
    torch.set_num_threads(1)
    torch.manual_seed(0)
    pack = load_pack(config.run.pack)
    tasks = pack.tasks(config.run.train_split)
    grader = grpo.make_run_grader(config, pack)
    with tempfile.TemporaryDirectory() as directory:
        base, tokenizer, _ = starting_policy(config, Path(directory) / "warm_start", pack, grader, print)
    last_generation = {"seconds": 1.0}
    slow = LatencyGrader(grader, lambda: last_generation["seconds"])
    results: dict[str, Any] = {"load_average_start": list(os.getloadavg()), "cpus": os.cpu_count()}
    try:
        scenarios: list[tuple[str, Any]] = [("demo", grader), ("grading_as_costly_as_generation", slow)]
        for name, used in scenarios:
            agent = make_agent(config, pack, used, tokenizer)
            if used is slow:  # calibrate: the grader takes as long as the sequential step's generation
                real_sample = grpo.sample_completions

                def timed_sample(*a: Any, _real: Any = real_sample, **k: Any) -> Any:
                    started = time.perf_counter()
                    out = _real(*a, **k)
                    last_generation["seconds"] = time.perf_counter() - started
                    return out

                grpo.sample_completions = timed_sample  # type: ignore[assignment]
            rows: dict[int, list[dict[str, float]]] = {0: [], 1: []}
            for block in range(args.rounds):
                for staleness in (0, 1):
                    config.grpo.max_staleness = staleness
                    rows[staleness] += run_block(
                        copy.deepcopy(base), agent, tasks, config, args.steps, seed=block
                    )
                    print(name, "round", block, "staleness", staleness, "done", flush=True)
            if used is slow:
                grpo.sample_completions = real_sample  # type: ignore[assignment]
            sequential, overlapped = rows[0], rows[1]
            model_work = median(sequential, "generation") + median(sequential, "update")
            grading = median(sequential, "grading")
            results[name] = {
                "sequential": {k: median(sequential, k) for k in sequential[0]},
                "overlapped": {k: median(overlapped, k) for k in overlapped[0]},
                "overlapped_over_sequential": median(overlapped, "step") / median(sequential, "step"),
                "overlapped_over_max_of_model_and_grading": median(overlapped, "step")
                / max(model_work, grading),
                "steps_measured_per_mode": len(sequential),
            }
            print(json.dumps({name: results[name]}, indent=2), flush=True)
    finally:
        grader.close()
    results["load_average_end"] = list(os.getloadavg())
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
