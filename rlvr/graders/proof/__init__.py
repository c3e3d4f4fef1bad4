"""Derivations: one step a line, each step checked by sympy in the killable worker."""

from rlvr.graders.proof.grader import ProofGrader

__all__ = ["ProofGrader"]
