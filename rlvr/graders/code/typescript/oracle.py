"""The trusted oracle of a TypeScript task is the Python task's own (`rlvr.graders.code.oracle`):
the same hidden calls, the same generated property inputs, the same reference outputs and replayed
`check`, all in this process. Only what crosses the language boundary changes, and it is plain data:

  * a call goes to the sandbox only if its arguments are representable in JavaScript through JSON
    (null, booleans, strings, finite numbers, integers within +-(2**53 - 1), lists, tuples as arrays,
    dicts with string keys as plain objects) and so is the reference's output; a task whose own
    (`check`) calls are not is not gradable in TypeScript (OracleError), generated calls that are not
    are dropped;
  * JavaScript has one number type, so int and float cannot be told apart in a result: each result
    is read in the shape of the reference's output for the same call (a number where the reference
    has an int becomes an int when integral, a float where it has a float; an array becomes a tuple
    where the reference has a tuple of that length). Booleans stay distinct from numbers, null from
    everything, `undefined` is not plain data (a `return undefined` fails);
  * JavaScript has one number type and no tuples, so `3.0` and `3`, `(1, 2)` and `[1, 2]` arrive alike:
    a call whose reference answers the JavaScript view of its arguments differently is not
    passable in TypeScript (an own call: OracleError; a generated call: dropped);
  * JavaScript has no exception types to match Python's, so a call on which the reference raises is
    passed by any *thrown* exception; a result that is not plain data never counts as a throw.
The comparison itself, tolerances and result-type rules included, is the Python oracle's.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

from rlvr.core.types import Task
from rlvr.graders.code.oracle import CodeOracle, Expected, OracleError, TestOutcome
from rlvr.sandbox.pool import CallOutcome
from rlvr.specs.javascript_values import MAX_SAFE_INTEGER, same_in_javascript

MAX_DEPTH = 64
THROWN = "Error"  # what the node runner reports for any thrown value


def representable(value: Any, depth: int = 0) -> bool:
    """Whether `value` survives JSON into JavaScript and back unchanged (up to int/float)."""
    if depth > MAX_DEPTH:
        return False
    if value is None or isinstance(value, bool | str):
        return True
    if isinstance(value, int):
        return abs(value) <= MAX_SAFE_INTEGER
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list | tuple):
        return all(representable(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and representable(v, depth + 1) for k, v in value.items())
    return False


def call_representable(args: tuple[Any, ...], expected: Expected) -> bool:
    return representable(list(args)) and (expected.raises is not None or representable(expected.value))


def answers_alike(reference: Callable[..., Any], args: tuple[Any, ...], expected: Expected) -> bool:
    """`same_in_javascript` for one of the task's calls."""
    return same_in_javascript(reference, args, expected.value, expected.raises is not None)


def shaped(expected: Any, actual: Any, depth: int = 0) -> Any:
    """`actual` (decoded JSON) read in the shape of `expected` (see the module docstring)."""
    if depth > MAX_DEPTH or expected is None or isinstance(expected, bool | str):
        return actual
    if isinstance(expected, int):
        if type(actual) is float and actual.is_integer() and abs(actual) <= MAX_SAFE_INTEGER:
            return int(actual)
        return actual
    if isinstance(expected, float):
        if type(actual) is int and abs(actual) <= sys.float_info.max:  # a larger int has no float: left as is
            return float(actual)
        return actual
    if type(actual) is list and isinstance(expected, tuple | list):
        if isinstance(expected, tuple) and len(expected) != len(actual):
            return actual
        items = [
            shaped(expected[i] if i < len(expected) else (expected[-1] if expected else None), a, depth + 1)
            for i, a in enumerate(actual)
        ]
        return tuple(items) if isinstance(expected, tuple) else items
    if isinstance(expected, dict) and type(actual) is dict:
        return {k: shaped(expected[k], v, depth + 1) if k in expected else v for k, v in actual.items()}
    return actual


def read_outcome(expected: Expected, outcome: CallOutcome | None) -> CallOutcome | None:
    if outcome is None:
        return None
    if not outcome.ok:
        if expected.raises is not None and outcome.exception == THROWN:
            return CallOutcome(ok=False, exception=expected.raises)
        return outcome
    if expected.raises is not None:
        return outcome
    return CallOutcome(ok=True, value=shaped(expected.value, outcome.value))


class TsOracle:
    """A Python task's oracle seen from TypeScript: the calls to send and the judging of results."""

    def __init__(self, python: CodeOracle) -> None:
        self.python = python
        own = python.generated_start if python.generated_start is not None else len(python.calls)
        for args, expected in zip(python.calls[:own], python.expected[:own], strict=True):
            if not call_representable(args, expected):
                raise OracleError(
                    f"{python.task_id}: a hidden call is not representable in JavaScript "
                    f"(arguments or reference output: {repr(args)[:80]})"
                )
            if not answers_alike(python.reference, args, expected):
                raise OracleError(
                    f"{python.task_id}: the reference tells apart arguments JavaScript receives alike "
                    f"(int vs integral float, or tuple vs list: {repr(args)[:80]})"
                )
        python.keep_generated(
            lambda args, expected: (
                call_representable(args, expected) and answers_alike(python.reference, args, expected)
            )
        )

    @property
    def calls(self) -> list[tuple[Any, ...]]:
        return self.python.calls

    @property
    def perf_calls(self) -> list[tuple[Any, ...]]:
        return self.python.perf_calls

    def _read(
        self, expected: Sequence[Expected], outcomes: Sequence[CallOutcome | None]
    ) -> list[CallOutcome | None]:
        return [
            read_outcome(expected[i], outcome) if i < len(expected) else outcome
            for i, outcome in enumerate(outcomes)
        ]

    def judge(self, outcomes: Sequence[CallOutcome | None], *, visible: bool = False) -> TestOutcome:
        return self.python.judge(self._read(self.python.expected, outcomes), visible=visible)

    def visible_agreement(self, outcomes: Sequence[CallOutcome | None]) -> bool | None:
        return self.python.visible_agreement(self._read(self.python.expected, outcomes))

    def perf_agrees(self, outcomes: Sequence[CallOutcome | None]) -> bool:
        return self.python.perf_agrees(self._read(self.python.perf_expected, outcomes))


def python_task(task: Task) -> Task:
    """The Python task a TypeScript task is graded against: its hidden `source` (humaneval-ts), so the
    oracle and the generated inputs are exactly the Python pack's (and its shipped property cache
    applies); else the task's own hidden reference and tests (directory packs)."""
    source = task.hidden.get("source")
    if source is None:  # a directory pack's line: the Python reference and tests are the task's own
        return Task(
            id=task.id,
            prompt="",
            family="code",
            difficulty=task.difficulty,
            split=task.split,
            hidden=dict(task.hidden),
        )
    if not isinstance(source, dict) or "hidden" not in source:
        raise OracleError(f"{task.id}: hidden['source'] must be the Python task (id, prompt, hidden)")
    return Task(
        id=str(source["id"]),
        prompt=str(source["prompt"]),
        family="code",
        difficulty=task.difficulty,
        split=task.split,
        hidden=dict(source["hidden"]),
    )
