"""Red-team attacks on TypeScript grading (each one a candidate an attacker who has the code would
write). Every test here failed before the fix it guards, or pins a route that is already closed."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator

import pytest

from rlvr.graders.base import Grader, make_grader
from rlvr.sandbox.pool import Job
from tests.conftest import NO_NODE

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason=NO_NODE)

TASK = "HumanEval-TS/3"  # below_zero(operations: number[]): boolean
HEAD = "function below_zero(operations: number[]): boolean {\n"
CORRECT = (
    HEAD + "  let b = 0;\n  for (const o of operations) {\n    b += o;\n    if (b < 0) return true;\n  }\n"
    "  return false;\n}\n"
)


@pytest.fixture(scope="module")
def grader(typescript_pack) -> Iterator[Grader]:
    grader = make_grader(typescript_pack, jobs=2, timeout=3.0)
    yield grader
    grader.close()


def _ops(verdict) -> int:
    return int(re.findall(r"(\d+) ops", verdict.components["perf"].detail)[0])


# ---------------------------------------------------------------- the shared compiler process
def test_a_checker_stack_overflow_is_the_candidates_failure_not_the_batchs(grader):
    """A call chain the checker infers recursively (flat syntax, so the syntax layer's depth limit does
    not see it) overflowed the compiler's stack; the process answered with an error, which was raised
    as a grading error for the whole batch. Now: that candidate alone is flagged `crash:types`."""
    chain = "".join(f"function f{i}() {{ return f{i + 1}(); }}\n" for i in range(5000))
    deep = chain + "function f5000() { return 1; }\n" + CORRECT
    honest_typed_wrong = CORRECT.replace("let b = 0;", 'let b = 0;\n  const s: number = "x";')
    verdicts = grader.grade_many([TASK] * 3, [CORRECT, deep, honest_typed_wrong])
    for verdict in verdicts:
        assert verdict.error is None and verdict.fault is None, verdict.error
    good, bad, typed_wrong = verdicts
    assert good.passed and good.components["types"].fraction == 1.0
    assert "crash:types" in bad.flags and bad.components["types"].fraction == 0.0
    assert typed_wrong.components["types"].fraction < 1.0 and typed_wrong.passed
