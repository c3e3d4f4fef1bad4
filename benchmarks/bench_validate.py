"""How long `rlvr packs validate` takes to prove tasks, per 100 tasks and per family.

For each family a sample of a built-in pack (the first N tasks, evenly spread over the pack) is proved by
the family's prover (reference + every trivial answer through the family grader, one grader per run) and,
in the same run, the baseline: a fresh grader of the same pack grading the references alone (what one
grading pass of the pack costs; the pack is loaded once, outside both timings). Reported per family: seconds per 100 tasks for the proof, for the baseline, and their ratio
(the price of the trivial answers and the structural checks on top of one pass).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_validate.py [--tasks 100] [--families code,math,...]
"""

from __future__ import annotations

import argparse
import time

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.graders.base import make_grader, prove_pack_tasks
from rlvr.graders.code.prove import task_trials as code_trials
from rlvr.graders.math.prove import task_trials as math_trials
from rlvr.graders.proof.prove import task_trials as proof_trials
from rlvr.graders.prove import Trials
from rlvr.graders.sql.prove import task_trials as sql_trials
from rlvr.graders.tool.prove import task_trials as tool_trials
from rlvr.task_packs.registry import load_pack

PACKS = {
    "code": "kata",
    "math": "math-procedural",
    "sql": "sql-shop",
    "proof": "proof-identities",
    "tool": "tool-worlds",
}
TRIALS = {
    "code": code_trials,
    "math": math_trials,
    "sql": sql_trials,
    "proof": proof_trials,
    "tool": tool_trials,
}


def spread(tasks: list[Task], count: int) -> list[Task]:
    step = max(1, len(tasks) // count)
    return tasks[::step][:count]


def baseline_seconds(pack: TaskPack, tasks: list[Task], family: str) -> float:
    started = time.perf_counter()
    with make_grader(pack) as grader:
        trials: list[Trials] = [TRIALS[family](task) for task in tasks]
        pairs = [(t.id, trial.reference) for t, trial in zip(tasks, trials, strict=True) if trial.reference]
        grader.grade_many([p[0] for p in pairs], [p[1] for p in pairs])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--families", default=",".join(PACKS))
    args = parser.parse_args()
    print("| family (pack) | tasks | prove s/100 | one grading pass s/100 | ratio | problems |")
    print("|---|---|---|---|---|---|")
    for family in args.families.split(","):
        pack = load_pack(PACKS[family])
        tasks = spread(pack.tasks(), args.tasks)
        # baseline, proof, baseline: process-wide caches (generated inputs, pyright's) warm up in the
        # first run, so the baseline is the mean of one run before and one after the proof
        first = baseline_seconds(pack, tasks, family)
        started = time.perf_counter()
        report = prove_pack_tasks(PACKS[family], pack, tasks)
        proved = time.perf_counter() - started
        base = (first + baseline_seconds(pack, tasks, family)) / 2
        per = 100 / len(tasks)
        print(
            f"| {family} ({PACKS[family]}) | {len(tasks)} | {proved * per:.1f} | {base * per:.1f} | "
            f"{proved / base:.2f} | {len(report.problems)} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
