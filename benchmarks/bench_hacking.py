"""Issue 35's figures: `rlvr certify` time per pack, and `rlvr regrade` throughput against the
original grading of the same candidates, both measured in one run.

    python benchmarks/bench_hacking.py certify [--sample 3] [--timeout 2] [--packs a,b,...]
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
import sys
import tempfile
import time
from pathlib import Path

from rlvr.bench.policies import make_policy
from rlvr.bench.runner import BenchSpec, GraderCache, run_bench
from rlvr.hacking.certify import certify_pack
from rlvr.hacking.regrade import Configuration, regrade_run
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
        report = certify_pack(pack, sample=args.sample, timeout=args.timeout, progress=False)
        verdict = "yes" if report["certified"] else "NO: " + ", ".join(report["got_through"])
        print(
            f"| {name} | {report['kind']} | {report['sample']} | {report['candidates']} | {report['seconds']:.1f} | "
            f"{report['candidates'] / max(report['seconds'], 1e-9):.2f} | {report['reference']['seconds']:.1f} | {verdict} |",
            flush=True,
        )


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
        graders = GraderCache()
        started = time.perf_counter()
        try:
            run_bench(
                BenchSpec(packs=[args.pack], out=out, progress=False),
                make_policy(f"jsonl:{completions}"),
                graders,
            )
        finally:
            graders.close()
        original = time.perf_counter() - started
        same = regrade_run(out, progress=False)
        weak = regrade_run(
            out, after=Configuration("weak", overrides={"verifier": "visible"}), progress=False
        )
    n = same["candidates"]
    print(f"candidates: {n} ({len(chosen)} tasks x 3)")
    print(f"original grading (rlvr bench, jsonl policy): {original:.1f} s = {n / original:.1f} candidates/s")
    print(
        f"regrade, unchanged grader: {same['seconds']:.1f} s = {n / same['seconds']:.1f} candidates/s "
        f"(ratio to original {same['seconds'] / original:.2f}); flips {same['flip_count']}, receipts unchanged "
        f"{same['receipts']['same']}/{n}"
    )
    print(
        f"regrade, verifier=visible: {weak['seconds']:.1f} s (ratio {weak['seconds'] / original:.2f}); "
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
