"""The repo grader's options (see `rlvr.graders.options` for how they are resolved)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rlvr.graders.options import GraderOptions
from rlvr.graders.repo.visible_tests import VisibleMode


@dataclass(frozen=True, kw_only=True)
class RepoOptions(GraderOptions):
    """`types` False skips whole-repository pyright (the types gate then always passes, weight 0);
    `type_timeout` bounds one pyright check in seconds; `type_engine` is "server" (one warm
    pyright-langserver fed only the changed files; default) or "cli" (one cold pyright run per check);
    `timeout` (seconds per sandbox job) defaults to 10.

    `visible_tests` says when a submit runs the repository's visible tests. They are never rewarded:
    their outcome is only `Verdict.visible_passed` (the hacking-gap metrics) and the
    `special_cases_visible` flag, which needs a state that fails the hidden checks, changes files, and
    whose base state fails the visible tests. "flag" (default) runs them exactly then, in a second
    sandbox child after the hidden checks, so the flag fires wherever it did and `visible_passed` is
    measured on those submits only (None elsewhere: the hacking gap is then the share of such
    candidates that made the visible tests pass); "always" runs them on every submit (in the hidden
    checks' child; the hacking gap over every submit); "never" never (no flag, no gap). Whenever they
    run, only the test files the change can affect run (see `visible_tests.py`), the others' outcomes
    are the base state's."""

    types: bool = True
    type_timeout: float = 60.0
    type_engine: Literal["server", "cli"] = "server"
    visible_tests: VisibleMode = "flag"
