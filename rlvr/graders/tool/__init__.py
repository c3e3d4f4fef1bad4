"""Tool use: multi-turn tool-call episodes over simulated worlds, replayed and checked."""

from rlvr.graders.tool.grader import ToolGrader

__all__ = ["ToolGrader"]
