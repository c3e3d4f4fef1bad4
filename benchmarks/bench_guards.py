"""Hostile inputs that once took quadratic (or unbounded) time, measured as ratios against an ordinary
input of the same size in the same run — the figures the unit tests used to assert as wall-clock limits.

    python benchmarks/bench_guards.py [--repeat 3] [--limits]

Rows: the math answer extraction on the pathological prose of tests/adversarial/test_redteam_math_proof.py
(adjacent whitespace runs, unclosed boxes) against plain prose of the same length; the proof checker on a
step holding a number too large to check (refused at once) against the same derivation with an ordinary
power. A ratio near 1 (or below) is the bound holding; a regression to the old behaviour shows as 100x+.

With `--limits`, the sandbox's limits in wall time (the tests check them by status: "done", `timeout`):
an honest job that needs half its CPU budget, on a core shared with three busy loops, against its budget
(above 1: it outlived its budget in wall time and still passed, so the budget is CPU time); a job that
burns forever there, and a sleeper (Python, and node's `Atomics.wait`), against the wall limit
(`WALL_LIMIT_FACTOR` x the budget: near 1 is the kill landing on time); and a TypeScript solution that
schedules an endless microtask after returning, graded against the plain solution (near 1: the microtask
never runs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rlvr.graders.math.extract import extract
from rlvr.graders.proof.check import check_proof

# the jobs the unit tests run (tests/ is put on the path as pytest does; the type checker does not follow it)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from adversarial.corpus import descendants  # noqa: E402  # pyright: ignore[reportMissingImports]
from test_sandbox_cpu_budget import BURN, HOG, HOGS, SLEEP  # noqa: E402  # pyright: ignore[reportMissingImports]

PLAIN = "the quick brown fox jumps over the lazy dog " * 60

EXTRACTION = {
    "answer + 2,500 spaces + ':'": "answer" + " " * 2_500 + ":",
    "Final answer + 2,500 spaces": "Final answer" + " " * 2_500 + "x",
    "the answer is + 2,500 spaces": "the answer is" + " " * 2_500 + ":\n",
    "28,000 unclosed \\boxed{": "\\boxed{" * 28_000,
}
GOAL = "(x+1)^2 = x^2 + 2x + 1"
PROOF = {huge: f"(x+1)^2\n= {huge} + x^2\n= x^2 + 2x + 1" for huge in ("9^(9^9)", "9^{9^{9}}", "100000!")}
ORDINARY_PROOF = "(x+1)^2\n= 2^{10} - 1024 + x^2 + 2x + 1\n= x^2 + 2x + 1"


def seconds(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


NODE_SLEEPER = (
    "function probe(ms) {\n  __c();\n  const cell = new Int32Array(new SharedArrayBuffer(4));\n"
    "  Atomics.wait(cell, 0, 0, ms);\n  return 1;\n}\n"
)
TS_TASK = "HumanEval-TS/3"  # below_zero(operations: number[]): boolean
TS_HEAD = "function below_zero(operations: number[]): boolean {\n"
TS_BODY = "  let b = 0;\n  for (const o of operations) {\n    b += o;\n    if (b < 0) return true;\n  }\n  return false;\n"


@contextmanager
def one_shared_core(sandbox: object, hogs: int = HOGS) -> Iterator[None]:
    """The sandbox's zygote (and every child it forks) on CPU 0 with `hogs` busy loops of ours."""
    from rlvr.sandbox.pool import ProcessWorker

    worker = sandbox.workers[0]  # type: ignore[attr-defined]
    assert isinstance(worker, ProcessWorker) and worker.process is not None
    pids = {worker.process.pid, *descendants(worker.process.pid)}
    for pid in pids:
        os.sched_setaffinity(pid, {0})
    loops = [
        subprocess.Popen([sys.executable, "-c", HOG], stdout=subprocess.PIPE, start_new_session=True)
        for _ in range(hogs)
    ]
    try:
        for loop in loops:
            assert loop.stdout is not None and loop.stdout.readline() == b"busy\n"
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def limit_rows() -> None:
    from rlvr.sandbox.pool import WALL_LIMIT_FACTOR, Job, LocalSandbox

    def row(name: str, wall: float, against: float, status: str) -> None:
        print(f"| {name} | {wall:.2f} | {against:.2f} | {wall / against:.2f} | {status} |")

    print()
    print("| sandbox limit | wall seconds | against (s) | ratio | status |")
    print("|---|---|---|---|---|")
    sandbox = LocalSandbox(1)
    try:
        warm = sandbox.run(Job(source=BURN, entry="burn", calls=[(0.0,)], timeout=5.0))
        assert warm.status == "ok", warm
        alone = sandbox.run(Job(source=BURN, entry="burn", calls=[(0.5,)], timeout=1.0))
        row("0.5 CPU-s job, budget 1 s, a core of its own (vs budget)", alone.wall, 1.0, alone.status)
        with one_shared_core(sandbox):
            honest = sandbox.run(Job(source=BURN, entry="burn", calls=[(0.5,)], timeout=1.0))
            row("0.5 CPU-s job, budget 1 s, a quarter core (vs budget)", honest.wall, 1.0, honest.status)
            burner = sandbox.run(Job(source=BURN, entry="burn", calls=[(30.0,)], timeout=1.0))
            row(
                "endless burner, budget 1 s, a quarter core (vs wall limit)",
                burner.wall,
                WALL_LIMIT_FACTOR,
                burner.status,
            )
        sleeper = sandbox.run(Job(source=SLEEP, entry="burn", calls=[(60.0,)], timeout=0.5))
        row(
            "60 s sleeper, budget 0.5 s (vs wall limit)",
            sleeper.wall,
            0.5 * WALL_LIMIT_FACTOR,
            sleeper.status,
        )
    finally:
        sandbox.close()
    if shutil.which("node") is None:
        print("(node not found: the node rows are left out)")
        return
    node = LocalSandbox(1, node=True)
    try:
        slept = node.run(Job(NODE_SLEEPER, "probe", [(60_000,)], timeout=0.5, runtime="node", counter="__c"))
        row(
            "node Atomics.wait 60 s, budget 0.5 s (vs wall limit)",
            slept.wall,
            0.5 * WALL_LIMIT_FACTOR,
            slept.status,
        )
    finally:
        node.close()
    from rlvr.graders.base import make_grader
    from rlvr.task_packs.registry import load_pack

    plain = TS_HEAD + TS_BODY + "}\n"
    scheduled = TS_HEAD + "  Promise.resolve().then(() => { for (;;) {} });\n" + TS_BODY + "}\n"
    with make_grader(load_pack("humaneval-ts"), jobs=1, timeout=1.5, types=False) as grader:
        grader.grade_many([TS_TASK], [plain])  # warm: the oracle, the node children
        times = {}
        for name, source in (("plain", plain), ("scheduled", scheduled)):
            started = time.perf_counter()
            (verdict,) = grader.grade_many([TS_TASK], [source + f"// {name}\n"])
            times[name] = time.perf_counter() - started
            assert verdict.passed, verdict.feedback
        row(
            "TS solution + endless microtask after return (vs plain)",
            times["scheduled"],
            times["plain"],
            "passed",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "bench_guards").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limits", action="store_true", help="also time the sandbox limits (about 15 s)")
    args = parser.parse_args()
    print("| input | seconds | baseline seconds | ratio |")
    print("|---|---|---|---|")
    for name, text in EXTRACTION.items():
        plain = (PLAIN * (len(text) // len(PLAIN) + 1))[: len(text)]
        baseline = seconds(lambda p=plain: extract(p), args.repeat)
        hostile = seconds(lambda t=text: extract(t), args.repeat)
        print(f"| extract: {name} | {hostile:.4f} | {baseline:.4f} | {hostile / max(baseline, 1e-9):.2f} |")
    baseline = seconds(lambda: check_proof(GOAL, ORDINARY_PROOF), args.repeat)
    for huge, derivation in PROOF.items():
        hostile = seconds(lambda d=derivation: check_proof(GOAL, d), args.repeat)
        print(
            f"| proof step with {huge} | {hostile:.4f} | {baseline:.4f} | {hostile / max(baseline, 1e-9):.2f} |"
        )
    if args.limits:
        limit_rows()


if __name__ == "__main__":
    main()
