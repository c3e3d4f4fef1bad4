"""Sandboxes that run untrusted code and return only plain data.

`make_sandbox("local")` — zygotes in Linux namespaces (the default); `make_sandbox("docker")` — one
container per worker, `runtime="runsc"` for gVisor. Both expose `run(job)`, `run_many(jobs)`, `close()`.
"""

from __future__ import annotations

from typing import Any

from rlvr.sandbox.pool import CallOutcome, ExecResult, Job, LocalSandbox, SandboxUnavailable, WorkerPool

SANDBOX_KINDS = ("local", "docker")

__all__ = [
    "SANDBOX_KINDS",
    "CallOutcome",
    "ExecResult",
    "Job",
    "LocalSandbox",
    "SandboxUnavailable",
    "WorkerPool",
    "build_sandbox",
    "make_sandbox",
]


def make_sandbox(
    kind: str = "local", workers: int | None = None, runtime: str | None = None, **options: Any
) -> WorkerPool:
    """A sandbox pool by name. `runtime` applies to docker only (e.g. "runsc"); `options` go to the
    backend (local: `isolation`; docker: `image`, `mem_mb`, `cpus`, `pids`; both: `require_isolation`,
    which refuses to start with less than full isolation — also RLVR_REQUIRE_ISOLATION=1)."""
    if kind == "local":
        if runtime:
            raise ValueError("--runtime applies to the docker sandbox only")
        return LocalSandbox(workers, **options)
    if kind == "docker":
        from rlvr.sandbox.docker_backend import DockerSandbox

        return DockerSandbox(workers, runtime=runtime, **options)
    raise ValueError(f"unknown sandbox {kind!r}; choose one of {', '.join(SANDBOX_KINDS)}")


def build_sandbox(
    option: Any, jobs: int | None = None, runtime: str | None = None, **options: Any
) -> tuple[WorkerPool, bool]:
    """The sandbox a grader's `sandbox` option names, and whether the grader owns it: a name
    ("local", "docker") is built here and is the grader's to close; a sandbox object passed in is
    shared, used as is and left open for its owner."""
    if isinstance(option, str):
        return make_sandbox(option, jobs, runtime, **options), True
    return option, False
