"""One sandbox pass for several named groups of jobs (the reference's measurement, the candidates'
tests, their growth inputs), each group's results handed back under its name."""

from __future__ import annotations

from typing import Any

from rlvr.sandbox.pool import ExecResult, Job


def run_groups(sandbox: Any, groups: dict[str, list[Job]]) -> dict[str, list[ExecResult]]:
    """`sandbox.run_many` over every group's jobs at once (one pass keeps the workers busy), split
    back by group name, in each group's order."""
    jobs = [job for group in groups.values() for job in group]
    results = sandbox.run_many(jobs) if jobs else []
    if len(results) != len(jobs):
        raise RuntimeError(f"the sandbox returned {len(results)} results for {len(jobs)} jobs")
    out: dict[str, list[ExecResult]] = {}
    start = 0
    for name, group in groups.items():
        out[name] = list(results[start : start + len(group)])
        start += len(group)
    return out
