"""Issue 35's figures: `rlvr certify` time per pack, and `rlvr regrade` throughput against the
original grading of the same candidates, both measured in one run.

    python benchmarks/bench_hacking.py certify [--sample 3] [--timeout 2 (code packs)] [--packs a,b,...]
    python benchmarks/bench_hacking.py regrade [--tasks 60] [--pack tiny-hacking]

`certify`: every built-in pack, all strategies, `--sample` tasks each; prints one row per pack
(seconds, candidates, candidates/s, the honest references' grading seconds as the baseline, verdict).
`regrade`: a bench run with three recorded completions per task (correct, hard-coded, no-op) is graded
by `rlvr bench` (timed: the original grading), then re-graded from its stored candidates with the
same grader (timed), then with `verifier=visible` (flips counted). Ratios are regrade / original.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rlvr.hacking.certify import certify_pack
from rlvr.task_packs import tiny_functions as tf
from rlvr.task_packs import tiny_hacking as th
from rlvr.task_packs.registry import PackError, load_pack

BUILT_IN = (
    "humaneval,humaneval-ts,kata,kata-ts,math-procedural,proof-identities,reasoning-gym,repo-tasks,"
    "sql-shop,tiny-functions,tiny-hacking,tiny-hacking-weak,tool-worlds"
)


def bench_certify(args: argparse.Namespace) -> None:
    print("| pack | family | tasks | candidates | seconds | candidates/s | reference grading s | certified |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.packs.split(","):
        try:
            pack = load_pack(name)
        except PackError as exc:
            print(f"| {name} | - | - | - | - | - | - | cannot load: {exc} |")
            continue
        options = {"timeout": args.timeout} if pack.family == "code" else {}  # the limit probes spend it
        report = certify_pack(pack, sample=args.sample, progress=False, **options)
        verdict = "yes" if report["certified"] else "NO: " + ", ".join(report["got_through"])
        print(
            f"| {name} | {report['kind']} | {report['sample']} | {report['candidates']} | {report['seconds']:.1f} | "
            f"{report['candidates'] / max(report['seconds'], 1e-9):.2f} | {report['reference']['seconds']:.1f} | {verdict} |",
            flush=True,
        )


def _timed(command: list[str]) -> tuple[float, str]:
    """Wall seconds of one fresh `rlvr` process (no cache of this process helps it) and its stdout."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "rlvr", *command], capture_output=True, text=True, check=True
    )
    return time.perf_counter() - started, done.stdout


def bench_regrade(args: argparse.Namespace) -> None:
    instances = {th.to_task(i, "test").id: i for i in tf.instances("test")}
    chosen = list(instances.items())[: args.tasks]
    with tempfile.TemporaryDirectory() as tmp:
        completions = Path(tmp) / "completions.jsonl"
        with completions.open("w") as handle:
            for task_id, instance in chosen:
                for text in (instance.answer(), th.hard_coded_answer(instance), "    return None\n"):
                    handle.write(json.dumps({"task_id": task_id, "completion": text}) + "\n")
        out = Path(tmp) / "bench"
        policy = f"jsonl:{completions}"
        original, _ = _timed(
            ["bench", "--pack", args.pack, "--policy", policy, "--out", str(out), "--no-progress"]
        )
        samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines() if line]
        grading_only = sum(float(s.get("grade_s") or 0.0) for s in samples)  # per-sample shares of batches
        seconds, text = _timed(["regrade", str(out), "--json"])
        same = json.loads(text)
        weak_seconds, text = _timed(["regrade", str(out), "--set", "verifier=visible", "--json"])
        weak = json.loads(text)
    n = same["candidates"]
    print(f"candidates: {n} ({len(chosen)} tasks x 3); every figure one fresh process, wall time")
    print(f"rlvr bench (the original grading): {original:.1f} s = {n / original:.1f} candidates/s")
    print(f"  of which the grader's batches: {grading_only:.1f} s = {n / grading_only:.1f} candidates/s")
    print(
        f"rlvr regrade, unchanged grader: {seconds:.1f} s = {n / seconds:.1f} candidates/s (ratio to rlvr bench "
        f"{seconds / original:.2f}; its grading {same['grading_seconds']:.1f} s, ratio to the original batches "
        f"{same['grading_seconds'] / grading_only:.2f}); flips {same['flip_count']}, receipts unchanged "
        f"{same['receipts']['same']}/{n}"
    )
    print(
        f"rlvr regrade --set verifier=visible: {weak_seconds:.1f} s (ratio {weak_seconds / original:.2f}); "
        f"flips {weak['flip_count']} (fail->pass {weak['fail_to_pass']}), by flag {weak['by_flag']}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="what", required=True)
    certify = sub.add_parser("certify")
    certify.add_argument("--sample", type=int, default=3)
    certify.add_argument("--timeout", type=float, default=None)
    certify.add_argument("--packs", default=BUILT_IN)
    regrade = sub.add_parser("regrade")
    regrade.add_argument("--tasks", type=int, default=60)
    regrade.add_argument("--pack", default="tiny-hacking")
    args = parser.parse_args()
    {"certify": bench_certify, "regrade": bench_regrade}[args.what](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
