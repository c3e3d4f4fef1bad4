"""The hidden spec of a program task (stdin/stdout or call-based with expected outputs), shared by
the directory-pack loader (which validates it with file/line errors) and the code grader.

hidden = {
    "program": {
        "tests": [{"input": "1 2\\n", "output": "3\\n"}, ...],   # or {"args": [...], "output": value}
        "call": "fn_name",           # call-based: call this function with each test's args
        "compare": "tokens",         # exact | lines | tokens | {"float": 1e-6} | "judge"
        "judge": "def judge(input, expected, output): ...",  # trusted checker (compare="judge")
        "time_limit": 2.0,           # seconds per test (wall-clock ceiling)
        "memory_mb": 512,
        "partial_credit": false,     # the tests score is the fraction passed (the gate stays all)
        "reference": "...",          # optional: a reference program, for perf
        "generator": "def generate(rng): ...",  # optional, with a reference: random stdin text from a
        "generated_tests": 20,       #   random.Random; the reference's outputs become extra tests
    }
}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DEFAULT_TIME_LIMIT = 2.0
DEFAULT_MEMORY_MB = 512
MAX_TIME_LIMIT = 30.0
COMPARE_MODES = ("exact", "lines", "tokens", "float", "judge")


class ProgramSpecError(ValueError):
    """A program task whose hidden spec cannot be graded (the pack's fault)."""


@dataclass(frozen=True)
class ProgramTest:
    input: Any  # stdin text, or the argument list of a call-based test
    output: Any  # expected stdout text, or the expected return value


@dataclass(frozen=True)
class ProgramSpec:
    tests: tuple[ProgramTest, ...]
    call: str | None = None
    compare: str = "tokens"
    tolerance: float = 0.0
    judge: str | None = None
    time_limit: float = DEFAULT_TIME_LIMIT
    memory_mb: int = DEFAULT_MEMORY_MB
    partial_credit: bool = False
    reference: str | None = None
    generator: str | None = None
    generated_tests: int = 0


def is_program_task(hidden: dict[str, Any]) -> bool:
    return isinstance(hidden.get("program"), dict)


def parse_spec(hidden: dict[str, Any]) -> ProgramSpec:
    raw = hidden.get("program")
    if not isinstance(raw, dict):
        raise ProgramSpecError("hidden spec has no `program` table")
    unknown = set(raw) - {
        "tests",
        "call",
        "compare",
        "judge",
        "time_limit",
        "memory_mb",
        "partial_credit",
        "reference",
        "generator",
        "generated_tests",
    }
    if unknown:
        raise ProgramSpecError(f"unknown program field(s): {', '.join(sorted(unknown))}")
    call = raw.get("call")
    if call is not None and (not isinstance(call, str) or not call.isidentifier()):
        raise ProgramSpecError(f"`call` must be a function name, got {call!r}")
    tests = raw.get("tests")
    if not isinstance(tests, list) or not tests:
        raise ProgramSpecError("`tests` must be a non-empty list")
    parsed: list[ProgramTest] = []
    for number, test in enumerate(tests):
        if not isinstance(test, dict) or "output" not in test:
            raise ProgramSpecError(f"test {number}: needs `output` and `input` (or `args`)")
        if call is None:
            if not isinstance(test.get("input"), str) or not isinstance(test["output"], str):
                raise ProgramSpecError(f"test {number}: `input` and `output` must be text")
            parsed.append(ProgramTest(test["input"], test["output"]))
        else:
            args = test.get("args", test.get("input"))
            if not isinstance(args, list):
                raise ProgramSpecError(f"test {number}: a call-based test needs `args` as a list")
            parsed.append(ProgramTest(args, test["output"]))
    compare, tolerance = _compare(raw.get("compare", "tokens"))
    judge = raw.get("judge")
    if compare == "judge":
        if not isinstance(judge, str):
            raise ProgramSpecError('compare = "judge" needs `judge`: Python source defining judge(...)')
    time_limit = raw.get("time_limit", DEFAULT_TIME_LIMIT)
    memory_mb = raw.get("memory_mb", DEFAULT_MEMORY_MB)
    if not isinstance(time_limit, int | float) or not 0 < time_limit <= MAX_TIME_LIMIT:
        raise ProgramSpecError(f"`time_limit` must be seconds in (0, {MAX_TIME_LIMIT:g}]")
    if not isinstance(memory_mb, int) or not 16 <= memory_mb <= 8192:
        raise ProgramSpecError("`memory_mb` must be an integer in [16, 8192]")
    reference = raw.get("reference")
    if reference is not None and not isinstance(reference, str):
        raise ProgramSpecError("`reference` must be program source")
    generator = raw.get("generator")
    generated = raw.get("generated_tests", 20 if generator else 0)
    if generator is not None:
        if not isinstance(generator, str) or reference is None or call is not None:
            raise ProgramSpecError(
                "`generator` (source defining generate(rng)) needs a stdin task with a `reference`"
            )
        if not isinstance(generated, int) or not 1 <= generated <= 1000:
            raise ProgramSpecError("`generated_tests` must be an integer in [1, 1000]")
    return ProgramSpec(
        tests=tuple(parsed),
        call=call,
        compare=compare,
        tolerance=tolerance,
        judge=judge if compare == "judge" else None,
        time_limit=float(time_limit),
        memory_mb=memory_mb,
        partial_credit=bool(raw.get("partial_credit", False)),
        reference=reference,
        generator=generator,
        generated_tests=generated if generator else 0,
    )


def _compare(value: Any) -> tuple[str, float]:
    if isinstance(value, dict) and set(value) == {"float"}:
        tolerance = value["float"]
        if not isinstance(tolerance, int | float) or not 0 <= tolerance < 1:
            raise ProgramSpecError("`compare.float` must be a tolerance in [0, 1)")
        return "float", float(tolerance)
    if value in ("exact", "lines", "tokens", "judge"):
        return str(value), 0.0
    raise ProgramSpecError(
        f'`compare` must be one of exact, lines, tokens, judge or {{"float": tol}}; got {value!r}'
    )
