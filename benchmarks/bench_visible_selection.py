"""Is running only the affected test files (`visible_tests.py`) the same as running the whole visible
suite? For the first N tasks of each pack and the three states `bench_repo_submit.py` grades (reference,
no-op, wrong edit, each plus a marker line): the whole suite's lines against the affected files' lines
merged with the base state's, and `visible_passed` from each; prints every state and the counts.

  PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_visible_selection.py /tmp/p32/boltons repo-tasks [--tasks 6]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_repo_submit import states  # noqa: E402

from rlvr.graders.base import make_grader  # noqa: E402
from rlvr.graders.repo.grader import RepoGrader  # noqa: E402
from rlvr.graders.repo.visible_tests import known_failing, merged_lines, tests_lines, visible_outcome  # noqa: E402
from rlvr.graders.repo.workspace import changed_paths  # noqa: E402
from rlvr.task_packs.registry import load_pack  # noqa: E402


def suite_lines(grader: RepoGrader, files: dict[str, str], paths: list[str] | None) -> list[str]:
    outcome = grader.run(files, [("tests", {"paths": paths})], 120.0).outcomes[1]
    lines = tests_lines(outcome.value) if outcome is not None and outcome.ok else None
    if lines is None:
        raise RuntimeError("the visible tests did not run")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("packs", nargs="+")
    parser.add_argument("--tasks", type=int, default=6)
    args = parser.parse_args()
    differing = 0
    for name in args.packs:
        pack = load_pack(name)
        counts = {"same lines": 0, "same outcome": 0, "states": 0}
        with make_grader(pack, jobs=2, types=False, visible_tests="always") as grader:
            assert isinstance(grader, RepoGrader)
            for index, task in enumerate(pack.tasks()[: args.tasks]):
                grader.checks(task)
                base_lines = grader._base_tests[task.id]  # noqa: SLF001 - the grader's own record
                known = known_failing(task.hidden)
                for kind, files in states(task, index).items():
                    ran = grader._visible_selection(task, files, changed_paths(task.hidden["base"], files))  # noqa: SLF001
                    full = suite_lines(grader, files, None)
                    part = suite_lines(grader, files, ran)
                    merged = merged_lines(base_lines, part, ran)
                    whole = visible_outcome(full, known, need_a_pass=True)
                    chosen = visible_outcome(merged, known, need_a_pass=True)
                    counts["states"] += 1
                    counts["same lines"] += sorted(full) == sorted(merged)
                    counts["same outcome"] += whole == chosen
                    files_run = "all" if ran is None else len(ran)
                    print(f"{name} {task.id} {kind}: whole {whole}, affected {chosen} ({files_run} files)")
        print(name, counts, flush=True)
        differing += counts["states"] - counts["same outcome"]
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
