"""The repo grader's options (see `rlvr.graders.options` for how they are resolved)."""

from __future__ import annotations

from dataclasses import dataclass

from rlvr.graders.options import GraderOptions


@dataclass(frozen=True, kw_only=True)
class RepoOptions(GraderOptions):
    """`types` False skips whole-repository pyright (the types gate then always passes, weight 0);
    `type_timeout` bounds one pyright run in seconds; `timeout` (seconds per sandbox job) defaults
    to 10."""

    types: bool = True
    type_timeout: float = 60.0
