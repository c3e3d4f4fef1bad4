"""Earliest start times with unlimited workers, and the critical path."""

from scheduler.graph import topological_order
from scheduler.jobs import Job, jobs_from_spec


def earliest_starts(jobs: dict[str, Job]) -> dict[str, int]:
    """Each job starts when its last dependency finishes (0 without dependencies)."""
    starts: dict[str, int] = {}
    for name in topological_order(jobs):
        job = jobs[name]
        starts[name] = max((starts[d] + jobs[d].duration for d in job.depends_on), default=0)
    return starts


def makespan(jobs: dict[str, Job]) -> int:
    """When the last job finishes (0 for no jobs)."""
    starts = earliest_starts(jobs)
    return max((starts[name] + job.duration for name, job in jobs.items()), default=0)


def critical_path(jobs: dict[str, Job]) -> list[str]:
    """A longest chain of dependent jobs ending at the last finisher (ties: alphabetically first)."""
    if not jobs:
        return []
    starts = earliest_starts(jobs)
    finish = {name: starts[name] + job.duration for name, job in jobs.items()}
    current = min(jobs, key=lambda name: (-finish[name], name))
    path = [current]
    while jobs[current].depends_on:
        current = min(jobs[current].depends_on, key=lambda name: (-finish[name], name))
        path.append(current)
    return list(reversed(path))


def plan(spec: list[tuple[str, int, list[str]]]) -> dict[str, object]:
    """A plan summary from a job spec: order, starts, makespan and critical path."""
    jobs = jobs_from_spec(spec)
    return {
        "order": topological_order(jobs),
        "starts": earliest_starts(jobs),
        "makespan": makespan(jobs),
        "critical": critical_path(jobs),
    }
