"""Math answers: extraction and equivalence by math-verify and sympy in a killable worker.

The package exposes its grader only; it is imported on first use so that importing one module of
this family (for example inside a worker process) does not load the whole grader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlvr.graders.math.grader import MathGrader

__all__ = ["MathGrader"]


def __getattr__(name: str) -> Any:
    if name == "MathGrader":
        from rlvr.graders.math.grader import MathGrader

        return MathGrader
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
