"""`rlvr packs mine` on real projects, each from its PyPI sdist (never vendored: fetched here with
`pip download --no-binary :all: --no-deps` into a cache directory).

Per project: mining wall time; tasks kept per kind; why candidates were dropped; the share of mined
tasks `rlvr packs validate` accepts (problems counted per task line); the no-op mean reward (the
unchanged base submitted through gym.make("rlvr/Repo-v0"), recorded by the miner's check). Then submit
grading p50 on the mined pack with the most modules (a candidate = the reference diff plus one distinct
line, so pyright really runs), with the built-in `repo-tasks` pack graded the same way in the same run as
the baseline. The machine's load average is printed before and after (the machine is shared).

Usage: PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_mining.py [--projects toolz boltons ...]
       [--tasks 40] [--budget 840] [--grades 20] [--out /tmp/rlvr-mining-bench]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

import rlvr  # noqa: F401 - registers the environments
from rlvr.graders.repo.patch import make_unified_diff
from rlvr.graders.repo.prove import prove_repo_tasks
from rlvr.mining.miner import MineOptions, Miner, MiningError
from rlvr.task_packs.directory import validate_directory
from rlvr.task_packs.registry import load_pack

PROJECTS = ("toolz", "more-itertools", "boltons", "python-slugify")


def fetch_sdist(name: str, cache: Path) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    normal = name.replace("-", "_").lower()
    found = [p for p in cache.glob("*.tar.gz") if p.name.replace("-", "_").lower().startswith(normal + "_")]
    if found:
        return sorted(found)[-1]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-binary",
            ":all:",
            "--no-deps",
            name,
            "-d",
            str(cache),
        ],
        check=True,
        timeout=600,
    )
    return fetch_sdist(name, cache)


def validate_share(pack_dir: Path, prove: int | None) -> tuple[int, int]:
    """(tasks accepted, tasks) by `rlvr packs validate`: its format checks, then its prover
    (`prove_repo_tasks`, a fresh grader) over every task, or over the first `prove` of them (the share
    is then of those); a task with any problem is refused."""
    lines = (pack_dir / "tasks.jsonl").read_text().splitlines()
    problems = validate_directory(pack_dir)
    if any(p.line is None for p in problems):
        return 0, len(lines)
    bad = {json.loads(lines[p.line - 1])["id"] for p in problems if p.line is not None}
    chosen = load_pack(str(pack_dir)).tasks()[:prove]
    if prove is not None:
        lines = [line for line in lines if json.loads(line)["id"] in {t.id for t in chosen}]
    tasks = [t for t in chosen if t.id not in bad]
    report = prove_repo_tasks(pack_dir.name, tasks, progress=False, warn=lambda _: None)
    bad |= {p.file.rsplit(":", 1)[-1] for p in report.problems}
    return len(lines) - len(bad), len(lines)


def submit_p50(pack: str, grades: int) -> dict[str, Any]:
    """Submit grading wall time in patch mode over `grades` tasks, each submitted twice: the reference
    diff and a no-op (the base state), each plus one distinct line so pyright really runs. The grader's
    own phase timings (types = whole-repo pyright, behaviour = the sandbox run of the hidden checks and
    the visible tests, which overlap) are summarised per phase."""
    env = gym.make("rlvr/Repo-v0", pack=pack, mode="patch")
    tasks = load_pack(pack).tasks()
    times: dict[str, list[float]] = {"reference": [], "noop": []}
    phases: dict[str, list[float]] = {}
    rewards: dict[str, list[float]] = {"reference": [], "noop": []}
    try:
        for index in range(grades + 1):
            task = tasks[index % len(tasks)]
            base, reference = task.hidden["base"], task.hidden["reference"]
            changed = sorted(p for p in set(base) | set(reference) if base.get(p) != reference.get(p))
            path = changed[0]
            for label, state in (("reference", reference), ("noop", base)):
                target = dict(state)
                target[path] = target[path] + f"\n_rlvr_bench_marker_{index} = {index}\n"
                env.reset(options={"task_id": task.id})
                started = time.perf_counter()
                _, reward, _, _, _ = env.step(make_unified_diff(base, target))
                elapsed = time.perf_counter() - started
                if index:  # the first submit starts pyright and caches the reference outcomes
                    times[label].append(elapsed)
                    rewards[label].append(float(reward))
                    verdict = getattr(env.unwrapped, "last_verdict", None)
                    for phase, seconds in (getattr(verdict, "timings", None) or {}).items():
                        phases.setdefault(phase, []).append(float(seconds))
    finally:
        env.close()
    every = sorted(times["reference"] + times["noop"])
    return {
        "p50": statistics.median(every),
        "p95": every[min(len(every) - 1, int(0.95 * len(every)))],
        "p50_reference": statistics.median(times["reference"]),
        "p50_noop": statistics.median(times["noop"]),
        "phase_p50": {phase: statistics.median(values) for phase, values in sorted(phases.items())},
        "mean_reward_reference": sum(rewards["reference"]) / len(rewards["reference"]),
        "mean_reward_noop": sum(rewards["noop"]) / len(rewards["noop"]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--projects", nargs="*", default=list(PROJECTS))
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--budget", type=float, default=840.0, help="mining time budget per project (s)")
    parser.add_argument("--grades", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("/tmp/rlvr-mining-bench"))
    parser.add_argument("--skip-mining", action="store_true", help="reuse the packs already under --out")
    parser.add_argument(
        "--prove", type=int, default=None, help="re-prove only the first N tasks of each pack (default: all)"
    )
    args = parser.parse_args()
    results: dict[str, Any] = {"load_before": os.getloadavg(), "projects": {}}
    print(f"load average before: {results['load_before']}", flush=True)
    for name in args.projects:
        out = args.out / name
        row: dict[str, Any] = {}
        if not args.skip_mining:
            sdist = fetch_sdist(name, args.out / "sdists")
            row["sdist"] = sdist.name
            miner = Miner(
                MineOptions(max_tasks=args.tasks, time_budget=args.budget, allow_failing=True, progress=False)
            )
            started = time.perf_counter()
            try:
                summary = miner.mine(sdist, out)
                row["summary"] = summary.lines()
            except MiningError as exc:
                row["error"] = str(exc)
            finally:
                miner.close()
            row["wall_s"] = time.perf_counter() - started
            row["load_after_mining"] = os.getloadavg()
        if (out / "mining.json").is_file() and (out / "tasks.jsonl").is_file():
            mined = json.loads((out / "mining.json").read_text())
            row |= {
                "modules": mined["modules"],
                "kept": mined["kept"],
                "dropped": mined["dropped"],
                "scenarios": mined["scenarios"],
                "noop_mean": mined.get("noop_mean"),
                "tests_failing": len(mined["tests_failing"]),
            }
            started = time.perf_counter()
            accepted, total = validate_share(out, args.prove)
            row["validate_s"] = time.perf_counter() - started
            row["validate"] = [accepted, total]
        results["projects"][name] = row
        print(json.dumps({name: row}, indent=1, default=str), flush=True)
    candidates = [
        (r["modules"], n)
        for n, r in results["projects"].items()
        if r.get("kept") and sum(r["kept"].values()) > 0
    ]
    if candidates and args.grades:
        modules, biggest = max(candidates)
        results["grading"] = {
            "pack": biggest,
            "modules": modules,
            "mined": submit_p50(str(args.out / biggest), args.grades),
            "baseline_repo_tasks": submit_p50("repo-tasks", args.grades),
        }
        print(json.dumps(results["grading"], indent=1), flush=True)
    results["load_after"] = os.getloadavg()
    print(f"load average after: {results['load_after']}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
