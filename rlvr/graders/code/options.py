"""The code grader's options (see `rlvr.graders.options` for how they are resolved)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rlvr.core.types import Task
from rlvr.graders.code.properties.suite import PropertyConfig
from rlvr.graders.options import GraderOptions


@dataclass(frozen=True, kw_only=True)
class CodeOptions(GraderOptions):
    """`types` False skips the type layer and gives it no weight; `properties` False grades on the
    task's own calls only (no generated hidden tests), a PropertyConfig tunes generation;
    `counterexample_db` is a directory where inputs that caught a program are recorded and replayed
    first by later graders; `extra_calls(task)` adds hidden argument tuples; `feedback` "visible"
    puts a counterexample in the feedback (kata's visible-feedback mode)."""

    types: bool = True
    properties: bool | PropertyConfig = True
    counterexample_db: str | Path | None = None
    extra_calls: Callable[[Task], Sequence[tuple[Any, ...]]] | None = None
    feedback: Literal["hidden", "visible"] = "hidden"
