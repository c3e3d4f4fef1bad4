"""Reference 1.0 / no-op 0.0 and submit cost (grade_state of the reference, checks cached) on every 6th
repo-tasks task (every task with `--every 1`); run it once per checkout in one session for a ratio:

  PYTHONPATH=<checkout> .venv/bin/python benchmarks/bench_repo_sample_cost.py [--every N]
"""

import argparse
import json
import statistics
import time

from rlvr.graders.repo.grader import RepoGrader
from rlvr.graders.repo.prove import _Tasks
from rlvr.task_packs.registry import load_pack

pack = load_pack("repo-tasks")
parser = argparse.ArgumentParser(
    description="reference/no-op rewards and submit cost on a sample of repo-tasks"
)
parser.add_argument("--every", type=int, default=6, help="grade every N-th task (default 6)")
tasks = list(pack.tasks())[:: parser.parse_args().every]
grader = RepoGrader(_Tasks(tasks, "repo-tasks"), types=False, jobs=1)
bad, times, counts, noops = [], [], [], []
try:
    for t in tasks:
        checks = grader.checks(t)
        counts.append(len(checks.scenarios))
        start = time.perf_counter()
        ref = grader.grade_state(t, t.hidden["reference"])
        times.append(time.perf_counter() - start)
        noop = grader.grade_state(t, t.hidden["base"])
        noops.append(noop.reward)
        if ref.reward != 1.0 or noop.reward != 0.0 or ref.error or noop.error:
            bad.append((t.id, ref.reward, noop.reward, ref.error, noop.error, ref.feedback[:200]))
finally:
    grader.close()
print(
    json.dumps(
        {
            "tasks": len(tasks),
            "bad": bad,
            "p50_submit_s": statistics.median(times),
            "p90_submit_s": sorted(times)[int(0.9 * len(times))],
            "median_checks": statistics.median(counts),
            "noop_mean": statistics.fmean(noops),
        }
    )
)
