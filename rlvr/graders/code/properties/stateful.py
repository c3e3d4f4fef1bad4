"""Stateful-class tasks on the grading side: the program the sandbox runs for a class task (the
candidate's class plus the trusted method driver). The driver itself, the method rules and the
generation of operation sequences are specs shared with the packs (`rlvr.specs.methods`).
"""

from __future__ import annotations

from rlvr.core.types import Task


def sandbox_source(task: Task, program: str) -> str:
    """The program the sandbox runs: the candidate's (or reference's) source, plus the method
    driver for class tasks."""
    driver = task.hidden.get("driver")
    if not driver:
        return program
    return program.rstrip("\n") + "\n\n\n" + driver["source"]
