"""Tool use: multi-turn tool-call episodes over simulated worlds, replayed and checked.

The package exposes its grader only; it is imported on first use so that importing one module of
this family (for example inside a worker process) does not load the whole grader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlvr.graders.tool.grader import ToolGrader

__all__ = ["ToolGrader"]


def __getattr__(name: str) -> Any:
    if name == "ToolGrader":
        from rlvr.graders.tool.grader import ToolGrader

        return ToolGrader
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
