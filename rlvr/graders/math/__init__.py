"""Math answers: extraction and equivalence by math-verify and sympy in a killable worker."""

from rlvr.graders.math.grader import MathGrader

__all__ = ["MathGrader"]
