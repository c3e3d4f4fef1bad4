"""Hostile inputs that once took quadratic (or unbounded) time, measured as ratios against an ordinary
input of the same size in the same run — the figures the unit tests used to assert as wall-clock limits.

    python benchmarks/bench_guards.py [--repeat 3]

Rows: the math answer extraction on the pathological prose of tests/adversarial/test_redteam_math_proof.py
(adjacent whitespace runs, unclosed boxes) against plain prose of the same length; the proof checker on a
step holding a number too large to check (refused at once) against the same derivation with an ordinary
power. A ratio near 1 (or below) is the bound holding; a regression to the old behaviour shows as 100x+.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from rlvr.graders.math.extract import extract
from rlvr.graders.proof.check import check_proof

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
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


if __name__ == "__main__":
    main()
