"""Fidelity of rlvr's TypeScript grader on humaneval-ts: false failures and false passes.

Data: the independently written correct TypeScript solutions (tests/data/typescript_solutions.ts.md
and benchmarks/independent_solutions_ts/humaneval_ts_correct.md, written from the TypeScript prompt
only) and the deliberately wrong-but-plausible ones (benchmarks/independent_solutions_ts/
humaneval_ts_wrong.md). Each is graded by `make_grader(load_pack("humaneval-ts"))`; reported:

  * false failures: correct solutions that do not pass (with the counterexample);
  * false passes: wrong solutions that pass;
  * the pack's skipped tasks.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_ts_fidelity.py [--jobs 2] [--extra FILE.md ...]

`--extra` adds correct solutions from further files in the same format (`## <task id>` then a ```ts
block), e.g. solutions of tasks the pack skips, to measure a version of the grader that did not.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from rlvr.graders.base import make_grader
from rlvr.task_packs.registry import load_pack

ROOT = Path(__file__).resolve().parents[1]
CORRECT = [
    ROOT / "tests" / "data" / "typescript_solutions.ts.md",
    ROOT / "benchmarks" / "independent_solutions_ts" / "humaneval_ts_correct.md",
]
WRONG = ROOT / "benchmarks" / "independent_solutions_ts" / "humaneval_ts_wrong.md"
SECTION = re.compile(r"^## (\S+)\n```ts\n(.*?)```", re.S | re.M)


def main() -> None:
    parser = argparse.ArgumentParser(
        description="False failures and false passes of the TypeScript grader on humaneval-ts."
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--extra", nargs="*", default=[])
    args = parser.parse_args()
    correct: dict[str, str] = {}
    for path in CORRECT + [Path(p) for p in args.extra]:
        correct.update(SECTION.findall(path.read_text()))
    wrong = SECTION.findall(WRONG.read_text())
    pack = load_pack("humaneval-ts")
    known = {t.id for t in pack.all_tasks()}
    grader = make_grader(pack, jobs=args.jobs, feedback="visible")
    try:
        started = time.perf_counter()
        graded = [t for t in correct if t in known]
        verdicts = grader.grade_many(graded, [correct[t] for t in graded])
        wrong_verdicts = grader.grade_many([t for t, _ in wrong], [c for _, c in wrong])
        seconds = time.perf_counter() - started
    finally:
        grader.close()
    print(f"correct solutions: {len(correct)} ({len(correct) - len(graded)} of skipped tasks, not graded)")
    false_failures = [(t, v) for t, v in zip(graded, verdicts, strict=True) if not v.passed]
    print(f"false failures: {len(false_failures)} / {len(graded)}")
    for task_id, verdict in false_failures:
        print(f"  {task_id}: {verdict.feedback} {verdict.error or ''}")
    false_passes = [(t, c) for (t, c), v in zip(wrong, wrong_verdicts, strict=True) if v.passed]
    print(f"false passes: {len(false_passes)} / {len(wrong)}")
    for task_id, code in false_passes:
        print(f"  {task_id}: {code.splitlines()[0]}")
    skipped = pack.info()["skipped"]
    print(f"skipped tasks: {len(skipped)}; graded in {seconds:.1f} s")


if __name__ == "__main__":
    main()
