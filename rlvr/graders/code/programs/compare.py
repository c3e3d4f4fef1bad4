"""Trusted comparison of a program's output with the expected output (never in the sandbox).

Modes: `exact` (byte-for-byte text), `lines` (trailing spaces and trailing blank lines ignored),
`tokens` (whitespace-separated tokens; the usual judge default), `float` (tokens, numbers within a
tolerance, absolute or relative), `judge` (a checker the pack supplies, run here). Call-based
outputs compare as JSON-like data (tuples as lists; APPS wraps a single expected value in a list)
under the code family's agreement (`agreement.agrees`), with the judge's tolerance as its number
rule. Every comparison is total: any output or value gives True or False.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from rlvr.graders.code.agreement import ANY, NumberRule, agrees, numbers_agree
from rlvr.specs.programs import ProgramSpec, ProgramSpecError

JudgeFn = Callable[[str, str, str], bool]
MAX_DATA_DEPTH = 100


class JudgeRaised(Exception):
    """The pack's judge raised on this output; the test fails and the verdict is flagged."""


def load_judge(source: str) -> JudgeFn:
    """The pack's `judge(input, expected, output) -> bool` (pack code: trusted, runs here)."""
    namespace: dict[str, Any] = {"__name__": "rlvr_judge"}
    try:
        exec(compile(source, "<judge>", "exec"), namespace)
    except Exception as exc:
        raise ProgramSpecError(f"judge does not load: {type(exc).__name__}: {exc}") from exc
    judge = namespace.get("judge")
    if not callable(judge):
        raise ProgramSpecError("judge source must define judge(input, expected, output) -> bool")

    def checked(stdin: str, expected: str, output: str) -> bool:
        return judge(stdin, expected, output) is True

    return checked


def _tokens_agree(expected: str, got: str, rule: NumberRule) -> bool:
    if expected == got:
        return True
    try:
        a, b = float(expected), float(got)
    except ValueError:
        return False
    if not (math.isfinite(a) and math.isfinite(b)):
        return False  # a judge reads "nan" and "inf" as text: only the same text agrees
    return numbers_agree(a, b, rule)


def text_matches(spec: ProgramSpec, stdin: str, expected: str, output: str, judge: JudgeFn | None) -> bool:
    if spec.compare == "exact":
        return output == expected
    if spec.compare == "lines":
        strip = lambda text: [line.rstrip() for line in text.rstrip().splitlines()]  # noqa: E731
        return strip(output) == strip(expected)
    if spec.compare == "tokens":
        return output.split() == expected.split()
    if spec.compare == "float":
        want, got = expected.split(), output.split()
        rule = NumberRule.judge(spec.tolerance)
        return len(want) == len(got) and all(
            _tokens_agree(a, b, rule) for a, b in zip(want, got, strict=True)
        )
    assert judge is not None
    try:
        return judge(stdin, expected, output)
    except Exception as exc:
        raise JudgeRaised(f"{type(exc).__name__}") from exc


def _as_data(value: Any, depth: int = 0) -> Any:
    if depth > MAX_DATA_DEPTH:
        raise ValueError("value nested too deeply")
    if isinstance(value, tuple | list):
        return [_as_data(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): _as_data(v, depth + 1) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((_as_data(v, depth + 1) for v in value), key=repr)
    return value


def value_matches(spec: ProgramSpec, expected: Any, got: Any) -> bool:
    try:
        want, have = _as_data(expected), _as_data(got)
    except ValueError:
        return False
    rule = NumberRule.judge(spec.tolerance)
    if agrees(ANY, want, have, rule):
        return True
    # APPS stores a call-based answer wrapped in a one-element list
    return isinstance(want, list) and len(want) == 1 and agrees(ANY, want[0], have, rule)
