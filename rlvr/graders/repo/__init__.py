"""Repository tasks: an in-memory workspace, patches, whole-repository pyright, and hidden behaviour
scenarios compared against the reference end state under the trusted-oracle rule.

The package exposes its grader only, imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlvr.graders.repo.grader import RepoGrader

__all__ = ["RepoGrader"]


def __getattr__(name: str) -> Any:
    if name == "RepoGrader":
        from rlvr.graders.repo.grader import RepoGrader

        return RepoGrader
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
