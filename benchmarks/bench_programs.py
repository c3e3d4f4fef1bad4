"""Program-task throughput: rlvr's sandboxed runner vs the naive runner most RLVR code graders use,
same programs and tests, one run.

  naive  one `subprocess.run([python, -c, program], input=test, timeout=...)` per test, compare
         stdout tokens; a thread pool as wide as rlvr's sandbox (--jobs)
  rlvr   `CodeGrader.grade_many` on program tasks (types off: the comparison is of the test layer):
         one sandbox request per round of tests (4, 16, then 64); the sandbox's child loads the
         driver once and forks a fresh child per test from it; the trusted side compares

Tasks are written here: stdin/stdout problems with T tests each, solved by correct and by wrong
programs (a wrong program stops at its first failing round, as the all-or-nothing gate allows).

`--per-test N` measures instead what one test costs the sandbox, same run: N tests of a one-line
program as one `run_each` round (the driver loaded once, a child forked per test) against N
separate requests (`run`, one zygote child per test: the path before rounds), interleaved; wall
milliseconds per test and the sandbox processes' CPU milliseconds per test (from /proc).

Usage: .venv/bin/python benchmarks/bench_programs.py [--tasks 20] [--tests 50] [--jobs 2] [--per-test N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from rlvr.core import StaticPack, Task
from rlvr.graders.base import make_grader
from rlvr.graders.code.programs.driver import RUN_ENTRY, driver_source
from rlvr.graders.code.programs.runner import OUTPUT_LIMIT_BYTES, REPORT_LIMIT_BYTES
from rlvr.sandbox import Job, LocalSandbox

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


def _tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of process `pid` and its descendants, reaped ones included (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        total += sum(int(value) for value in fields[11:15]) / ticks  # utime stime cutime cstime
        stack += [int(child) for child in children]
    return total


def per_test(tests: int, repeats: int = 3) -> None:
    source = driver_source("print(sum(map(int, input().split())))\n")
    calls: list[tuple[Any, ...]] = [("1 2 3\n", OUTPUT_LIMIT_BYTES)] * tests
    job = Job(
        source=source, entry=RUN_ENTRY, calls=calls, timeout=1.1, trace=True, max_output=REPORT_LIMIT_BYTES
    )
    with LocalSandbox(1) as sandbox:
        worker = sandbox.workers[0]
        pid = getattr(worker, "pid", None)
        sandbox.run_each(job)
        sandbox.run(replace(job, calls=calls[:1]))
        rows: dict[str, list[tuple[float, float]]] = {
            "round (run_each)": [],
            "one request per test (run)": [],
        }
        for _ in range(repeats):
            for name, run in (
                ("round (run_each)", lambda: sandbox.run_each(job)),
                ("one request per test (run)", lambda: [sandbox.run(replace(job, calls=[c])) for c in calls]),
            ):
                cpu = _tree_cpu_seconds(pid) if pid else 0.0
                started = time.perf_counter()
                run()
                wall = time.perf_counter() - started
                cpu = (_tree_cpu_seconds(pid) - cpu) if pid else float("nan")
                rows[name].append((1000 * wall / tests, 1000 * cpu / tests))
    summary = {
        name: {
            "wall_ms_per_test": [round(w, 2) for w, _ in values],
            "sandbox_cpu_ms_per_test": [round(c, 2) for _, c in values],
        }
        for name, values in rows.items()
    }
    print(json.dumps({"tests": tests, "load_average": os.getloadavg(), **summary}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--per-test", type=int, default=0, help="measure one test's cost over N tests instead"
    )
    args = parser.parse_args()
    if args.per_test:
        per_test(args.per_test)
        return
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
