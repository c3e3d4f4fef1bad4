"""Running operations on a repository in the sandbox: one job per request, the repository shipped as
plain data ({path: source}) and installed in the child by `child_driver.py` as an in-memory importer."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from rlvr.sandbox import ExecResult, Job, WorkerPool

DRIVER_SOURCE = (Path(__file__).parent / "child_driver.py").read_text()
DRIVER_ENTRY = "repo_driver"


def ops_job(files: dict[str, str], ops: list[tuple[str, Any]], timeout: float, trace: bool = False) -> Job:
    """The job that installs `files` in a fresh child and runs `ops` in order; outcome i+1 answers
    ops[i] (with `trace`, count i+1 is the number of Python operations ops[i] took). The repository may
    read its functions' `__code__` (packages call `inspect.signature` at import); frames stay refused."""
    calls: list[tuple[Any, ...]] = [("install", dict(files))] + [(op, arg) for op, arg in ops]
    return Job(
        source=DRIVER_SOURCE, entry=DRIVER_ENTRY, calls=calls, timeout=timeout, trace=trace, read_code=True
    )


def run_ops(
    sandbox: WorkerPool, files: dict[str, str], ops: list[tuple[str, Any]], timeout: float
) -> ExecResult:
    """Install `files` in a fresh child and run `ops` in order; outcome i+1 answers ops[i]."""
    return sandbox.run(ops_job(files, ops, timeout))


def perf_ops(scenarios: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Each perf scenario as ("prepare", s), ("measure", s), ("collect", None): scenario i's counted
    operations are those of call 3i+2 (its "measure"), its outcome is the value of call 3i+3."""
    return [
        op
        for scenario in scenarios
        for op in (("prepare", scenario), ("measure", scenario), ("collect", None))
    ]


def same_value(expected: Any, actual: Any) -> bool:
    """Plain-data equality, floats compared with a small tolerance, types kept apart (1 != True, and
    where the reference gives an int a float of equal value does not agree: 2.0 is not an index or
    a count). Total: any plain value of any size compares without raising."""
    if type(expected) is not type(actual):
        if type(expected) is float and type(actual) is int:
            try:
                return math.isclose(expected, float(actual), rel_tol=1e-9, abs_tol=1e-12)
            except OverflowError:
                return False
        return False
    if isinstance(expected, float):
        if math.isnan(expected):
            return math.isnan(actual)
        return math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(expected, list | tuple):
        return len(expected) == len(actual) and all(
            same_value(e, a) for e, a in zip(expected, actual, strict=True)
        )
    if isinstance(expected, dict):
        return expected.keys() == actual.keys() and all(same_value(v, actual[k]) for k, v in expected.items())
    return bool(expected == actual)
