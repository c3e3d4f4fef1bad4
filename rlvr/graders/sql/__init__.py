"""SQL answers: a query or DML run on the visible database and hidden variants of its schema."""

from rlvr.graders.sql.grader import SQLGrader

__all__ = ["SQLGrader"]
