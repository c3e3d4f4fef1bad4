"""Program-task throughput: rlvr's sandboxed runner vs the naive runner most RLVR code graders use,
same programs and tests, one run.

  naive  one `subprocess.run([python, -c, program], input=test, timeout=...)` per test, compare
         stdout tokens; a thread pool as wide as rlvr's sandbox (--jobs)
  rlvr   `CodeGrader.grade_many` on program tasks (types off: the comparison is of the test layer):
         the warm zygote forks one child per chunk of tests, the trusted side compares

Tasks are written here: stdin/stdout problems with T tests each, solved by correct and by wrong
programs (a wrong program stops at its first failing chunk, as the all-or-nothing gate allows).

Usage: .venv/bin/python benchmarks/bench_programs.py [--tasks 20] [--tests 50] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from rlvr.core import StaticPack, Task
from rlvr.graders.base import make_grader

PROGRAMS = {
    "sum": ("print(sum(map(int, input().split())))\n", lambda xs: sum(xs)),
    "max": ("print(max(map(int, input().split())))\n", lambda xs: max(xs)),
    "sorted": ("print(*sorted(map(int, input().split())))\n", lambda xs: " ".join(map(str, sorted(xs)))),
}
WRONG = "print(min(map(int, input().split())))\n"


def build(tasks: int, tests: int, seed: int = 0) -> tuple[list[Task], list[tuple[str, str]]]:
    rng = random.Random(seed)
    made, samples = [], []
    for t in range(tasks):
        name = list(PROGRAMS)[t % len(PROGRAMS)]
        source, answer = PROGRAMS[name]
        cases = []
        for _ in range(tests):
            xs = [rng.randint(-1000, 1000) for _ in range(rng.randint(1, 30))]
            cases.append({"input": " ".join(map(str, xs)) + "\n", "output": f"{answer(xs)}\n"})
        task = Task(id=f"bench/{name}/{t}", prompt="", hidden={"program": {"tests": cases}})
        made.append(task)
        samples += [(task.id, source), (task.id, WRONG)]
    return made, samples


def naive(tasks: dict[str, Task], samples: list[tuple[str, str]], jobs: int) -> list[bool]:
    def grade(sample: tuple[str, str]) -> bool:
        task_id, program = sample
        for test in tasks[task_id].hidden["program"]["tests"]:
            try:
                run = subprocess.run(
                    [sys.executable, "-c", program],
                    input=test["input"],
                    capture_output=True,
                    text=True,
                    timeout=5,
                )
            except subprocess.TimeoutExpired:
                return False
            if run.returncode != 0 or run.stdout.split() != test["output"].split():
                return False
        return True

    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(grade, samples))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    tasks, samples = build(args.tasks, args.tests)
    by_id = {t.id: t for t in tasks}
    grader = make_grader(StaticPack("bench-programs", tasks), types=False, jobs=args.jobs)
    try:
        grader.grade_many([samples[0][0]], [samples[0][1]])  # warm the zygotes
        started = time.perf_counter()
        verdicts = grader.grade_many([s[0] for s in samples], [s[1] for s in samples])
        rlvr_seconds = time.perf_counter() - started
    finally:
        grader.close()
    started = time.perf_counter()
    naive_passed = naive(by_id, samples, args.jobs)
    naive_seconds = time.perf_counter() - started
    agree = sum(v.passed == n for v, n in zip(verdicts, naive_passed, strict=True))
    # work done: every test of a correct program, and the tests a wrong one runs before failing
    summary = {
        "samples": len(samples),
        "tests_per_task": args.tests,
        "rlvr_seconds": round(rlvr_seconds, 3),
        "naive_seconds": round(naive_seconds, 3),
        "rlvr_samples_per_s": round(len(samples) / rlvr_seconds, 2),
        "naive_samples_per_s": round(len(samples) / naive_seconds, 2),
        "speedup": round(naive_seconds / rlvr_seconds, 2),
        "verdicts_agree": f"{agree}/{len(samples)}",
    }
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
