"""Dependency order: a deterministic topological sort with cycle detection."""

from scheduler.jobs import Job


class CycleError(ValueError):
    """The dependencies contain a cycle."""


def topological_order(jobs: dict[str, Job]) -> list[str]:
    """Job names so that every job follows its dependencies; among ready jobs, alphabetical order.
    Unknown dependencies are a KeyError, cycles a CycleError."""
    remaining = {name: set(job.depends_on) for name, job in jobs.items()}
    for name, needs in remaining.items():
        for need in needs:
            if need not in jobs:
                raise KeyError(f"{name} depends on unknown job {need}")
    order: list[str] = []
    while remaining:
        ready = sorted(name for name, needs in remaining.items() if not needs)
        if not ready:
            raise CycleError("cycle among: " + ", ".join(sorted(remaining)))
        first = ready[0]
        order.append(first)
        del remaining[first]
        for needs in remaining.values():
            needs.discard(first)
    return order


def dependents(jobs: dict[str, Job], name: str) -> list[str]:
    """Every job that depends on `name`, directly or not, sorted."""
    found: set[str] = set()
    frontier = [name]
    while frontier:
        current = frontier.pop()
        for job in jobs.values():
            if current in job.depends_on and job.name not in found:
                found.add(job.name)
                frontier.append(job.name)
    return sorted(found)
