"""The core data every layer shares: a Task, the Verdict a grader returns, a TaskPack, and the
plain-data codec. Imports nothing else from rlvr."""

from rlvr.core.pack import StaticPack, TaskPack, UnknownTaskError
from rlvr.core.types import Component, Fault, Task, Verdict, grader_fault

__all__ = [
    "Component",
    "Fault",
    "StaticPack",
    "Task",
    "TaskPack",
    "UnknownTaskError",
    "Verdict",
    "grader_fault",
]
