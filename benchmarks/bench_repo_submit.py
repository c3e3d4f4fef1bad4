"""Submit grading cost on a repo pack (e.g. one mined by `rlvr packs mine`) against the built-in
`repo-tasks` pack in the same run: per task, three submits of a final state through the repo grader's
`grade_state` (agent mode's submit): the reference, a no-op (the base state) and one wrong edit (the
reference with `raise RuntimeError` put before its first changed line), each plus one distinct line so
pyright really re-checks. The once-per-task work (the hidden checks on the reference and the base, the
base state's pyright report) is done before the timed submits and reported apart.

Prints p50/p90 of the submit wall time, the grader's phase timings (types = whole-repo pyright,
behaviour = the sandbox runs; they overlap), the rewards, visible_passed and flags per kind, and the load
average before and after. Runs against whatever checkout PYTHONPATH names (compare revisions that way):

  PYTHONPATH=<checkout> .venv/bin/python benchmarks/bench_repo_submit.py --pack /tmp/packs/boltons \\
      [--tasks 6] [--set visible_tests=always] [--out result.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import rlvr  # noqa: F401 - registers the packs
from rlvr.core.types import Task
from rlvr.graders.base import make_grader
from rlvr.graders.repo.grader import RepoGrader
from rlvr.task_packs.registry import load_pack

KINDS = ("reference", "noop", "wrong")


def wrong_edit(task: Task) -> dict[str, str]:
    """The reference with `raise RuntimeError("wrong edit")` before its first changed line."""
    base, reference = task.hidden["base"], task.hidden["reference"]
    path = sorted(p for p in reference if base.get(p) != reference[p])[0]
    old, new = base.get(path, "").splitlines(), reference[path].splitlines()
    at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    at = min(at, len(new) - 1)
    while at > 0 and not new[at].strip():
        at -= 1
    indent = new[at][: len(new[at]) - len(new[at].lstrip())]
    lines = new[:at] + [f'{indent}raise RuntimeError("wrong edit")'] + new[at:]
    return reference | {path: "\n".join(lines) + "\n"}


def states(task: Task, index: int) -> dict[str, dict[str, str]]:
    base, reference = task.hidden["base"], task.hidden["reference"]
    path = sorted(p for p in reference if base.get(p) != reference[p])[0]
    out = {"reference": dict(reference), "noop": dict(base), "wrong": wrong_edit(task)}
    for files in out.values():
        files[path] = files.get(path, "") + f"\n_rlvr_bench_marker_{index} = {index}\n"
    return out


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(pack_name: str, count: int, options: dict[str, Any]) -> dict[str, Any]:
    pack = load_pack(pack_name)
    tasks = pack.tasks()[:count]
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    phases: dict[str, list[float]] = {}
    rewards: dict[str, list[float]] = {kind: [] for kind in KINDS}
    visible: dict[str, list[Any]] = {kind: [] for kind in KINDS}
    flags: dict[str, list[list[str]]] = {kind: [] for kind in KINDS}
    setup: list[float] = []
    with make_grader(pack, jobs=2, **options) as grader:
        assert isinstance(grader, RepoGrader)
        for index, task in enumerate(tasks):
            started = time.perf_counter()
            grader.checks(task)
            grader.type_checker.check(task.hidden["base"])
            setup.append(time.perf_counter() - started)
            for kind, files in states(task, index).items():
                started = time.perf_counter()
                verdict = grader.grade_state(task, files)
                times[kind].append(time.perf_counter() - started)
                rewards[kind].append(verdict.reward)
                visible[kind].append(verdict.visible_passed)
                flags[kind].append(list(verdict.flags))
                for phase, seconds in (verdict.timings or {}).items():
                    phases.setdefault(phase, []).append(float(seconds))
    every = [t for kind in KINDS for t in times[kind]]
    return {
        "pack": pack_name,
        "tasks": len(tasks),
        "p50": statistics.median(every),
        "p90": quantile(every, 0.9),
        "p50_by_kind": {kind: statistics.median(times[kind]) for kind in KINDS},
        "phase_p50": {phase: statistics.median(v) for phase, v in sorted(phases.items())},
        "phase_p90": {phase: quantile(v, 0.9) for phase, v in sorted(phases.items())},
        "per_task_setup_p50": statistics.median(setup),
        "rewards": rewards,
        "visible_passed": visible,
        "flags": flags,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pack", required=True, help="the pack to measure (a directory or a built-in name)")
    parser.add_argument("--baseline", default="repo-tasks", help="graded the same way in the same run")
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--set", action="append", default=[], help="a grader option, NAME=JSON value")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    options: dict[str, Any] = {}
    for item in args.set:
        name, _, value = item.partition("=")
        try:
            options[name] = json.loads(value)
        except json.JSONDecodeError:
            options[name] = value
    results: dict[str, Any] = {"load_before": os.getloadavg(), "options": options, "started": time.time()}
    results["measured"] = measure(args.pack, args.tasks, options)
    results["load_middle"] = os.getloadavg()
    results["baseline"] = measure(args.baseline, args.tasks, options)
    results["load_after"] = os.getloadavg()
    results["ratio_p50"] = results["measured"]["p50"] / results["baseline"]["p50"]
    text = json.dumps(results, indent=1, default=str)
    print(text)
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
