"""SQL answers: a query or DML run on the visible database and hidden variants of its schema.

The package exposes its grader only; it is imported on first use so that importing one module of
this family (for example inside a worker process) does not load the whole grader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlvr.graders.sql.grader import SQLGrader

__all__ = ["SQLGrader"]


def __getattr__(name: str) -> Any:
    if name == "SQLGrader":
        from rlvr.graders.sql.grader import SQLGrader

        return SQLGrader
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
