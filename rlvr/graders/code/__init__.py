"""Code tasks: extraction, syntax, types, the trusted oracle with property tests, perf.

The package exposes its grader only; it is imported on first use so that importing one module of
this family (for example inside a worker process) does not load the whole grader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlvr.graders.code.grader import CodeGrader

__all__ = ["CodeGrader"]


def __getattr__(name: str) -> Any:
    if name == "CodeGrader":
        from rlvr.graders.code.grader import CodeGrader

        return CodeGrader
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
