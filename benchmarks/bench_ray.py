"""Ray executor scaling: HumanEval canonical solutions graded by 1 vs 2 Ray grading actors (issue 8).

Both conditions run in one process on one private local Ray cluster (loopback, --cpus CPUs), in
alternating order (1, 2, 1, 2, ...) so that drift in the machine's load hits both alike. Each
condition builds a fresh RayGrader (every actor: its own CodeGrader, sandbox of one warm zygote,
and pyright), warms it up on two passes over the tasks (the steady state: per-actor caches hold
every task the actor is home to or has stolen), then times `grade_many` over
tasks x --copies items. Every graded item is a distinct program for pyright (a trailing comment
of a length no other item has: the type checker blanks comments to same-length spaces before
caching), so its content cache cannot skip work that real training would pay for.

--layers (settings, interleaved within each repeat):
  full             all four layers (syntax, pyright types, sandboxed tests, counted-ops perf)
  no-types         the type layer off: sandbox + perf only (isolates the executor's scaling
                   from pyright's own extra process)
  control          the same executor on pure-Python CPU work (no sandbox, no pyright): the speedup
                   the machine allows at that moment, which the grading speedups are read against
  dispatch         the driver's own cost per chunk: a trivial grader on 2 actors, 2,000 items sent
                   as chunks of 1 and of 32 (what the 1,000-worker design note sizes chunks by)

Besides wall-clock throughput, each run records the CPU seconds spent per item by the actors'
process trees plus the driver (`cpu_ms_per_item`): on a machine shared with other jobs the wall
clock measures contention as much as the executor, while CPU per item shows whether the second
worker adds work of its own.

Usage: .venv/bin/python benchmarks/bench_ray.py [--copies 3] [--repeats 3] [--layers full no-types]
Prints a JSON summary (and writes it to --out); RESULTS.md records the ratios.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import psutil

from rlvr.core.pack import StaticPack
from rlvr.core.types import Task, Verdict
from rlvr.executors.ray_cluster import connect
from rlvr.executors.ray_grader import RayGrader
from rlvr.graders.base import Grader
from rlvr.task_packs.registry import load_pack


class EchoGrader(Grader):
    """Costs nothing: isolates the driver's dispatch overhead."""

    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        return [Verdict(t.id, reward=1.0, passed=True) for t in tasks]


def echo_factory(pack: Any, **options: Any) -> Grader:
    return EchoGrader(pack)


class BurnGrader(Grader):
    """Pure-Python CPU work per item and nothing else: the scaling the machine allows right now."""

    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        out = []
        for task in tasks:
            total = 0
            for i in range(300_000):
                total += i * i
            out.append(Verdict(task.id, reward=1.0, passed=total > 0))
        return out


def burn_factory(pack: Any, **options: Any) -> Grader:
    return BurnGrader(pack)


def control_run(workers: int, items: int = 200) -> dict[str, Any]:
    pack = StaticPack("burn", [Task(id=str(i), prompt="") for i in range(items)])
    ids = [str(i) for i in range(items)]
    grader = RayGrader(pack, workers=workers, grader_factory=burn_factory)
    try:
        grader.grade_many(ids[:10], ["x"] * 10)
        started = time.perf_counter()
        grader.grade_many(ids, ["x"] * items)
        seconds = time.perf_counter() - started
    finally:
        grader.close()
    return {
        "workers": workers,
        "items": items,
        "seconds": round(seconds, 3),
        "items_per_second": round(items / seconds, 3),
    }


