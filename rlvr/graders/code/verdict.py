"""One verdict composer for the code family, whatever the candidate's language.

The Python and TypeScript graders each run their own layers (a parser, a type checker, a sandbox run
judged by the task's oracle, counted operations) and hand this module what they found, as a
`Findings`; the gates, the weights, the denial feedback and the one fault rule are decided here:

- a syntax failure is a scored 0 with the `syntax` gate (the candidate's own doing, no error);
- a task that cannot be graded (no oracle: the pack's fault) is a `task` fault; a candidate that was
  never run for another reason is the machinery's (`grader`);
- a sandbox failure is a `sandbox` fault, whatever the tests said;
- a failure of the type checker itself is an error (the machinery), one the candidate's source caused
  (`types.flag`) a scored 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from rlvr.core.flags import DENIED_OPS, denial_feedback, denied_flag
from rlvr.core.types import Component, Verdict
from rlvr.graders.code.typecheck.report import TypeReport
from rlvr.graders.compose import CODE_GATES, gated_reward
from rlvr.sandbox.pool import ExecResult

LAYERS = ("syntax", "types", "tests", "perf")
# How a run that did not pass ended, when its process said so itself (the candidate's doing, scored).
CANDIDATE_FAULTS = {
    "timeout": "the program exceeded its time limit",
    "crash": "the program's process ended before answering every test",
    "output_limit": "the program produced too much output",
    "protocol": "the program tampered with the result channel",
    "load_error": "the program failed while loading",
}


def failed_run(result: ExecResult, failure: str | None) -> tuple[str, list[str]]:
    """(feedback, flags) of a run whose tests did not pass: how it ended, machine-readable too
    (`forged_output` for a tampered result channel; `timeout`, `crash`, `output_limit`, `load_error`)."""
    feedback = CANDIDATE_FAULTS.get(result.status, failure or "hidden tests failed")
    if result.status == "protocol":
        return feedback, ["forged_output"]
    return feedback, [result.status] if result.status in CANDIDATE_FAULTS else []


class Syntax(Protocol):
    """What both languages' syntax reports say (rlvr/graders/code/syntax.py, typescript/syntax.py)."""

    ok: bool
    message: str
    line: int | None
    limit: str | None


@dataclass
class Findings:
    """What one candidate's layers found, before composition."""

    task_id: str
    syntax: Syntax
    syntax_seconds: float
    flags: list[str] = field(default_factory=list)  # extraction and the like, from before the run
    setup_error: str | None = None  # the task cannot be graded (e.g. no oracle): the pack's fault
    result: ExecResult | None = None  # the test run; None: never run
    types: TypeReport | None = None  # None: not checked (disabled, or the candidate never got that far)
    types_seconds: float = 0.0
    source_flags: list[str] = field(default_factory=list)  # what the source itself earned (suppressions)
    perf_absent: Component | None = None  # the perf component of a task that has no perf layer


@dataclass
class Judgement:
    """The language side's reading of a finished (not sandbox-failed) test run, and the perf layer."""

    tests: Component
    feedback: str = ""
    flags: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # failures of the machinery (e.g. perf unmeasured)
    perf: Component | None = None  # None: not scored (the tests failed)
    visible_passed: bool | None = None
    passed: bool | None = None  # overrides "no gate failed" (the weak verifier records the hidden result)


def compose(
    found: Findings,
    judge: Judgement | None,
    weights: dict[str, float],
    types_enabled: bool,
) -> Verdict:
    """The verdict. `judge` is None when the candidate was not run (syntax, setup) or the sandbox failed."""
    timings = {"syntax": found.syntax_seconds}
    components = {name: Component(0.0, 1.0) for name in LAYERS}
    syntax = found.syntax
    if not syntax.ok:
        where = f" (line {syntax.line})" if syntax.line else ""
        components["syntax"] = Component(0.0, 1.0, syntax.message)
        return Verdict(
            found.task_id,
            components=components,
            gates=["syntax"],
            feedback=f"syntax error{where}: {syntax.message}",
            timings=timings,
            flags=found.flags + ([syntax.limit] if syntax.limit else []),
        )
    components["syntax"] = Component(1.0, 1.0)
    result = found.result
    if found.setup_error or result is None:
        return Verdict(
            found.task_id,
            components=components,
            gates=["tests"],
            timings=timings,
            error=found.setup_error or "not executed",
            fault="task" if found.setup_error else "grader",
        )

    flags = found.flags + list(result.flags)
    denied = [op for op in result.denied if op in DENIED_OPS]
    flags += [denied_flag(op) for op in denied]  # flags only: a refusal never earns credit
    errors: list[str] = []
    types = found.types
    if types is not None:
        components["types"] = Component(types.score, 1.0, "; ".join(types.messages[:3]))
        timings["types"] = found.types_seconds
        if types.error:  # the checker's own failure; the candidate's (types.flag) is a scored 0
            errors.append(f"types layer failed: {types.error}")
        if types.flag:
            flags.append(types.flag)
    elif not types_enabled:
        components["types"] = Component(0.0, 0.0, "disabled")
    flags += found.source_flags
    if found.perf_absent is not None:
        components["perf"] = found.perf_absent
    timings["tests"] = result.wall

    feedback = ""
    if result.sandbox_error or judge is None:
        errors.append(f"sandbox failure: {result.detail or result.status}")
    else:
        components["tests"] = judge.tests
        if judge.perf is not None:
            components["perf"] = judge.perf
        flags += judge.flags
        errors += judge.errors
        feedback = judge.feedback
    if denied:  # say plainly what was refused (operation names only, nothing hidden)
        feedback = "; ".join(part for part in (denial_feedback(denied), feedback) if part)

    scores = {name: c.fraction for name, c in components.items()}
    reward, failed = gated_reward(scores, weights, CODE_GATES)
    passed = not failed and not result.sandbox_error
    if judge is not None and judge.passed is not None:
        passed = judge.passed
    return Verdict(
        task_id=found.task_id,
        reward=reward,
        passed=passed,
        components=components,
        gates=failed,
        feedback=feedback,
        timings=timings,
        error="; ".join(errors) or None,
        flags=flags,
        fault="sandbox" if result.sandbox_error else None,
        visible_passed=judge.visible_passed if judge is not None else None,
    )
