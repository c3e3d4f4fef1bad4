"""Derivations: one step a line, each step checked by sympy in the killable worker.

The package exposes its grader only; it is imported on first use so that importing one module of
this family (for example inside a worker process) does not load the whole grader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlvr.graders.proof.grader import ProofGrader

__all__ = ["ProofGrader"]


def __getattr__(name: str) -> Any:
    if name == "ProofGrader":
        from rlvr.graders.proof.grader import ProofGrader

        return ProofGrader
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