def dispatch_overhead(items: int = 2000) -> dict[str, Any]:
    pack = StaticPack("echo", [Task(id=str(i), prompt="") for i in range(items)])
    ids = [str(i) for i in range(items)]
    out: dict[str, Any] = {}
    for chunk in (1, 32):
        grader = RayGrader(pack, workers=2, grader_factory=echo_factory, chunk_size=chunk)
        try:
            grader.grade_many(ids[:100], ["x"] * 100)
            started = time.perf_counter()
            grader.grade_many(ids, ["x"] * items)
            seconds = time.perf_counter() - started
        finally:
            grader.close()
        chunks = -(-items // chunk)
        out[f"chunk_{chunk}"] = {
            "seconds": round(seconds, 3),
            "ms_per_chunk": round(1000 * seconds / chunks, 3),
        }
    return out


_VARIANT = itertools.count(1)


def variants(references: list[str], tag: str, copies: int) -> list[str]:
    """Distinct programs for pyright: the type checker blanks comments to spaces of the same length
    before hashing, so each variant's trailing comment gets a length no other variant has."""
    del tag  # the length, not the text, is what makes a variant distinct
    return [f"{ref}\n# {'v' * next(_VARIANT)}\n" for _ in range(copies) for ref in references]


def tree_cpu_seconds(pids: list[int]) -> float:
    """CPU seconds used so far by the actors and everything under them (zygotes, reaped candidate
    forks via the zygote's children times, pyright)."""
    total = 0.0
    for pid in pids:
        try:
            root = psutil.Process(pid)
            for process in [root, *root.children(recursive=True)]:
                times = process.cpu_times()
                total += times.user + times.system + times.children_user + times.children_system
        except psutil.Error:
            continue
    return total


def measure(
    pack: Any, workers: int, ids: list[str], references: list[str], tag: str, args: Any
) -> dict[str, Any]:
    options: dict[str, Any] = {"types": False} if tag.startswith("no-types") else {}
    started = time.perf_counter()
    grader = RayGrader(pack, workers=workers, **options)
    try:
        startup = time.perf_counter() - started
        # Two warm-up passes: the steady state of training, where every task has been graded
        # before by its home actor and by any actor that stole it (per-actor caches are warm).
        grader.grade_many(ids, variants(references, f"{tag} warm-up a", 1))
        warm = grader.grade_many(ids, variants(references, f"{tag} warm-up b", 1))
        items_ids = ids * args.copies
        completions = variants(references, tag, args.copies)
        pids = grader.worker_pids()
        load_before = os.getloadavg()[0]
        cpu_before = tree_cpu_seconds(pids) + time.process_time()
        started = time.perf_counter()
        verdicts = grader.grade_many(items_ids, completions)
        seconds = time.perf_counter() - started
        cpu_seconds = tree_cpu_seconds(pids) + time.process_time() - cpu_before
        load_after = os.getloadavg()[0]
    finally:
        grader.close()
    failed = [v.task_id for v in verdicts if not v.passed or v.error]
    return {
        "workers": workers,
        "items": len(verdicts),
        "seconds": round(seconds, 3),
        "items_per_second": round(len(verdicts) / seconds, 3),
        "cpu_ms_per_item": round(1000 * cpu_seconds / len(verdicts), 3),
        "startup_seconds": round(startup, 3),
        "warmup_passed": sum(v.passed for v in warm),
        "not_passed": failed[:10],
        "not_passed_count": len(failed),
        "loadavg_1min": [round(load_before, 2), round(load_after, 2)],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=3, help="timed items = 164 x copies per condition")
    parser.add_argument("--repeats", type=int, default=3, help="alternating (1, 2) rounds per layer setting")
    parser.add_argument(
        "--layers",
        nargs="+",
        default=["control", "full", "no-types", "dispatch"],
        choices=["control", "full", "no-types", "dispatch"],
    )
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument("--out", default="benchmarks/results/bench_ray.json")
    args = parser.parse_args()

    connect(None, num_cpus=args.cpus)
    pack = load_pack("humaneval")
    tasks = pack.tasks()
    ids = [t.id for t in tasks]
    references = [t.hidden["reference"] for t in tasks]
    summary: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "ray_cluster_cpus": args.cpus},
        "copies": args.copies,
        "runs": [],
    }
    measured = [layers for layers in args.layers if layers != "dispatch"]
    by_workers = {layers: {1: [], 2: []} for layers in measured}
    cpu_cost = {layers: {1: [], 2: []} for layers in measured}
    for repeat in range(args.repeats):  # interleaved: every setting sees the same drift in load
        for layers in measured:
            for workers in (1, 2):
                if layers == "control":
                    run = control_run(workers)
                else:
                    run = measure(pack, workers, ids, references, f"{layers} r{repeat} w{workers}", args)
                run["layers"] = layers
                summary["runs"].append(run)
                by_workers[layers][workers].append(run["items_per_second"])
                if "cpu_ms_per_item" in run:
                    cpu_cost[layers][workers].append(run["cpu_ms_per_item"])
                print(json.dumps(run), flush=True)
    for layers in measured:
        one, two = statistics.median(by_workers[layers][1]), statistics.median(by_workers[layers][2])
        summary[f"{layers}_items_per_second"] = {"1": one, "2": two}
        summary[f"{layers}_speedup_2_over_1"] = round(two / one, 3)
        if cpu_cost[layers][1]:
            # CPU per item, 2 workers over 1: ~1.0 means a second worker adds no work of its own.
            cpu_one, cpu_two = statistics.median(cpu_cost[layers][1]), statistics.median(cpu_cost[layers][2])
            summary[f"{layers}_cpu_ms_per_item"] = {"1": cpu_one, "2": cpu_two}
            summary[f"{layers}_cpu_ratio_2_over_1"] = round(cpu_two / cpu_one, 3)
    if "dispatch" in args.layers:
        summary["dispatch"] = dispatch_overhead()
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}, indent=2))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
