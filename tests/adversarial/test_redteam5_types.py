"""Red team 5, classes 5 and 6: type scores that reward less typing, and TypeScript perf at load time.

Python: the types score was pyright's error count, so dropping the prompt's annotations (or writing
`Any`) hid the errors the annotations would have exposed and *raised* the score; an `exec` of source
built at run time (nothing of it type-checked) cost one error, no more. Now the candidate is scored
against the prompt's declared signature: each declared parameter or return annotation it drops, or
weakens to `Any`/`object`/a bare generic, costs an error, and `exec`/`eval`/`compile` of a non-literal
source loses the types score.

TypeScript: only the `any` keyword was counted, so `any` obtained without it (`typeof` an untyped
value, `JSON.parse`) and `x as unknown as T` went free. Now the checker's types count: declarations
whose type is `any` without the keyword, and assertions out of `unknown`/`any`.

TypeScript perf: work done while the module loads (a table built at load time) was counted in no
call (Python charges it); now the load's count beyond the reference's is charged to the last call.
"""

from __future__ import annotations

import pytest

from rlvr.graders.base import Grader

STRLEN = "def strlen(string: str) -> int:\n"
WRONG_TYPE_BODY = "    return str(len(string))\n"  # returns a str where the prompt declares int


def _types(grader: Grader, task_id: str, program: str) -> float:
    verdict = grader.grade(task_id, program)
    assert verdict.error is None, verdict.error
    return verdict.components["types"].score


@pytest.mark.parametrize(
    "weakened",
    [
        "def strlen(string):\n",
        "def strlen(string: str):\n",
        "from typing import Any\n\n\ndef strlen(string: Any) -> Any:\n",
        "def strlen(string: object) -> object:\n",
        "strlen = lambda string: str(len(string))  # noqa\n",
    ],
    ids=["no annotations", "no return annotation", "Any", "object", "lambda"],
)
def test_dropping_the_declared_signature_never_raises_the_types_score(
    humaneval_grader: Grader, weakened: str
) -> None:
    honest_with_error = _types(humaneval_grader, "HumanEval/23", STRLEN + WRONG_TYPE_BODY)
    body = "" if weakened.startswith("strlen =") else WRONG_TYPE_BODY
    assert _types(humaneval_grader, "HumanEval/23", weakened + body) <= honest_with_error < 1.0


def test_keeping_the_declared_signature_in_another_spelling_is_free(humaneval_grader: Grader) -> None:
    spelled = "def strlen(string: 'str') -> 'int':\n    return len(string)\n"
    assert _types(humaneval_grader, "HumanEval/23", STRLEN + "    return len(string)\n") == 1.0
    assert _types(humaneval_grader, "HumanEval/23", spelled) == 1.0


def test_exec_of_built_source_loses_the_types_score(humaneval_grader: Grader) -> None:
    hidden = STRLEN + "    return len(string)\n"
    program = f"SOURCE = bytes.fromhex({hidden.encode().hex()!r}).decode()\nexec(SOURCE)\n"
    verdict = humaneval_grader.grade("HumanEval/23", program)
    assert verdict.components["tests"].score == 1.0  # it works
    assert verdict.components["types"].score == 0.0, verdict.components["types"].detail
    literal = 'exec("import math")\n\n\n' + STRLEN + "    return len(string)\n"
    assert humaneval_grader.grade("HumanEval/23", literal).components["types"].score == 0.5


# -- TypeScript
TS_STRLEN = "function strlen(string: string): number {\n  return string.length;\n}\n"


@pytest.mark.parametrize(
    "program",
    [
        'const untyped = JSON.parse("0");\n'
        "function strlen(string: typeof untyped): typeof untyped {\n  return string.length;\n}\n",
        "function strlen(string: string): number {\n  const parsed = JSON.parse(JSON.stringify(string));\n"
        "  return parsed.length;\n}\n",
        "function strlen(string: string): number {\n  return (string as unknown as string[]).length;\n}\n",
        "function strlen(string: string): number {\n  const u: unknown = string;\n  return (u as string).length;\n}\n",
    ],
    ids=["typeof untyped", "JSON.parse", "as unknown as", "assertion out of unknown"],
)
def test_typescript_any_without_the_keyword_and_unchecked_casts_cost_types(
    typescript_grader: Grader, program: str
) -> None:
    assert _types(typescript_grader, "HumanEval-TS/23", TS_STRLEN) == 1.0
    assert _types(typescript_grader, "HumanEval-TS/23", program) < 1.0


TS_GCD = (
    "function greatest_common_divisor(a: number, b: number): number {\n"
    "  while (b) {\n    [a, b] = [b, a % b];\n  }\n  return a;\n}\n"
)
LOAD_TIME_WORK = "const warm: number[] = [];\nfor (let i = 0; i < 200000; i++) {\n  warm.push(i % 7);\n}\n"


def test_typescript_perf_charges_work_done_while_the_module_loads(typescript_grader: Grader) -> None:
    honest, loaded = typescript_grader.grade_many(
        ["HumanEval-TS/13", "HumanEval-TS/13"], [TS_GCD, LOAD_TIME_WORK + TS_GCD]
    )
    assert honest.passed and loaded.passed
    assert honest.components["perf"].score > 0.9
    assert loaded.components["perf"].score < 0.5, loaded.components["perf"].detail
