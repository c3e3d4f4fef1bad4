"""Code tasks: extraction, syntax, types, the trusted oracle with property tests, perf."""

from rlvr.graders.code.grader import CodeGrader

__all__ = ["CodeGrader"]
