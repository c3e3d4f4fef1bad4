"""The code grader's options (see `rlvr.graders.options` for how they are resolved)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from rlvr.core.types import Task
from rlvr.graders.code.oracle import OracleCache
from rlvr.graders.code.properties.suite import PropertyConfig, PropertyTests
from rlvr.graders.compose import CODE_GATES, CODE_WEIGHTS, normalized_weights
from rlvr.graders.options import GraderOptions


@dataclass(frozen=True, kw_only=True)
class CodeOptions(GraderOptions):
    """`types` False skips the type layer and gives it no weight; `properties` False grades on the
    task's own calls only (no generated hidden tests), a PropertyConfig tunes generation;
    `counterexample_db` is a directory where inputs that caught a program are recorded and replayed
    first by later graders; `extra_calls(task)` adds hidden argument tuples; `feedback` "visible"
    puts a counterexample in the feedback (kata's visible-feedback mode).

    `verifier` "visible" is a DELIBERATELY WEAK mode for demos and reward-hacking research: the
    tests layer checks only the examples the prompt shows (doctest `>>> f(x)` lines and prose
    `f(x) == y`), so a program that hard-codes them earns full test credit. The hidden tests still run
    and decide `Verdict.passed` (so the hacking gap, visible pass rate minus hidden pass rate, stays
    measurable) but they do not enter the reward, and neither does perf (it is measured on hidden
    inputs). Every verdict carries the caveat flag `verifier:visible`. Function tasks only; never
    use it to train a model you mean to keep."""

    types: bool = True
    properties: bool | PropertyConfig = True
    counterexample_db: str | Path | None = None
    extra_calls: Callable[[Task], Sequence[tuple[Any, ...]]] | None = None
    feedback: Literal["hidden", "visible"] = "hidden"
    verifier: Literal["hidden", "visible"] = "hidden"

    def layer_weights(self, *, perf: bool = True) -> dict[str, float]:
        """The four layers' weights: the family's defaults under the pack's and the caller's; the type
        layer weighs nothing when `types` is off, perf nothing when `perf` is False."""
        defaults = {**CODE_WEIGHTS, **({} if self.types else {"types": 0.0})}
        return normalized_weights(
            {**(self.weights or {}), **({} if perf else {"perf": 0.0})}, defaults, CODE_GATES
        )

    def oracle_cache(self) -> OracleCache:
        """The task oracles, with the hidden tests `properties` asks for (inputs that caught a program
        recorded in and replayed from `counterexample_db`, shared across languages: inputs are inputs)."""
        generate: PropertyTests | None = None
        if self.properties is not False:
            config = self.properties if isinstance(self.properties, PropertyConfig) else PropertyConfig()
            if self.counterexample_db is not None:
                config = replace(config, counterexample_db=Path(self.counterexample_db))
            generate = PropertyTests(config)
        return OracleCache(extra_calls=self.extra_calls, generate=generate)
