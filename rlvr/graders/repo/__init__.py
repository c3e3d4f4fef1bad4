"""Repository tasks: an in-memory workspace, patches, whole-repository pyright, and hidden behaviour
scenarios compared against the reference end state under the trusted-oracle rule."""

from rlvr.graders.repo.grader import RepoGrader

__all__ = ["RepoGrader"]
