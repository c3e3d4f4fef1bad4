"""Jobs: a name, a duration and the names of the jobs it depends on."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Job:
    name: str
    duration: int
    depends_on: tuple[str, ...] = field(default_factory=tuple)


def jobs_from_spec(spec: list[tuple[str, int, list[str]]]) -> dict[str, Job]:
    """Build jobs from (name, duration, dependencies); duplicate names or negative durations are ValueErrors."""
    jobs: dict[str, Job] = {}
    for name, duration, depends_on in spec:
        if name in jobs:
            raise ValueError(f"duplicate job {name}")
        if duration < 0:
            raise ValueError(f"negative duration for {name}")
        jobs[name] = Job(name, duration, tuple(depends_on))
    return jobs
