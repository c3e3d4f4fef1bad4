"""Independent fixes for held-out repo tasks graded through the repo grader: false passes (a wrong fix
passes) and false failures (a correct or unusual-but-correct fix fails).

The fixes (benchmarks/data/repo_judge_fixes.json, or the file --data names) are search/replace edits on each task's base state,
written from the issue text, the base repository and its visible tests. Run it once per checkout to
compare revisions (e.g. main's tree exported to a directory, then this one):

  PYTHONPATH=<checkout> .venv/bin/python benchmarks/bench_repo_judge.py --label after
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

import rlvr  # noqa: F401
from rlvr.graders.base import make_grader
from rlvr.graders.repo.grader import RepoGrader
from rlvr.task_packs.registry import load_pack

DATA = Path(__file__).parent / "data" / "repo_judge_fixes.json"


def apply_edits(base: dict[str, str], edits: list[list[Any]]) -> dict[str, str]:
    files = dict(base)
    for path, old, new in edits:
        if old is None:
            files[path] = new
            continue
        if files.get(path, "").count(old) != 1:
            raise ValueError(f"{path}: the text to replace occurs {files.get(path, '').count(old)} times")
        files[path] = files[path].replace(old, new)
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--label", default="run")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--data", type=Path, default=DATA, help=f"the fixes to grade (default {DATA.name})")
    args = parser.parse_args()
    fixes = json.loads(args.data.read_text())
    pack = load_pack("repo-tasks")
    grader = make_grader(pack, jobs=2)
    assert isinstance(grader, RepoGrader)
    rows = []
    try:
        for fix in tqdm(fixes, desc=args.label, file=sys.stderr):
            task = pack.get(fix["task"])
            verdict = grader.grade_state(task, apply_edits(task.hidden["base"], fix["edits"]))
            wrong = fix["class"].startswith("wrong")
            rows.append(
                {
                    "task": fix["task"],
                    "class": fix["class"],
                    "passed": verdict.passed,
                    "reward": round(verdict.reward, 3),
                    "error": verdict.error,
                    "flags": verdict.flags,
                    "false_pass": wrong and verdict.passed,
                    "false_failure": (not wrong) and not verdict.passed,
                    "feedback": verdict.feedback[:200],
                }
            )
    finally:
        grader.close()
    wrong = [r for r in rows if r["class"].startswith("wrong")]
    right = [r for r in rows if not r["class"].startswith("wrong")]
    summary = {
        "label": args.label,
        "false_passes": f"{sum(r['false_pass'] for r in wrong)}/{len(wrong)}",
        "false_failures": f"{sum(r['false_failure'] for r in right)}/{len(right)}",
        "errors": sum(1 for r in rows if r["error"]),
    }
    for row in rows:
        mark = "FALSE PASS" if row["false_pass"] else "FALSE FAIL" if row["false_failure"] else "ok"
        print(
            f"{row['task']:34s} {row['class']:28s} passed={row['passed']!s:5s} reward={row['reward']:.3f} {mark}"
        )
    print(json.dumps(summary))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
