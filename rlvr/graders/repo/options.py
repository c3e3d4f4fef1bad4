"""The repo grader's options (see `rlvr.graders.options` for how they are resolved)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rlvr.graders.options import GraderOptions


@dataclass(frozen=True, kw_only=True)
class RepoOptions(GraderOptions):
    """`types` False skips whole-repository pyright (the types gate then always passes, weight 0);
    `type_timeout` bounds one pyright check in seconds; `type_engine` is "server" (one warm
    pyright-langserver fed only the changed files; default) or "cli" (one cold pyright run per check);
    `timeout` (seconds per sandbox job) defaults to 10."""

    types: bool = True
    type_timeout: float = 60.0
    type_engine: Literal["server", "cli"] = "server"
